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
        return np.where(t_k == ctx.now, eft_score(t_k, overhead),
                        lea_score(t_k, overhead, penalty, self.opts.W))

    def lower_bound(self, ctx, t_k, overhead, penalty):
        # The EFT/LEA switch is not monotone in t_k: bound by the smaller form.
        return np.minimum(eft_score(t_k, overhead), lea_score(t_k, overhead, penalty, self.opts.W))
