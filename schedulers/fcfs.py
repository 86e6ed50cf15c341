"""FCFS (paper Algorithm 1): each job goes to the node whose cores are free first.

    score(Node_k) = t_k
"""

from batloc.schedulers.planning.formulas import fcfs_score
from batloc.schedulers.planning.scheduler import PlanningScheduler

__all__ = ["Fcfs", "fcfs_score"]


class Fcfs(PlanningScheduler):
    policy_name = "FCFS"      # scored by fcfs_score
