"""LEO (paper Algorithm 4): Locality and Eviction Opportunistic.

A node that can start the job now is scored like EFT (t'_k); any other node
like LEA. So an idle node wins whenever it finishes loading first.
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.eft import eft_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.planning_scheduler import PlanningScheduler


@inline
def leo_score(t_k, overhead, penalty, now, W):
    if t_k == now:
        return eft_score(t_k, overhead)
    return lea_score(t_k, overhead, penalty, W)


@inline
def leo_bound(t_lb, overhead_lb, now, W):
    """A lower bound of the score over t_k >= t_lb, overhead >= overhead_lb and
    any penalty, though the score is not monotone in t_k: above now t_k is in
    the LEA form (monotone); at now the node may start now (EFT form) or later
    (LEA form, at least the LEA form at now)."""
    if t_lb == now:
        return min(eft_score(t_lb, overhead_lb), lea_score(t_lb, overhead_lb, 0.0, W))
    return lea_score(t_lb, overhead_lb, 0.0, W)


class Leo(PlanningScheduler):
    policy_name = "LEO"
