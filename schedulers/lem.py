"""LEM (paper Algorithm 5): Locality and Eviction Mixed.

If every node runs at least one job now (option ``saturation``: the share of
busy nodes required, 1.0 = all), LEA places the job; otherwise EFT does.

    score(Node_k) = LEA's score   if saturated
                    EFT's score   otherwise
"""

from batloc.schedulers.planning.formulas import lem_score
from batloc.schedulers.planning.scheduler import PlanningScheduler

__all__ = ["Lem", "lem_score"]


class Lem(PlanningScheduler):
    policy_name = "LEM"       # scored by lem_score
