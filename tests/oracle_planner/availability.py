"""When cores are free in the planned schedule, per node, vectorised over nodes.

Two views of the same reservations (semantics note, "Node availability"):

- ``CoreAvailability`` (no backfilling): each core is available after the end of
  the last reservation placed on it; ``t_k`` for ``c`` cores is the c-th smallest
  availability on node k, raised to ``now``. Rows are kept sorted, so ``t_k`` for
  every node at once is one column of a matrix.
- ``BackfillAvailability`` (conservative backfilling): ``t_k`` is the earliest time
  at which ``c`` cores of node k are free during the whole window [t_k, t_k + w),
  given every reservation made so far in the pass. The per-core "earliest instant
  free" gives a cheap lower bound for all nodes at once; the exact time is only
  computed for the few nodes the planner actually has to look at.

Both hold the *actual* state (cores held by running or waiting jobs until their
planned end) between passes, and a scratch copy during a pass
(``begin_pass`` … ``reserve``), so a pass never disturbs the actual state.
Positions are indices into the node's ``core_ids``; columns past a node's core
count are padding at +inf.

Speed (the planner calls ``t_lower``/``t_exact``/``reserve`` once or so per
queued job and pass): the sorted availabilities are stored transposed
(``cols[c - 1]`` is t_k for c cores on every node, contiguous), a reservation
re-sorts only its own node's row, and the largest count of cores free now is
cached and recomputed only when the node that held it loses cores.
"""

import math
from bisect import bisect_left, bisect_right

import numpy as np

INF = math.inf


class CoreAvailability:
    backfilling = False

    def __init__(self, platform):
        self.platform = platform
        n, m = len(platform), platform.max_cores
        self.ncores = np.array([len(nd.core_ids) for nd in platform.nodes])
        pad = np.arange(m)[None, :] >= self.ncores[:, None]
        self._pad = pad
        # Actual state: planned end of the job holding each core (-inf = free).
        self.end = np.where(pad, np.inf, -np.inf)
        self.held = np.zeros((n, m), dtype=bool)
        self.now = 0.0

    # ---- actual state -------------------------------------------------
    def hold(self, node, positions, end):
        self.end[node, positions] = end
        self.held[node, positions] = True

    def release(self, node, positions):
        self.end[node, positions] = -np.inf
        self.held[node, positions] = False

    def busy_nodes(self):
        """Nodes on which at least one core is held (a job runs or waits)."""
        return self.held.any(axis=1)

    # ---- planning pass ------------------------------------------------
    def _base_availability(self, now):
        avail = np.maximum(self.end, now)
        # A job still running at or past its planned end (its completion has
        # not reached us yet) keeps its cores: never offer them at `now`.
        overrun = self.held & (self.end <= now)
        if overrun.any():
            avail[overrun] = np.nextafter(now, np.inf)
        return avail

    def _start_sorted(self, rows, now):
        srt = np.sort(rows, axis=1)
        self.cols = np.ascontiguousarray(srt.T)       # cols[c - 1, k]: t_k for c cores
        self.free_now = (rows <= now).sum(axis=1)
        self._max_free = int(self.free_now.max())

    def _resort(self, node, row):
        """Row `node` changed: refresh its sorted column and its count free now."""
        srt = np.sort(row)
        self.cols[:, node] = srt
        old = self.free_now[node]
        new = int(srt.searchsorted(self.now, "right"))
        self.free_now[node] = new
        best = self._max_free
        if best is not None:
            if new > best:
                self._max_free = new
            elif new < old == best:
                self._max_free = None                 # recomputed on demand

    @property
    def sorted(self):
        """t_k for c cores at [k, c - 1] (a transposed view, kept for inspection)."""
        return self.cols.T

    def begin_pass(self, now):
        self.now = now
        self.avail = self._base_availability(now)
        self._start_sorted(self.avail, now)

    def resume_pass(self, now):
        """A pass on the rows the previous ones left (the authors' submission
        pass): the actual state since is not read; times before now read as now."""
        self.now = now
        self.avail = np.maximum(self.avail, now)
        self._start_sorted(self.avail, now)

    def t_lower(self, cores, walltime):
        """t_k for every node (exact here; a lower bound in the backfilling view)."""
        return self.cols[cores - 1]

    def t_exact(self, node, cores, walltime, lower=None):
        t = float(self.cols[cores - 1, node])
        if not t < INF:
            return INF, None
        return t, (self.avail[node] <= t).nonzero()[0][:cores]

    def reserve(self, node, positions, start, walltime):
        row = self.avail[node]
        row[positions] = start + walltime
        self._resort(node, row)

    def max_free_now(self):
        if self._max_free is None:
            self._max_free = int(self.free_now.max())
        return self._max_free


