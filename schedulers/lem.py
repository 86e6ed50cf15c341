"""LEM (paper Algorithm 5): Locality and Eviction Mixed.

If every node runs at least one job now (option ``saturation``: the share of
busy nodes required, 1.0 = all), LEA places the job; otherwise EFT does.
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.eft import eft_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.planning_scheduler import PlanningScheduler


@inline
def lem_score(t_k, overhead, penalty, saturated, W):
    if saturated:
        return lea_score(t_k, overhead, penalty, W)
    return eft_score(t_k, overhead)


class Lem(PlanningScheduler):
    policy_name = "LEM"
