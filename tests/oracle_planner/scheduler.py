"""A batloc scheduler running the Python planning pass instead of the compiled one.

``oracle_class(variant, bf)`` subclasses the shipped policy class, so the
pybatsim side (events, stagings, decision log) is the shipped one; only the
state and the pass are the oracle's, with the policies' scores as they were
written for it (numpy, vectorised over nodes).

Issue 39's rules, before the compiled pass has them, are the oracle's own
options (``oracle_class(..., load_model="shared", ramp_scale="W")``): the load
model, and the gradual LEM's weight on W's scale.
"""

import importlib

import numpy as np

from oracle_planner.planner import Decision, Planner
from oracle_planner.state import ClusterState


class Policy:
    """The five scores as the Python pass called them."""

    def __init__(self, name, opts, ramp_scale=None):
        self.name, self.W, self.saturation = name, opts.W, opts.saturation
        self.ramp_scale = ramp_scale or getattr(opts, "ramp_scale", "linear")
        self.truncate = opts.score_rounding == "truncate"
        self.uses_penalty = name in ("LEA", "LEO", "LEM")
        if name == "LEO":
            self.penalty_counts = lambda ctx, t_k: t_k != ctx.now
        elif name == "LEM" and opts.ramp is not None:     # the gradual LEM
            self.penalty_counts = lambda ctx, t_k: self.weight(ctx) > 0
        elif name == "LEM":
            self.penalty_counts = lambda ctx, t_k: ctx.busy_share >= self.saturation
        else:
            self.penalty_counts = None
        self.ramp, self.shape = opts.ramp, opts.ramp_shape

    def weight(self, ctx):
        """The gradual LEM's weight of locality at the share of busy nodes."""
        low, high = self.ramp
        share = ctx.busy_share
        if share <= low:
            return 0.0
        if share >= high:
            return 1.0
        x = (share - low) / (high - low)
        return {"linear": x, "smooth": x * x * (3 - 2 * x), "convex": x * x, "concave": x ** 0.5}[self.shape]

    def _lea(self, t_k, overhead, penalty):
        return t_k + self.W * overhead + penalty

    def score(self, ctx, t_k, overhead, penalty):
        s = self._score(ctx, t_k, overhead, penalty)
        return np.floor(s) if self.truncate else s      # R7: whole seconds (inf stays inf)

    def _score(self, ctx, t_k, overhead, penalty):
        if self.name == "FCFS":
            return t_k
        if self.name == "EFT":
            return t_k + overhead
        if self.name == "LEA":
            return self._lea(t_k, overhead, penalty)
        if self.name == "LEO":
            if isinstance(t_k, np.ndarray):
                return np.where(t_k == ctx.now, t_k + overhead, self._lea(t_k, overhead, penalty))
            return t_k + overhead if t_k == ctx.now else self._lea(t_k, overhead, penalty)
        if self.ramp is not None:
            w = self.weight(ctx)
            if self.ramp_scale == "W" and self.W != 1.0:
                # on W's scale: the load weighs W^w (1: EFT, W: LEA); the score is EFT's and LEA's
                # mixed in the proportion that gives it that weight
                w = (self.W ** w - 1.0) / (self.W - 1.0)
            return t_k + overhead + w * ((self.W - 1.0) * overhead + penalty)
        if ctx.busy_share >= self.saturation:
            return self._lea(t_k, overhead, penalty)
        return t_k + overhead

    lower_bound = score


class _OraclePlanner:
    def __init__(self, state, policy):
        self.inner = Planner(state, policy)
        self.first = {}        # job id -> (its first planned start, when), the predictions file's
        self.last = {}         # job id -> its planned start in the last pass that placed it

    @property
    def stats_jobs_scanned(self):
        return self.inner.stats_jobs_scanned

    @property
    def stats_nodes_scored(self):
        return self.inner.stats_nodes_scored

    def plan(self, now, queue, first=0, resume=False):
        decisions = self.inner.plan(now, list(queue.jobs), first, resume)
        where = {j.id: i for i, j in enumerate(queue.jobs)}
        # predictions as the standing plan keeps them: the first placement's start and pass, and the
        # start planned by the last pass before (the first one's on a first placement)
        previous = {}
        for jid, r in self.inner.reservations.items():
            if jid not in self.first:
                self.first[jid] = (r[1], now)
            previous[jid] = self.last.get(jid, r[1])
            self.last[jid] = r[1]
        for d in decisions:
            jid = d.job.id
            d.predicted = (self.first[jid][0], self.first[jid][1], previous[jid])
            self.first.pop(jid, None)
            self.last.pop(jid, None)
            d.index = where[jid]
        if not resume:
            queue.release_parked()
        return decisions

    # the authors' clock (batloc.schedulers.planning.ticks)
    def plan_new(self, now, queue, first):
        if first >= len(queue):
            return []
        return self.plan(now, queue, first, resume=True)

    def reservation(self, queue, index):
        job = queue.jobs[index]
        r = self.inner.reservations.get(job.id)
        if r is None:
            return None
        k, t, positions, case, t_file, score = r
        return Decision(job, k, positions.copy(), t, t_file, case, None, score, index)

    def planned_starts(self, queue, first=0):
        res = self.inner.reservations
        return [(res[j.id][1], j.id) for j in queue.jobs[first:] if j.id in res]


class _OracleState(ClusterState):
    def file_id(self, name):
        return -1


def oracle_class(variant, bf, load_model=None, ramp_scale=None):
    """The oracle of a shipped policy class; `load_model`, `ramp_scale` override the options'."""
    name = variant + ("_bf" if bf else "")
    shipped = getattr(importlib.import_module(f"batloc.schedulers.{name}"), name.capitalize())

    class Oracle(shipped):
        def make_state(self):
            return _OracleState(self.platform, self.opts, load_model or self.opts.load_model)

        def make_planner(self):
            return _OraclePlanner(self.state, Policy(self.policy_name, self.opts, ramp_scale))

    Oracle.__name__ = "Oracle" + shipped.__name__
    return Oracle
