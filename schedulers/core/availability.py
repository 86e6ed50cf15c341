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
"""

import numpy as np


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

    def begin_pass(self, now):
        self.now = now
        self.avail = self._base_availability(now)
        self.sorted = np.sort(self.avail, axis=1)
        self.free_now = (self.avail <= now).sum(axis=1)

    def t_lower(self, cores, walltime):
        """t_k for every node (exact here; a lower bound in the backfilling view)."""
        return self.sorted[:, cores - 1]

    def t_exact(self, node, cores, walltime, lower=None):
        t = self.sorted[node, cores - 1]
        if not np.isfinite(t):
            return np.inf, None
        positions = np.flatnonzero(self.avail[node] <= t)[:cores]
        return float(t), positions

    def reserve(self, node, positions, start, walltime):
        self.avail[node, positions] = start + walltime
        self.sorted[node] = np.sort(self.avail[node])
        self.free_now[node] = int((self.avail[node] <= self.now).sum())

    def max_free_now(self):
        return int(self.free_now.max())


class BackfillAvailability(CoreAvailability):
    backfilling = True

    def begin_pass(self, now):
        self.now = now
        self.base = self._base_availability(now)
        # Earliest instant >= now at which each core is free (lower bound of t_k).
        self.first_free = self.base.copy()
        self.sorted = np.sort(self.first_free, axis=1)
        self.free_now = (self.first_free <= now).sum(axis=1)
        self.planned = {}   # node -> ([start], [end], [position]) placed in this pass

    def t_exact(self, node, cores, walltime, lower=None):
        base = self.base[node]
        starts, ends, positions = self.planned.get(node, ((), (), ()))
        cands = [self.now]
        cands.extend(x for x in base if self.now < x < np.inf)
        cands.extend(x for x in ends if self.now < x < np.inf)
        cands = np.unique(np.asarray(cands, dtype=float))
        if lower is not None:
            cands = cands[cands >= lower]
        if cands.size == 0:
            return np.inf, None
        free = base[None, :] <= cands[:, None]
        if starts:
            s = np.asarray(starts)
            e = np.asarray(ends)
            overlap = (s[None, :] < cands[:, None] + walltime) & (e[None, :] > cands[:, None])
            onehot = np.zeros((len(starts), base.size))
            onehot[np.arange(len(starts)), np.asarray(positions)] = 1.0
            free &= ~((overlap.astype(float) @ onehot) > 0)
        ok = np.flatnonzero(free.sum(axis=1) >= cores)
        if ok.size == 0:
            return np.inf, None
        i = ok[0]
        return float(cands[i]), np.flatnonzero(free[i])[:cores]

    def reserve(self, node, positions, start, walltime):
        starts, ends, poss = self.planned.setdefault(node, ([], [], []))
        end = start + walltime
        for p in positions:
            starts.append(start)
            ends.append(end)
            poss.append(int(p))
        # Chain the new interval into each core's earliest free instant.
        for p in positions:
            ff = self.first_free[node, p]
            moved = True
            while moved:
                moved = False
                for s, e, q in zip(starts, ends, poss):
                    if q == p and s <= ff < e:
                        ff, moved = e, True
            self.first_free[node, p] = ff
        self.sorted[node] = np.sort(self.first_free[node])
        self.free_now[node] = int((self.first_free[node] <= self.now).sum())


def make_availability(platform, backfilling):
    return (BackfillAvailability if backfilling else CoreAvailability)(platform)
