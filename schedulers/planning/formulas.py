"""The five policies' scores, in the paper's terms, and the one call the compiled pass makes.

A leaf: it imports only the JIT helper, so the planning pass takes its
formulas from here and never from the entry files (``schedulers/lea.py``…)
that name them. The terms: ``t_k`` (the node's cores available),
``overhead`` = t'_k - t_k (waiting for the file there), ``penalty`` (LEA's
eviction penalty, in seconds), ``W`` (LEA's weight), ``saturated`` (LEM:
1.0 when enough nodes are busy now, else 0.0; the gradual LEM: the weight of
locality in [0, 1], ``locality_weight`` of the share of busy nodes).

A sixth policy is its formula here with a code in ``CODES`` and a branch in
``score`` (and in ``needs_penalty`` if it reads the penalty), plus its entry
file (docs/architecture.md). The JIT cache covers this folder, so nothing else
changes.
"""

import math

from batloc.schedulers.planning.jit import inline


@inline
def fcfs_score(t_k):
    """FCFS (Algorithm 1): the node whose cores are free first."""
    return t_k


@inline
def eft_score(t_k, overhead):
    """EFT (Algorithm 2): the node where the file is available first, t'_k."""
    return t_k + overhead


@inline
def lea_score(t_k, overhead, penalty, W):
    """LEA (Algorithm 3): t_k + W x LoadOverhead + EvictionPenalty."""
    return t_k + W * overhead + penalty


@inline
def leo_score(t_k, overhead, penalty, now, W):
    """LEO (Algorithm 4): EFT's score on a node that can start the job now, LEA's elsewhere."""
    if t_k == now:
        return eft_score(t_k, overhead)
    return lea_score(t_k, overhead, penalty, W)


@inline
def leo_bound(t_lb, overhead_lb, now, W):
    """A lower bound of LEO's score over t_k >= t_lb, overhead >= overhead_lb and
    any penalty, though the score is not monotone in t_k: above now t_k is in
    the LEA form (monotone); at now the node may start now (EFT form) or later
    (LEA form, at least the LEA form at now)."""
    if t_lb == now:
        return min(eft_score(t_lb, overhead_lb), lea_score(t_lb, overhead_lb, 0.0, W))
    return lea_score(t_lb, overhead_lb, 0.0, W)


@inline
def lem_score(t_k, overhead, penalty, saturated, W):
    """LEM (Algorithm 5): LEA's score when the cluster is saturated, EFT's otherwise."""
    if saturated != 0.0:
        return lea_score(t_k, overhead, penalty, W)
    return eft_score(t_k, overhead)


@inline
def lem_gradual_score(t_k, overhead, penalty, weight, W):
    """The gradual LEM (the paper's §VI: "switching between a locality-first and
    distribution-first strategy could be done gradually"): EFT's score plus
    `weight` x what LEA adds to it, t_k + overhead + weight x ((W - 1) x
    overhead + penalty); EFT at weight 0, LEA at weight 1."""
    return t_k + overhead + weight * ((W - 1.0) * overhead + penalty)


LINEAR, SMOOTH, CONVEX, CONCAVE = range(4)
SHAPES = {"linear": LINEAR, "smooth": SMOOTH, "convex": CONVEX, "concave": CONCAVE}
# The ramp's scale (option ``ramp_scale``), added to the shape's code: ``W_SCALE + shape``.
W_SCALE = 4
RAMP_SCALES = {"linear": 0, "W": W_SCALE}


@inline
def locality_weight(share, low, high, shape, W):
    """The gradual LEM's weight of locality at a share of busy nodes: 0 up to
    `low`, 1 from `high`, and between them a ramp of x = (share - low) /
    (high - low): x (linear), 3x^2 - 2x^3 (smooth), x^2 (convex: late),
    sqrt(x) (concave: early). On W's scale (``shape >= W_SCALE``) the ramp's w
    gives the weight (W^w - 1) / (W - 1), with which the load weighs W^w in
    ``lem_gradual_score``: 1 (EFT) to W (LEA) geometrically, where the linear w
    reaches LEA's choices within its first percents."""
    if share <= low:
        return 0.0
    if share >= high:
        return 1.0
    x = (share - low) / (high - low)
    curve = shape % W_SCALE
    w = x
    if curve == SMOOTH:
        w = x * x * (3.0 - 2.0 * x)
    elif curve == CONVEX:
        w = x * x
    elif curve == CONCAVE:
        w = math.sqrt(x)
    if shape >= W_SCALE and W != 1.0:
        return (W ** w - 1.0) / (W - 1.0)
    return w


FCFS, EFT, LEA, LEO, LEM, LEMG = range(6)
# LEMG, the gradual LEM, is LEM run with the option ``ramp`` (schedulers/lem.py)
CODES = {"FCFS": FCFS, "EFT": EFT, "LEA": LEA, "LEO": LEO, "LEM": LEM, "LEMG": LEMG}


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
    if policy == LEMG:
        return lem_gradual_score(t_k, overhead, penalty, saturated, W)
    return lem_score(t_k, overhead, penalty, saturated, W)


@inline
def bound(policy, t_lb, overhead_lb, now, saturated, W):
    """A lower bound of the score of a node whose t_k >= t_lb and overhead >=
    overhead_lb, whatever its penalty (>= 0): the score itself there, the
    formulas being non-decreasing in each, except LEO's (``leo_bound``)."""
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
    if policy == LEM or policy == LEMG:
        return saturated != 0.0
    return False
