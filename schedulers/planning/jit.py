"""How the planning core is compiled: numba, cached on disk per version of its source.

Numba caches a compiled function next to its own source's timestamp only: a
change in a function it calls from another file (a policy's formula, say),
or in a module constant it reads, would silently reuse the stale machine
code. So the cache directory is named after a hash of every source file of
the planning family, and a change anywhere in it compiles afresh once.

The cache lives in ``$BATLOC_NUMBA_CACHE`` if set, else under the user's cache
directory (``$XDG_CACHE_HOME`` or ``~/.cache``) in ``batloc/numba/<hash>``.
``scripts/install.sh`` compiles once at install time (``warm_up``), so that a
scheduler starts from the cache.
"""

import hashlib
import os

import numba
from numba.core import config

_FAMILY = os.path.dirname(os.path.abspath(__file__))


def _source_hash():
    """A hash of numba's version and every module of this folder: the compiled
    pass, the formulas it calls and the constants it reads (a new policy or
    a new module needs no edit here). Editing a pure-Python module (options,
    state) compiles afresh too: a minute, once, against a stale cache never."""
    h = hashlib.sha1(numba.__version__.encode())
    for name in sorted(os.listdir(_FAMILY)):
        if name.endswith(".py"):
            h.update(name.encode())
            with open(os.path.join(_FAMILY, name), "rb") as fh:
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
