"""Free cores and free bandwidth over time: the two-resource profile of I/O-aware list scheduling.

A step function from `now` on: `cores[i]` and `bw[i]` hold on
[times[i], times[i+1]) (the last segment forever). Reservations subtract from
both over their window; ``earliest`` finds the first start at which a job's
cores and bandwidth are free during its whole window (conservative
backfilling on both resources).
"""

import math

import numpy as np

TIME_EPS = 1e-9


class Profile:
    def __init__(self, now, cores, bandwidth, bw_slack):
        self.times = np.array([float(now)])
        self.cores = np.array([int(cores)], dtype=np.int64)
        self.bw = np.array([float(bandwidth)])
        self.slack = bandwidth * bw_slack

    def _cut(self, t):
        """Index of the segment starting at `t`, splitting one if needed (`t` ≥ times[0])."""
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        if self.times[i] == t:
            return i
        self.times = np.insert(self.times, i + 1, t)
        self.cores = np.insert(self.cores, i + 1, self.cores[i])
        self.bw = np.insert(self.bw, i + 1, self.bw[i])
        return i + 1

    def reserve(self, start, end, cores, bw):
        if not end > start:
            return
        i = self._cut(start)
        j = self._cut(end) if math.isfinite(end) else len(self.times)
        self.cores[i:j] -= cores
        self.bw[i:j] -= bw

    def earliest(self, cores, bw, duration, not_before):
        """Earliest t ≥ not_before with `cores` and `bw` free over [t, t + duration), or inf."""
        times = self.times
        ok = (self.cores >= cores) & (self.bw >= bw - self.slack)
        n = len(times)
        blocked = np.where(ok, n, np.arange(n))
        next_blocked = np.minimum.accumulate(blocked[::-1])[::-1]
        run_end = np.append(times, math.inf)[next_blocked]
        starts = np.maximum(times, not_before)
        fits = ok & (run_end - starts >= duration - TIME_EPS)
        hit = np.flatnonzero(fits)
        return float(starts[hit[0]]) if hit.size else math.inf
