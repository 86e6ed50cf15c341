"""When each node could start one more job: its node-local FIFO queue played with walltimes.

For each node a sorted row of core availability times: cores held by a job
are busy until its window ends (start + walltime), then every queued job, in
FIFO order, takes the cores(J) earliest cores from max(previous start, their
time). A new job appended to node k could start at

    t_k = max(now, start of the last queued job, cores(J)-th earliest core time)

and ready_k, the end of k's last reservation, gives its load (seed-schedulers
§1: load_k = max(0, ready_k - now)). Rows are rebuilt from the actual state
when something real happens on the node; appending a job updates them in place.
"""

import numpy as np


class Projection:
    def __init__(self, core_counts):
        counts = np.asarray(core_counts, dtype=int)
        self.cores = counts
        self.avail = np.full((len(counts), int(counts.max())), np.inf)
        for k, c in enumerate(counts):
            self.avail[k, :c] = 0.0
        self.last_start = np.full(len(counts), -np.inf)
        self.head_start = np.full(len(counts), np.inf)   # projected start of each queue's head

    def t_k(self, cores, now):
        """Earliest start on every node for a job of `cores` cores (inf where it does not fit)."""
        if cores > self.avail.shape[1]:
            return np.full(len(self.cores), np.inf)
        return np.maximum(np.maximum(self.avail[:, cores - 1], self.last_start), now)

    def ready(self, now):
        finite = np.where(np.isfinite(self.avail), self.avail, -np.inf)
        return np.maximum(finite.max(axis=1), now)

    def append(self, node, cores, start, walltime):
        row = self.avail[node]
        row[:cores] = start + walltime
        row.sort()
        self.last_start[node] = start
        if not np.isfinite(self.head_start[node]):
            self.head_start[node] = start

    def rebuild(self, node, busy_until, queue, now):
        """busy_until: per core of the node, when its holder's window ends (now if free);
        queue: (cores, walltime) of the node's queued jobs in FIFO order."""
        row = self.avail[node]
        c = self.cores[node]
        row[:c] = np.sort(np.maximum(np.asarray(busy_until, dtype=float), now))
        self.last_start[node] = -np.inf
        self.head_start[node] = np.inf
        for cores, walltime in queue:
            start = max(now, self.last_start[node], row[cores - 1])
            self.append(node, cores, start, walltime)

    def stale(self, now):
        """Nodes whose queue head was projected to start before now: rows to rebuild."""
        return np.flatnonzero(self.head_start < now)