class BackfillAvailability(CoreAvailability):
    """Reservations made in the pass are kept per node and per core as intervals
    sorted by start; on one core they never overlap (``t_exact`` only offers
    cores free over the whole window), so their ends are sorted too and one
    bisection tells whether a window overlaps any of them."""

    backfilling = True

    def begin_pass(self, now):
        self.now = now
        self.base = self._base_availability(now)
        # Earliest instant >= now at which each core is free (lower bound of t_k).
        self.first_free = self.base.copy()
        self._start_sorted(self.first_free, now)
        self.planned = {}   # node -> _NodePlan, once something is reserved on it

    def resume_pass(self, now):
        self.now = now
        self.base = np.maximum(self.base, now)
        self.first_free = np.maximum(self.first_free, now)
        self._start_sorted(self.first_free, now)
        for node, plan in self.planned.items():
            plan.base = self.base[node].tolist()
            plan.now = now
            plan.cands = sorted({now}.union(x for x in plan.cands if x > now))

    def t_exact(self, node, cores, walltime, lower=None):
        plan = self.planned.get(node)
        if plan is None:
            # Nothing planned on the node yet: a core is free from its base
            # availability on, so t_k is the c-th smallest one (itself a candidate
            # instant: now or a base value), exactly as in the no-backfilling view.
            t = float(self.cols[cores - 1, node])
            if lower is None or lower <= t:
                if not t < INF:
                    return INF, None
                return t, (self.base[node] <= t).nonzero()[0][:cores]
            plan = _NodePlan(self.base[node].tolist(), self.now)
        # Earliest candidate instant (now, a base availability or a planned end)
        # at which `cores` cores are free over the whole window; the positions
        # are the lowest free ones.
        base, starts, ends, cands = plan.base, plan.starts, plan.ends, plan.cands
        i = 0 if lower is None else bisect_left(cands, lower)
        for x in cands[i:]:
            x_end = x + walltime
            free = []
            for p, b in enumerate(base):
                if b > x:
                    continue
                e = ends[p]
                if e:
                    j = bisect_right(e, x)       # first interval ending after x
                    if j < len(e) and starts[p][j] < x_end:
                        continue
                free.append(p)
                if len(free) == cores:
                    return float(x), np.array(free, dtype=np.intp)
        return INF, None

    def reserve(self, node, positions, start, walltime):
        plan = self.planned.get(node)
        if plan is None:
            plan = self.planned[node] = _NodePlan(self.base[node].tolist(), self.now)
        end = start + walltime
        plan.add_instant(end)
        row = self.first_free[node]
        for p in positions:
            p = int(p)
            s = plan.starts[p]
            if s is None:
                s, e = plan.starts[p], plan.ends[p] = [], []
            else:
                e = plan.ends[p]
            j = bisect_left(s, start)
            s.insert(j, start)
            e.insert(j, end)
            # Chain the new interval into the core's earliest free instant. That
            # instant was in no interval; if the new one covers it, it moves to
            # the end of the run of back-to-back intervals (disjoint intervals:
            # the one covering an end starts exactly there).
            ff = row[p]
            if start <= ff < end:
                ff = end
                j = bisect_left(s, ff)
                while j < len(s) and s[j] == ff:
                    ff = e[j]
                    j = bisect_left(s, ff)
                row[p] = ff
        self._resort(node, row)


class _NodePlan:
    """One node's reservations in the pass: per core, sorted starts and ends (None: none);
    and the candidate instants for t_k (now, base availabilities and planned
    ends in (now, inf)), sorted without duplicates."""

    __slots__ = ("base", "now", "starts", "ends", "cands")

    def __init__(self, base, now):
        self.base = base
        self.now = now
        # Per core, created on its first reservation (most cores get none in a pass).
        self.starts = [None] * len(base)
        self.ends = [None] * len(base)
        self.cands = sorted({now}.union(x for x in base if now < x < INF))

    def add_instant(self, x):
        if self.now < x < INF:
            i = bisect_left(self.cands, x)
            if i == len(self.cands) or self.cands[i] != x:
                self.cands.insert(i, x)


def make_availability(platform, backfilling):
    return (BackfillAvailability if backfilling else CoreAvailability)(platform)
