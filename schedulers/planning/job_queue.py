"""The queue: submitted, not yet started jobs in submission order, kept both
as objects (for the scheduler) and as the parallel arrays the pass reads
(cores, walltime, file id, file size), so that no pass rebuilds them."""

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass
class QueuedJob:
    id: str
    cores: int
    walltime: float        # +inf when the job has none
    file: Optional[str]
    size: float
    subtime: float = 0.0


class JobQueue:
    def __init__(self):
        self.jobs = []
        self.removals = 0       # how many times jobs left the queue (appends only, in between)
        self._cap = 0
        self._grow(256)

    def _grow(self, cap):
        n = len(self.jobs)
        new = (np.zeros(cap, dtype=np.int64), np.zeros(cap), np.full(cap, -1, dtype=np.int64), np.zeros(cap))
        if self._cap:
            for a, b in zip(new, (self.cores, self.wall, self.fids, self.sizes)):
                a[:n] = b[:n]
        self.cores, self.wall, self.fids, self.sizes = new
        self._cap = cap

    def __len__(self):
        return len(self.jobs)

    def __iter__(self):
        return iter(self.jobs)

    def append(self, job, fid):
        n = len(self.jobs)
        if n == self._cap:
            self._grow(2 * self._cap)
        self.cores[n], self.wall[n], self.fids[n], self.sizes[n] = job.cores, job.walltime, fid, job.size
        self.jobs.append(job)

    def arrays(self):
        return self.cores, self.wall, self.fids, self.sizes

    def remove(self, indices):
        """Drop the jobs at these queue positions (the rest keep their order)."""
        if not indices:
            return
        self.removals += 1
        n = len(self.jobs)
        keep = np.ones(n, dtype=np.bool_)
        keep[list(indices)] = False
        m = int(keep.sum())
        for a in (self.cores, self.wall, self.fids, self.sizes):
            a[:m] = a[:n][keep]
        for i in sorted(indices, reverse=True):
            del self.jobs[i]
