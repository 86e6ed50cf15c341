"""LEM (paper Algorithm 5): Locality and Eviction Mixed.

If every node runs at least one job now (option ``saturation``: the share of
busy nodes required, 1.0 = all), LEA places the job; otherwise EFT does.
"""

from batloc.schedulers.eft import eft_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.planning_scheduler import PlanningScheduler


class Lem(PlanningScheduler):
    policy_name = "LEM"

    def saturated(self, ctx):
        return ctx.busy_share >= self.opts.saturation

    def score(self, ctx, t_k, overhead, penalty):
        if self.saturated(ctx):
            return lea_score(t_k, overhead, penalty, self.opts.W)
        return eft_score(t_k, overhead)

    def penalty_counts(self, ctx, t_k):
        return self.saturated(ctx)
