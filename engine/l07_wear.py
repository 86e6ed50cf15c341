"""The L07 clock's sleeps and transfers worn by the steps they owe, compiled (numba): one call where numpy made one
or two per step.

The clock (``l07_clock``) owes its steps to the sleeps while none can end, and wears them all at once when their
values are needed. Each sleep gets the very subtractions, in the same order, that one numpy call per step gave it:
`left[i] - owed[j]`, IEEE double, no fast-math (numba's default: no reassociation, no contraction: there is no
multiply to fuse). Elementwise subtraction is exact to vectorise (each lane is the same IEEE operation).

Which sleeps a step ends (below PRECISION_TIMING) and the least of the others are found on the doubles' bits
read as int64: for doubles >= 0 the order of their bits is their order (IEEE 754's layout), and a negative double
(or -0.0) reads as a negative integer, below the bits of any positive threshold, as it is below it as a double.
So `bits < bits(PRECISION_TIMING)` is `left < PRECISION_TIMING`, and the least bits of the sleeps above it are
the least of them: numba vectorises an integer minimum, not a float one without fast-math.

Compiled once into batloc's numba cache (``scripts/install.sh``'s warm-up; a first run compiles it, ~1 s) and
imported at the clock's first flush only, so a run with no sleep never imports numba; a scheduler in the
engine's process has usually imported it by then (its import, ~0.2 s of CPU, is then not the engine's).
"""

import os

import numba
import numpy as np
from numba.core import config

_MAX_BITS = np.iinfo(np.int64).max   # above the bits of +inf


def _cache_dir():
    """batloc's numba cache (``$BATLOC_NUMBA_CACHE`` or the user's cache directory), a folder for the engine's: numba
    keys a cached function by its source file's path and stamp, so a change here compiles afresh."""
    root = os.environ.get("BATLOC_NUMBA_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "batloc", "numba")
    return os.path.join(root, "engine")


def _njit(fn):
    """`fn` compiled and cached in the engine's folder: numba reads its cache directory when a function is
    decorated (the planning core sets numba's for its own, maybe already in this process)."""
    kept = config.CACHE_DIR
    config.CACHE_DIR = _cache_dir()
    try:
        return numba.njit(cache=True, fastmath=False, boundscheck=False, error_model="numpy", nogil=True)(fn)
    finally:
        config.CACHE_DIR = kept


@_njit
def wear(left, owed, k):
    """`left` worn by `owed[0]`, then `owed[1]`, ... `owed[k - 1]`."""
    n = left.shape[0]
    for j in range(k):
        d = owed[j]
        for i in range(n):
            left[i] = left[i] - d


@_njit
def wear_ends(left, owed, k, ends, below):
    """`wear`, then the slots now below the double whose bits are `below` (> 0: the clock's PRECISION_TIMING) into
    `ends`, in slot order: returns their count and the least of the others (inf if none)."""
    wear(left, owed, k)
    bits = left.view(np.int64)
    n = left.shape[0]
    count = 0
    for i in range(n):
        if bits[i] < below:
            ends[count] = i
            count += 1
    least = _MAX_BITS
    for i in range(n):
        b = bits[i]
        least = min(least, b if b >= below else _MAX_BITS)
    if least == _MAX_BITS:
        return count, np.inf
    out = np.empty(1, np.int64)
    out[0] = least
    return count, out.view(np.float64)[0]


@_njit
def wear_moves(remains, rate, owed, k):
    """The transfers' fractions left worn by the steps `owed[0]`, ... `owed[k - 1]`: SimGrid's update_remains(rate x
    delta), the product rounded, then the subtraction (numba contracts no multiply-add without fast-math)."""
    n = remains.shape[0]
    for j in range(k):
        d = owed[j]
        for i in range(n):
            remains[i] = remains[i] - rate[i] * d


@_njit
def least_over_rate(remains, rate):
    """The least fraction left over rate, and the least fraction left (no NaN: as numpy's minima)."""
    low = np.inf
    rmin = np.inf
    for i in range(remains.shape[0]):
        x = remains[i] / rate[i]
        if x < low:
            low = x
        if remains[i] < rmin:
            rmin = remains[i]
    return low, rmin


def bits_of(x):
    """The bits of the double `x`, as an int64."""
    return int(np.array(float(x)).view(np.int64))


def warm_up():
    """Compile (or load from the cache) the four functions for the clock's argument types."""
    left = np.array([1.0, 2e-9, 5e-10, np.inf])
    owed = np.array([1e-12, 1e-12])
    wear(left[:2], owed, 1)
    wear_ends(left, owed, 2, np.empty(4, np.int64), bits_of(1e-9))
    wear_moves(left[:2], left[:2].copy(), owed, 2)
    least_over_rate(left[:2], left[:2].copy())
