"""The five policies as the compiled pass calls them: a code per policy, and
one call that evaluates the policy's own formula (``schedulers/<policy>.py``).

Imported by the planner only when a scheduler starts (the policy modules
import the scheduler class, which must not import the planner at load time).
"""

from batloc.schedulers.core.jit import inline
from batloc.schedulers.eft import eft_score
from batloc.schedulers.fcfs import fcfs_score
from batloc.schedulers.lea import lea_score
from batloc.schedulers.lem import lem_score
from batloc.schedulers.leo import leo_bound, leo_score

FCFS, EFT, LEA, LEO, LEM = range(5)
CODES = {"FCFS": FCFS, "EFT": EFT, "LEA": LEA, "LEO": LEO, "LEM": LEM}


@inline
def score(policy, t_k, overhead, penalty, now, saturated, W):
    if policy == FCFS:
        return fcfs_score(t_k)
    if policy == EFT:
        return eft_score(t_k, overhead)
    if policy == LEA:
        return lea_score(t_k, overhead, penalty, W)
    if policy == LEO:
        return leo_score(t_k, overhead, penalty, now, W)
    return lem_score(t_k, overhead, penalty, saturated, W)


@inline
def bound(policy, t_lb, overhead_lb, now, saturated, W):
    """A lower bound of the score of a node whose t_k >= t_lb and overhead >=
    overhead_lb, whatever its penalty (>= 0): the score itself there, the
    formulas being non-decreasing in each, except LEO's (leo.py)."""
    if policy == LEO:
        return leo_bound(t_lb, overhead_lb, now, W)
    return score(policy, t_lb, overhead_lb, 0.0, now, saturated, W)


@inline
def reads_overhead(policy):
    """Whether the policy's score reads the file's load overhead at all (FCFS's does not)."""
    return policy != FCFS


@inline
def needs_penalty(policy, t_k, now, saturated):
    """Whether the policy's score at t_k reads the eviction penalty (the costly
    part of scoring a node): LEO only in its LEA form, LEM only when saturated."""
    if policy == LEA:
        return True
    if policy == LEO:
        return t_k != now
    if policy == LEM:
        return saturated
    return False
