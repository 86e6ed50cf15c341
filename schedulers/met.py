"""MET, Minimum Execution Time (Khanna et al. §5), in immediate mode.

At its arrival a job goes to the node where it would execute fastest,
counting the files already in that node's memory (files still loading do not
count), and waits in that node's FIFO queue:

    1. E_k = (file cached on k ? 0 : size / BW_k) + walltime
    2. node = argmin E_k; ties (e.g. the file is nowhere): the first available
       node, smallest t_k; then the lowest index.

MET ignores queue lengths: it favours locality at the price of imbalance.
"""

import numpy as np

from batloc.schedulers.filesharing.immediate import ImmediateScheduler, argmin_ties


def met_node(sched, job, now):
    t_k = sched.t_k(job, now)
    if job.file is None:
        execution = np.full(len(t_k), job.walltime)
    else:
        state, _ = sched.file_states(job)
        execution = np.where(state == 2, 0.0, job.size / sched.platform.bandwidth) + job.walltime
    execution = np.where(np.isfinite(t_k), execution, np.inf)
    node = argmin_ties(execution, t_k)
    return node, float(execution[node])


class Met(ImmediateScheduler):
    policy_name = "MET"

    def choose(self, job, now):
        return met_node(self, job, now)
