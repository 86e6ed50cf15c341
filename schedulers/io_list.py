"""I/O-aware list scheduling (Jeannot, Pallez & Vidal; seed-schedulers.md §2, "LS").

At every submission and completion: the profile of free cores and free
bandwidth left by the running jobs (Q_j cores and io_bw β_j until start +
walltime); then, in submission order, each waiting job gets the earliest t ≥
now at which its cores and β are free for its whole walltime (the strict
constraint: the declared bandwidths of jobs running together never exceed B),
and is reserved there — conservative backfilling on both resources. Jobs
whose t is now start, on the lowest free core ids (across nodes).

Options: ``backfill`` (default true; false: no job starts before the one
submitted before it), ``bandwidth`` (B in bytes/s instead of lustre's).
"""

from batloc.schedulers.ioaware.base import BW_SLACK, IoScheduler
from batloc.schedulers.ioaware.profile import Profile
from batloc.schedulers.plain.base import planned_end
from batloc.schedulers.plain.options import boolean


class Io_list(IoScheduler):
    policy = "io_list"
    options_spec = {**IoScheduler.options_spec, "backfill": (True, boolean)}

    def schedule(self, now):
        profile = Profile(now, self.P, self.B, BW_SLACK)
        for r in self.running.values():
            profile.reserve(now, planned_end(r, now), r.item.cores, r.item.bw)
        previous = now
        started = []
        for item in self.queue:
            t = profile.earliest(item.cores, item.bw, item.walltime, now if self.opts.backfill else previous)
            profile.reserve(t, t + item.walltime, item.cores, item.bw)
            previous = t
            if t == now:
                self.start(item, self.lowest_free(item.cores), now)
                started.append(item)
        if started:
            gone = set(map(id, started))
            self.queue = [q for q in self.queue if id(q) not in gone]
