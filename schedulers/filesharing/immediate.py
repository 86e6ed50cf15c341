"""Immediate mode (Khanna et al. §5): map each job once, at its arrival, to a node-local FIFO queue.

A policy only says which node a job goes to (``choose``); the job joins that
node's queue, whose head starts as soon as its cores are free and its files
fit next to the files in use in the node's memory (``FileSharingState.lacks_room``;
no backfilling: a head that does not fit blocks the jobs behind it). A head
waiting for room is tried again at the node's next end or load's end. Estimates
use the queues played with walltimes (``projection``): cores only, so a head
waiting for room is projected to start now, until it does.
"""

from collections import deque

import numpy as np

from batloc.schedulers.filesharing.base import FileSharingScheduler
from batloc.schedulers.filesharing.projection import Projection


def argmin_ties(*keys):
    """Index of the smallest first key; ties broken by the next keys, then the lowest index."""
    return int(np.lexsort(tuple(reversed(keys)))[0])


class ImmediateScheduler(FileSharingScheduler):
    def choose(self, job, now):
        """(node index, score) for `job`; nodes too small for it have t_k = inf."""
        raise NotImplementedError

    def mapped(self, job, node, now):
        """Called after `job` joined `node`'s queue (DLL counts mappings here)."""

    # ---- state ------------------------------------------------------------
    def setup(self):
        super().setup()
        self.queues = [deque() for _ in self.platform.nodes]
        self.projection = Projection([len(n.core_ids) for n in self.platform.nodes])
        self.to_start = set()      # nodes whose queue head may start
        self.to_rebuild = set()    # nodes whose projection no longer matches the actual state
        self.room_waits = set()    # nodes whose head waits for room in memory
        self.waiting = 0

    def node_changed(self, node):
        self.to_start.add(node)
        self.to_rebuild.add(node)

    def load_ended(self, node):
        if node in self.room_waits:
            self.to_start.add(node)

    def unstarted(self):
        return self.waiting

    # ---- what policies read ---------------------------------------------------
    def t_k(self, job, now):
        """When each node could start `job`, after its queue (walltime-based)."""
        self._refresh(now)
        return self.projection.t_k(job.cores, now)

    def loads(self, now):
        """load_k = max(0, ready_k - now), ready_k = end of k's last reservation."""
        self._refresh(now)
        return self.projection.ready(now) - now

    def file_states(self, job):
        """Per node: 0 absent, 1 loading, 2 loaded; and the load ends (nan where not loading)."""
        n = len(self.platform.nodes)
        state, load_end = np.zeros(n, dtype=int), np.full(n, np.nan)
        if job.file is None:
            return state, load_end
        for k in self.state.census.nodes(job.file):
            status, end = self.file_state(job.file, k)
            if status == "loaded":
                state[k] = 2
            elif status == "loading":
                state[k], load_end[k] = 1, end
        return state, load_end

    # ---- events ---------------------------------------------------------------
    def submitted(self, job, now):
        node, score = self.choose(job, now)
        start = self.projection.t_k(job.cores, now)[node]
        self.projection.append(node, job.cores, start, job.walltime)
        self.queues[node].append((job, score))
        self.waiting += 1
        self.to_start.add(node)
        self.mapped(job, node, now)

    def schedule(self, now):
        nodes, self.to_start = sorted(self.to_start), set()
        for node in nodes:
            queue = self.queues[node]
            self.room_waits.discard(node)
            while queue and queue[0][0].cores <= self.free_cores(node):
                if self.state.lacks_room(queue[0][0], node, now):
                    self.room_waits.add(node)
                    break
                job, score = queue.popleft()
                self.waiting -= 1
                self.start(job, node, now, score)
        self.to_start.clear()

    def _refresh(self, now):
        nodes = self.to_rebuild | set(self.projection.stale(now).tolist())
        self.to_rebuild = set()
        for node in sorted(nodes):
            busy = np.full(len(self.state.free[node]), now)
            for held in self.state.on_node[node].values():
                busy[held.positions] = held.deadline
            self.projection.rebuild(node, busy, [(j.cores, j.walltime) for j, _ in self.queues[node]], now)
