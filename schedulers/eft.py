"""EFT (paper Algorithm 2): each job goes to the node where its file is available first.

    score(Node_k) = t'_k = t_k + (t'_k - t_k)
"""

from batloc.schedulers.planning.formulas import eft_score
from batloc.schedulers.planning.scheduler import PlanningScheduler

__all__ = ["Eft", "eft_score"]


class Eft(PlanningScheduler):
    policy_name = "EFT"       # scored by eft_score
