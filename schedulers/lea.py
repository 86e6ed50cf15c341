"""LEA (paper Algorithm 3): Locality and Eviction Aware.

    LoadOverhead    = t'_k - t_k
    EvictionPenalty = (sum of sizes of unused files in memory at t_k) x Size(File(J)) / M / Bandwidth
    score(Node_k)   = t_k + W x LoadOverhead + EvictionPenalty        (W = 500 by default)
"""

from batloc.schedulers.planning.formulas import lea_score
from batloc.schedulers.planning.scheduler import PlanningScheduler

__all__ = ["Lea", "lea_score"]


class Lea(PlanningScheduler):
    policy_name = "LEA"       # scored by lea_score
