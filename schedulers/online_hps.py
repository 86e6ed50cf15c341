"""Online-HPS, online hypergraph-partitioning scheduling (Khanna et al. §4.2-4.3).

At every job arrival and job completion, the pending jobs are mapped anew and
the nodes that have free cores start some of theirs:

    1-3. build the hypergraph of the system state: pending jobs, one anchor
         pinned to each node, one net per file (cost = its size) joining the
         jobs that need it and the anchors of the nodes holding it; weights of
         Eq. 5-6 (``filesharing.hypergraph``);
    4.   partition it P ways, minimising Σ_f size(f) (λ_f - 1) with every part's
         weight <= (1 + ε) x W x cores(k) / Σ cores, anchors fixed
         (``filesharing.partition``: greedy by default, ε = 0.10);
    5.   order, in rounds: each node with free cores nominates its fitting job
         (its cores free, its absent files fitting next to the files in use in
         the node's memory, or never could) of least ECT = (file in memory ?
         now : loading ? the load's end : TCT_k(f)) + walltime (ties:
         submission order); nominees start by increasing ECT, reserving their transfers in the Gantt chart (an ECT
         that a reservation made later is re-evaluated); repeat until no node
         can start a job.
"""

import heapq

import numpy as np

from batloc.schedulers.filesharing import hypergraph
from batloc.schedulers.filesharing.base import FileSharingScheduler
from batloc.schedulers.filesharing.partition import make_partitioner


class Online_hps(FileSharingScheduler):
    policy_name = "Online-HPS"
    accepted_options = ("epsilon", "partitioner")

    def setup(self):
        super().setup()
        self.pending = []
        self.partitioner = make_partitioner(self.opts.partitioner)
        self.node_cores = np.array([len(n.core_ids) for n in self.platform.nodes], dtype=np.int64)

    def submitted(self, job, now):
        self.pending.append(job)

    def unstarted(self):
        return len(self.pending)

    def schedule(self, now):
        if not self.pending:
            return
        # 1-3. The hypergraph of the system state.
        state = self.state
        hg = hypergraph.build(self.pending, state.on_node, state.census.nodes, self.platform.bandwidth, now)
        # 4. Partition: a part per node, its weight bounded by its share of the cores.
        caps = (1 + self.opts.epsilon) * hg.total_weight * self.node_cores / self.node_cores.sum()
        part = self.partitioner.partition(hg, caps, self.node_cores)
        # 5. Order and start.
        groups = [[] for _ in self.platform.nodes]
        for i, k in enumerate(part.tolist()):
            groups[k].append(self.pending[i])
        started = self.order_and_start(groups, now)
        if started:
            self.pending = [j for j in self.pending if j.id not in started]

    def ect(self, job, node, now):
        if job.file is None:
            return now + job.walltime
        status, load_end = self.file_state(job.file, node)
        if status == "loaded":
            ready = now
        elif status == "loading":
            ready = max(now, load_end)
        else:
            ready = self.state.chart.tct(node, job.size, now)
        return ready + job.walltime

    def nominee(self, group, node, now):
        """(ECT, submission order, job) of the node's fitting job of least ECT, or None. A job fits when
        its cores are free and its files fit next to the files in use in the node's memory (or never
        could: ``FileSharingState.lacks_room``)."""
        free = self.free_cores(node)
        fitting = [(self.ect(job, node, now), job.seq, job) for job in group if job.cores <= free]
        if not fitting:
            return None
        best = min(fitting, key=lambda c: c[:2])
        if not self.state.lacks_room(best[2], node, now):
            return best
        return next((c for c in sorted(fitting, key=lambda c: c[:2])
                     if not self.state.lacks_room(c[2], node, now)), None)

    def order_and_start(self, groups, now):
        started = set()
        while True:
            heap = []
            for node, group in enumerate(groups):
                if group and self.state.n_free[node]:
                    best = self.nominee(group, node, now)
                    if best is not None:
                        heap.append((best[0], best[1], node))
            if not heap:
                return started
            heapq.heapify(heap)
            while heap:
                _, _, node = heapq.heappop(heap)
                best = self.nominee(groups[node], node, now)   # reservations since may delay it
                if best is None:
                    continue
                if heap and best[:2] > heap[0][:2]:
                    heapq.heappush(heap, (best[0], best[1], node))
                    continue
                ect, _, job = best
                groups[node].remove(job)
                started.add(job.id)
                self.start(job, node, now, ect)
