"""EFT (paper Algorithm 2): each job goes to the node where its file is available first.

    score(Node_k) = t'_k = t_k + (t'_k - t_k)
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.planning_scheduler import PlanningScheduler


@inline
def eft_score(t_k, overhead):
    return t_k + overhead


class Eft(PlanningScheduler):
    policy_name = "EFT"
