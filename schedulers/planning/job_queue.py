"""The queue: submitted, not yet started jobs in submission order, kept both
as objects (for the scheduler) and as the parallel arrays the pass reads
(cores, walltime, file id, file size), so that no pass rebuilds them.
A job of several files has the file id ``scratch.GROUP - slot`` and the
summed size of its files: the pass reads its files from its slot's file
rows (``Planner`` writes them from ``files``).

Each queued job also holds a *slot* (its row in the standing plan, free again
once it leaves the queue) and its submission sequence number (queue order,
stable while positions shift as jobs leave). Under the authors' clock a
slot stays out of use after its job left (``park``) until the next full
pass: its row still lies in a node's chain of planned windows (a reservation
that started), which a pass placing only new jobs keeps."""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.schedulers.planning.scratch import GROUP


@dataclass(eq=False)      # one object per job: compared by identity (list.index stays in C)
class QueuedJob:
    id: str
    cores: int
    walltime: float        # +inf when the job has none
    file: Optional[str]
    size: float
    subtime: float = 0.0
    # every file it reads when it reads several (``file`` is the largest; the
    # planning pass sees them all: docs/scheduler-semantics.md, "Shared storage"), and its outputs
    files: tuple = ()
    outputs: tuple = ()

    @property
    def reads(self):
        """(file, size) of every file it reads."""
        if self.files:
            return self.files
        return ((self.file, self.size),) if self.file is not None else ()


class JobQueue:
    def __init__(self):
        self.jobs = []
        self.removals = 0       # how many times jobs left the queue
        self._cap = 0
        self._free_slots = []
        self._next_slot = 0
        self._next_seq = 0
        self._fresh = []
        self.park = False
        self._parked = []
        self.several = 0        # queued jobs of several files
        self.several_rows = 0   # and their files
        self._fresh_several = []
        self._grow(256)

    def _grow(self, cap):
        n = len(self.jobs)
        new = (np.zeros(cap, dtype=np.int64), np.zeros(cap), np.full(cap, -1, dtype=np.int64), np.zeros(cap),
               np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64))
        if self._cap:
            for a, b in zip(new, self.arrays()):
                a[:n] = b[:n]
        self.cores, self.wall, self.fids, self.sizes, self.slots, self.seqs = new
        self._cap = cap

    @property
    def slot_count(self):
        """Slots ever handed out: every slot is below it."""
        return self._next_slot

    def __len__(self):
        return len(self.jobs)

    def __iter__(self):
        return iter(self.jobs)

    def append(self, job, fid):
        n = len(self.jobs)
        if n == self._cap:
            self._grow(2 * self._cap)
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            slot = self._next_slot
            self._next_slot += 1
        if job.files:
            fid = int(GROUP) - slot
            size = sum(s for _, s in job.files)
            self.several += 1
            self.several_rows += len(job.files)
            self._fresh_several.append((slot, job))
        else:
            size = job.size
        self.cores[n], self.wall[n], self.fids[n], self.sizes[n] = job.cores, job.walltime, fid, size
        self.slots[n], self.seqs[n] = slot, self._next_seq
        self._fresh.append(slot)
        self._next_seq += 1
        self.jobs.append(job)

    def take_fresh(self):
        """The slots handed out since the last call (and forget them)."""
        fresh, self._fresh = self._fresh, []
        return np.array(fresh, dtype=np.int64)

    def take_fresh_several(self):
        """(slot, job) of the jobs of several files queued since the last call (and forget them)."""
        fresh, self._fresh_several = self._fresh_several, []
        return fresh

    def arrays(self):
        return self.cores, self.wall, self.fids, self.sizes, self.slots, self.seqs

    def remove(self, indices):
        """Drop the jobs at these queue positions (the rest keep their order)."""
        if not indices:
            return
        self.removals += 1
        n = len(self.jobs)
        gone = sorted(indices)
        (self._parked if self.park else self._free_slots).extend(self.slots[gone].tolist())
        # Each run of kept jobs between two removed ones moves down once (a pass starts a few
        # jobs: a few slice moves beat a boolean mask over the whole queue, six arrays over).
        arrays = self.arrays()
        to = gone[0]
        for r, i in enumerate(gone):
            end = gone[r + 1] if r + 1 < len(gone) else n
            if end > i + 1:
                for a in arrays:
                    a[to:to + end - i - 1] = a[i + 1:end]
                to += end - i - 1
        for i in reversed(gone):
            if self.jobs[i].files:
                self.several -= 1
                self.several_rows -= len(self.jobs[i].files)
            del self.jobs[i]

    def release_parked(self):
        """The slots parked since the last call are free again (no chain holds them any more)."""
        self._free_slots.extend(self._parked)
        self._parked = []
