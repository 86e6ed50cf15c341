"""LEA (paper Algorithm 3): Locality and Eviction Aware.

    LoadOverhead    = t'_k - t_k
    EvictionPenalty = (sum of sizes of unused files in memory at t_k) x Size(File(J)) / M / Bandwidth
    score(Node_k)   = t_k + W x LoadOverhead + EvictionPenalty        (W = 500 by default)
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.planning_scheduler import PlanningScheduler


@inline
def lea_score(t_k, overhead, penalty, W):
    return t_k + W * overhead + penalty


class Lea(PlanningScheduler):
    policy_name = "LEA"
