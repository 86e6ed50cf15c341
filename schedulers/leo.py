"""LEO (paper Algorithm 4): Locality and Eviction Opportunistic.

A node that can start the job now is scored like EFT (t'_k); any other node
like LEA. So an idle node wins whenever it finishes loading first.

    score(Node_k) = t'_k                              if t_k = now
                    t_k + W x LoadOverhead + EvictionPenalty   otherwise
"""

from batloc.schedulers.planning.formulas import leo_bound, leo_score
from batloc.schedulers.planning.scheduler import PlanningScheduler

__all__ = ["Leo", "leo_bound", "leo_score"]


class Leo(PlanningScheduler):
    policy_name = "LEO"       # scored by leo_score (leo_bound: its lower bound for the pass's pruning)
