"""Packs under the average constraint (Jeannot, Pallez & Vidal; seed-schedulers.md §2, "Pack").

A pack is a set of jobs started together; the next pack starts when the last
job of the current one ends. Its average bandwidth is Σ β_j d_j / max d_j
(declared io_bw × walltime, over the longest walltime): a job joins the first
pack where its cores fit in P and that average stays ≤ B, else opens a new
pack. Orders: `random` (a key drawn once per job), `max` (non-increasing
walltime), `char` (non-increasing characteristic time io_period); ties in
submission order.
"""

from dataclasses import dataclass, field

ORDERS = ("random", "max", "char")


def sort_key(order):
    if order == "max":
        return lambda it: (-it.walltime, it.order)
    if order == "char":
        return lambda it: (-it.period, it.order)
    return lambda it: (it.rand, it.order)


@dataclass
class Pack:
    cores: int = 0
    load: float = 0.0       # Σ β_j d_j, bytes
    duration: float = 0.0   # max d_j
    items: list = field(default_factory=list)

    def average_with(self, item):
        return (self.load + item.bw * item.walltime) / max(self.duration, item.walltime)

    def add(self, item):
        self.cores += item.cores
        self.load += item.bw * item.walltime
        self.duration = max(self.duration, item.walltime)
        self.items.append(item)


def first_fit(items, P, fits):
    """Packs of `items` (already sorted); `fits(average)` says whether a pack's average is ≤ B."""
    packs = []
    for item in items:
        for pack in packs:
            if pack.cores + item.cores <= P and fits(pack.average_with(item)):
                pack.add(item)
                break
        else:
            pack = Pack()
            pack.add(item)
            packs.append(pack)
    return packs


@dataclass
class RunningPack:
    """The pack being executed: planned end = its start + its longest walltime."""

    start: float
    pack: Pack
    members: set = field(default_factory=set)  # ids of its jobs still running

    @property
    def end(self):
        return self.start + self.pack.duration
