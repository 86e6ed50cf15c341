"""How the planning core is compiled: numba, cached on disk per version of its source.

Numba caches a compiled function next to its own source's timestamp only: a
change in a function it calls from another file (a policy's formula, say)
would silently reuse the stale machine code. So the cache directory is named
after a hash of every source file the kernel is built from, and a change
anywhere compiles afresh once.

The cache lives in ``$BATLOC_NUMBA_CACHE`` if set, else under the user's cache
directory (``$XDG_CACHE_HOME`` or ``~/.cache``) in ``batloc/numba/<hash>``.
``scripts/install.sh`` compiles once at install time (``warm_up``), so that a
scheduler starts from the cache.
"""

import hashlib
import os

import numba
from numba.core import config

_CORE = os.path.dirname(os.path.abspath(__file__))
# The files the compiled pass is built from: the compiled modules of the core
# and the five policies' formulas. The core's pure-Python modules (options,
# state, queue) are left out: editing an option must not cost a recompile.
_COMPILED = ("jit", "availability", "file_outlook", "planner", "policies")
_POLICIES = ("fcfs", "eft", "lea", "leo", "lem")


def _source_hash():
    h = hashlib.sha1(numba.__version__.encode())
    sources = [os.path.join(_CORE, f"{m}.py") for m in _COMPILED] + [
        os.path.join(os.path.dirname(_CORE), f"{p}.py") for p in _POLICIES]
    for path in sorted(sources):
        h.update(os.path.basename(path).encode())
        with open(path, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def cache_dir():
    root = os.environ.get("BATLOC_NUMBA_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "batloc", "numba")
    return os.path.join(root, _source_hash())


# Read by numba when a cached function is first compiled or loaded.
config.CACHE_DIR = cache_dir()


def njit(fn):
    """Compiled, cached; IEEE arithmetic as in Python (no fastmath), no bounds checks."""
    return numba.njit(cache=True, error_model="numpy", nogil=True)(fn)


def inline(fn):
    """As ``njit``, and inlined into its callers: numba calls between compiled
    functions are not inlined by LLVM, and a call costs about 10 ns, more than
    the small helpers of the hot loops (a comparison, a formula) themselves."""
    return numba.njit(cache=True, error_model="numpy", nogil=True, inline="always")(fn)
