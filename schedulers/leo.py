"""LEO (paper Algorithm 4): Locality and Eviction Opportunistic.

A node that can start the job now is scored like EFT (t'_k); any other node
like LEA. So an idle node wins whenever it finishes loading first.
"""

import numpy as np

from batloc.schedulers.eft import eft_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.planning_scheduler import PlanningScheduler


class Leo(PlanningScheduler):
    policy_name = "LEO"

    def score(self, ctx, t_k, overhead, penalty):
        if isinstance(t_k, np.ndarray):
            return np.where(t_k == ctx.now, eft_score(t_k, overhead),
                            lea_score(t_k, overhead, penalty, self.opts.W))
        if t_k == ctx.now:
            return eft_score(t_k, overhead)
        return lea_score(t_k, overhead, penalty, self.opts.W)

    def penalty_counts(self, ctx, t_k):
        return t_k != ctx.now

    # No separate lower_bound: the score itself bounds it. Given t_lb <= t_k, a
    # node with t_lb > now has t_k > now (LEA form, monotone); a node with
    # t_lb == now scores t'_k if it starts now, else the LEA form, which is
    # >= t_k + overhead >= the EFT form at t_lb.
