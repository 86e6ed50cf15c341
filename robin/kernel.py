"""The planning core's first compile, said and done once before a sweep's runs.

batloc's planning policies compile their pass with numba the first time they
start after a change of its sources (about a minute; the cache is keyed by a
hash of those sources, ``schedulers/planning/jit.py``). Left to the runs, every
parallel run would compile the same kernel at once, silently, inside its
timeouts. robin loads it once (``planner.warm_up``, in a child process)
before the runs: from the cache that takes seconds; when it takes longer,
robin says that it compiles.
"""

from __future__ import annotations

import subprocess
import sys
import time

PLANNING_POLICIES = {"fcfs", "eft", "lea", "leo", "lem"}
WARM_UP = "from batloc.schedulers.planning.planner import warm_up; warm_up()"
LOADING = 5.0   # seconds: loading the kernel from numba's cache takes less; compiling it, about a minute


def needs_planning_core(schedulers: list[dict]) -> bool:
    return any(s.get("policy") in PLANNING_POLICIES for s in schedulers)


def prepare(schedulers: list[dict], log, warn, stop) -> None:
    """Load or compile the planning core before the runs, if one needs it; say so when it compiles.

    `stop`: robin's stop request (robin.process.STOP); a compile in progress is then abandoned.
    """
    if not needs_planning_core(schedulers):
        return
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", WARM_UP], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    compiled = False
    while child.poll() is None:
        if stop.is_set():
            child.kill()
            child.wait()
            return
        if not compiled and time.monotonic() - started > LOADING:
            compiled = True
            log("robin: compiling the planning core once (after an install or a change of its sources: one to "
                "three minutes, then cached for every later run)")
        time.sleep(0.05)
    return_code = child.returncode
    err = child.stderr.read()
    child.stderr.close()
    if stop.is_set():
        return   # the Ctrl-C that stopped the sweep reached the child too: no failure of its own
    if return_code != 0:
        tail = (err.strip().splitlines() or ["no message"])[-1]
        warn(f"robin: warning: loading the planning core failed ({tail}); each run will try itself")
    elif compiled:
        log(f"robin: planning core compiled in {time.monotonic() - started:.0f} s")
