"""FCFS (paper Algorithm 1): each job goes to the node whose cores are free first.

    score(Node_k) = t_k
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.planning_scheduler import PlanningScheduler


@inline
def fcfs_score(t_k):
    return t_k


class Fcfs(PlanningScheduler):
    policy_name = "FCFS"
