"""How the planning core is compiled (schedulers/planning/jit.py): once per argument types, said only when it is.

A compile after an install takes about 3 CPU-minutes; loading from numba's
cache, a second. Every scheduler start used to say "compiling the planning
core" (robin guessed from a 5 s timer, which a loaded machine outran), and
numba compiled the pass's largest functions twice: once for a literal
argument (`busy = 0`) and once for its type.
"""

import subprocess
import sys

from numba.core import types

from batloc.schedulers.planning import jit
from batloc.schedulers.planning.planner import load_kernel


def _uncached(fn):
    """A function compiled as the family's are, without the disk cache: each test process compiles it."""
    return jit._Dispatcher(py_func=fn, locals={}, targetoptions=dict(nopython=True, error_model="numpy"))


def _add(x, n):
    return x + n


add = _uncached(_add)


def _count_then_add(x):
    n = 0                   # typed Literal[int](0) first, then int64
    for i in range(3):
        n += i
    return add(x, n)


count_then_add = _uncached(_count_then_add)


def test_a_callee_is_compiled_once_for_its_argument_types_not_for_a_literal():
    assert count_then_add(1.0) == 4.0
    assert add.signatures == [(types.float64, types.int64)]


def test_a_real_compile_is_said_as_it_goes():
    lines = []
    with jit.reporting(lines.append) as took:
        assert count_then_add(2) == 5       # int64 argument: a new compile of both
    assert lines[0].startswith("compiling the planning core once (after an install or a change of its sources; ")
    assert [line.split(" (")[0] for line in lines[1:]] == ["planning core: 1 of %d parts compiled" % len(jit.PARTS),
                                                          "planning core: 2 of %d parts compiled" % len(jit.PARTS)]
    assert took() is not None


def test_loading_the_core_from_the_cache_says_nothing():
    load_kernel(lambda line: None)      # compiled into the cache here if it was not (after a change of sources)
    code = "from batloc.schedulers.planning.planner import warm_up; warm_up(print)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
