"""How the planning core is compiled: numba, cached on disk per version of its source.

Numba caches a compiled function next to its own source's timestamp only: a
change in a function it calls from another file (a policy's formula, say),
or in a module constant it reads, would silently reuse the stale machine
code. So the cache directory is named after a hash of every source file of
the planning family, and a change anywhere in it compiles afresh once.

The cache lives in ``$BATLOC_NUMBA_CACHE`` if set, else under the user's cache
directory (``$XDG_CACHE_HOME`` or ``~/.cache``) in ``batloc/numba/<hash>``.
``scripts/install.sh`` compiles once at install time (``warm_up``), so that a
scheduler starts from the cache. ``reporting`` says when numba really
compiles (loading from the cache says nothing) and how far it is.
"""

import hashlib
import os
import threading
import time
from contextlib import contextmanager

import numba
from llvmlite import ir
from numba.core import cgutils, config, event, types
from numba.extending import intrinsic
from numba.core.registry import CPUDispatcher

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


class _Dispatcher(CPUDispatcher):
    """numba's dispatcher, compiling one machine code per argument *types*.

    While numba types a caller, a variable that starts as a constant
    (``busy = 0``, then ``busy += 1``) is first seen as that literal, and numba
    compiles the callee for ``Literal[int](0)`` before it compiles it again
    for ``int64``: the pass's largest functions were compiled twice (and
    loaded twice from the cache), a third of the install's compile time. No
    code of theirs branches on a literal, so the general specialisation
    computes what the literal one did, and the decisions are unchanged."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                         {k: types.unliteral(v) for k, v in kws.items()})


# The family's functions that numba compiles as functions of their own (the
# inlined ones are compiled into their callers): the parts of a compile.
PARTS = []


def _compiled(fn, **options):
    disp = _Dispatcher(py_func=fn, locals={}, targetoptions=dict(
        nopython=True, boundscheck=None, error_model="numpy", nogil=True, **options))
    disp.enable_caching()
    if options.get("inline") != "always":
        PARTS.append(disp)
    return disp


def njit(fn):
    """Compiled, cached; IEEE arithmetic as in Python (no fastmath), no bounds checks."""
    return _compiled(fn)


def inline_late(fn):
    """As ``njit``, compiled once on its own and inlined into its callers by
    LLVM (``forceinline``): for a large helper called from several places, which
    numba's own inlining (``inline``) copies and types again at each call site
    (its whole body, with the helpers it inlines itself): minutes of compile."""
    return _compiled(fn, forceinline=True)


def inline(fn):
    """As ``njit``, and inlined into its callers: numba calls between compiled
    functions are not inlined by LLVM, and a call costs about 10 ns, more than
    the small helpers of the hot loops (a comparison, a formula) themselves."""
    return _compiled(fn, inline="always")


@intrinsic
def cycles(typingctx):
    """The CPU's cycle counter (LLVM's readcyclecounter: rdtsc on x86), for the pass's statistics of where
    its time goes: a few reads a pass, ~20 ns each, where the thread CPU clock is a system call."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


# What a compile costs, said before it starts: measured on the 2-core development
# machine (docs/performance.md, "The first hour").
COMPILE_COST = "about 3 CPU-minutes"


class _Progress(event.Listener):
    """numba's compile events for the family's functions: it fires none for a
    function loaded from the cache, so the first one means a real compile."""

    def __init__(self, say):
        self.say = say
        self.started = None
        self.done = set()
        self.lock = threading.Lock()

    def on_start(self, ev):
        if not isinstance(ev.data["dispatcher"], _Dispatcher):
            return
        with self.lock:
            if self.started is None:
                self.started = time.monotonic()
                self.say(f"compiling the planning core once (after an install or a change of its sources; "
                         f"{COMPILE_COST}, then cached for every later run)")

    def on_end(self, ev):
        disp = ev.data["dispatcher"]
        if not isinstance(disp, _Dispatcher):
            return
        with self.lock:
            self.done.add(disp)
            self.say(f"planning core: {len(self.done)} of {len(PARTS)} parts compiled "
                     f"({disp.py_func.__name__}, {time.monotonic() - self.started:.0f} s)")


@contextmanager
def reporting(say):
    """Within: every compile of the family's functions said on `say` (a
    function of one line), in any thread; nothing when all load from the cache.
    Yields a function telling how many seconds compiling took (None: none)."""
    progress = _Progress(say)
    event.register("numba:compile", progress)
    try:
        yield lambda: None if progress.started is None else time.monotonic() - progress.started
    finally:
        event.unregister("numba:compile", progress)
