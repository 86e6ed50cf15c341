"""The planning core's first compile, said and done once before a sweep's runs.

batloc's planning policies compile their pass with numba the first time they
start after a change of its sources (about a minute; the cache is keyed by a
hash of those sources, ``schedulers/planning/jit.py``). Left to the runs, every
parallel run would compile the same kernel at once, silently, inside its
timeouts. robin loads it once (``planner.warm_up``, in a child process)
before the runs: from the cache that takes seconds; when it takes longer,
robin says what it waits for — loading, or compiling when the cache is cold:
it cannot tell which (a loaded machine took 30 s to load a warm cache), so it
says both, and how long it took at the end.
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
    said = False
    while child.poll() is None:
        if stop.is_set():
            child.kill()
            child.wait()
            return
        if not said and time.monotonic() - started > LOADING:
            said = True
            log("robin: loading the planning core before the runs (compiling it if its cache is cold, after an "
                "install or a change of its sources: one to three minutes on an idle machine, then cached)")
        time.sleep(0.05)
    return_code = child.returncode
    err = child.stderr.read()
    child.stderr.close()
    if stop.is_set():
        return   # the Ctrl-C that stopped the sweep reached the child too: no failure of its own
    if return_code != 0:
        tail = (err.strip().splitlines() or ["no message"])[-1]
        warn(f"robin: warning: loading the planning core failed ({tail}); each run will try itself")
    elif said:
        log(f"robin: planning core ready in {time.monotonic() - started:.0f} s")
