"""LEO (paper Algorithm 4): Locality and Eviction Opportunistic.

A node that can start the job now is scored like EFT (t'_k); any other node
like LEA. So an idle node wins whenever it finishes loading first.
"""

from batloc.schedulers.core.jit import njit
from batloc.schedulers.eft import eft_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.planning_scheduler import PlanningScheduler


@njit
def leo_score(t_k, overhead, penalty, now, W):
    if t_k == now:
        return eft_score(t_k, overhead)
    return lea_score(t_k, overhead, penalty, W)

# The planner bounds a node's score by this score taken at a lower bound of
# t_k (and overhead, and no penalty), though it is not monotone in t_k: a node
# whose bound of t_k is above now has t_k > now (LEA form, monotone); one
# whose bound is now scores t'_k if it starts now, else the LEA form, which is
# >= t_k + overhead >= the EFT form at the bound.


class Leo(PlanningScheduler):
    policy_name = "LEO"
