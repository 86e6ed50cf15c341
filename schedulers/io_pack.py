"""I/O-aware pack scheduling (Jeannot, Pallez & Vidal; seed-schedulers.md §2, "Pack").

1. At the first submission, and whenever the running pack's last job ends,
   the waiting jobs are sorted (option ``order``: ``random`` — a key drawn
   once per job from ``seed``; ``max`` — non-increasing walltime; ``char`` —
   non-increasing io_period; ties in submission order) and cut into packs by
   first fit under the average constraint (ioaware/packs.py).
2. The first pack starts at once; the others are rebuilt at the next boundary.
3. Pack backfilling, at every event, in the same order: a waiting job starts
   if its cores are free, it ends (now + walltime) by the pack's planned end
   and the pack's average bandwidth with it (the pack's duration unchanged)
   stays ≤ B; it joins the pack.
Files ``io_pack_random.py``, ``io_pack_max.py``, ``io_pack_char.py`` fix the order.
"""

import random

from batloc.schedulers.ioaware.base import IoScheduler
from batloc.schedulers.ioaware.packs import ORDERS, RunningPack, first_fit, sort_key
from batloc.schedulers.plain.options import number, one_of


class Io_pack(IoScheduler):
    policy = "io_pack"
    options_spec = {**IoScheduler.options_spec, "order": ("max", one_of(*ORDERS)),
                    "seed": (0, number(minimum=0, integer=True))}

    def __init__(self, options=None):
        super().__init__(options)
        self.needs_period = self.opts.order == "char"
        self.rng = random.Random(self.opts.seed)
        self.key = sort_key(self.opts.order)
        self.current = None

    def admit(self, item):
        super().admit(item)
        item.rand = self.rng.random()

    def completed(self, running, now):
        if self.current is not None:
            self.current.members.discard(running.item.id)
            if not self.current.members:
                self.current = None   # a boundary: the next pack is built now

    def schedule(self, now):
        if not self.queue:
            return
        ordered = sorted(self.queue, key=self.key)
        started = []
        if self.current is None:
            first = first_fit(ordered, self.P, self.fits_bandwidth)[0]
            self.current = RunningPack(now, first)
            for item in first.items:
                self._start_in_pack(item, now, started)
        else:
            pack = self.current.pack
            for item in ordered:
                if (item.cores <= len(self.free) and now + item.walltime <= self.current.end
                        and self.fits_bandwidth(pack.average_with(item))):
                    pack.add(item)   # ends by the planned end: the pack's duration is unchanged
                    self._start_in_pack(item, now, started)
        gone = set(map(id, started))
        self.queue = [q for q in self.queue if id(q) not in gone]

    def _start_in_pack(self, item, now, started):
        self.start(item, self.lowest_free(item.cores), now)
        self.current.members.add(item.id)
        started.append(item)
