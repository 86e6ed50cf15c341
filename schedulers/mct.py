"""MCT, Minimum Completion Time (Khanna et al. §5), in immediate mode.

At its arrival a job goes to the node where it would complete first, after
that node's queue, counting the files in memory or loading there now (§5,
item 3), with its transfer placed in the transfer Gantt chart (§4.3):

    1. t_k   = when node k could start it (its queue played with walltimes)
       t'_k  = t_k if the file is in memory; the load's end if it is loading
               (no second load); else TCT_k(f) = max(t_k, recv_k[, lane]) + size / BW_k
    2. node  = argmin t'_k + walltime; ties: smallest t_k, then the lowest index.

This is EFT of the planning schedulers, mapped once.
"""

import numpy as np

from batloc.schedulers.filesharing.immediate import ImmediateScheduler, argmin_ties


def mct_node(sched, job, now):
    t_k = sched.t_k(job, now)
    if job.file is None:
        t_file = t_k
    else:
        state, load_end = sched.file_states(job)
        t_file = np.where(state == 2, t_k,
                          np.where(state == 1, np.fmax(t_k, load_end), sched.state.chart.tct_all(job.size, t_k)))
    completion = t_file + job.walltime
    node = argmin_ties(completion, t_k)
    return node, float(completion[node])


class Mct(ImmediateScheduler):
    policy_name = "MCT"

    def choose(self, job, now):
        return mct_node(self, job, now)
