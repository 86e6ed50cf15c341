"""The planning core's first compile, said and done once before a sweep's runs.

batloc's planning policies compile their pass with numba the first time they
start after a change of its sources (about 3 CPU-minutes; the cache is keyed
by a hash of those sources, ``schedulers/planning/jit.py``). Left to the runs,
every parallel run would compile the same kernel at once, inside its
timeouts. robin loads it once (``planner.warm_up``, in a child process)
before the runs: from the cache that takes a second or two and says nothing;
a real compile is said by the child as it goes (numba's own compile events,
``jit.reporting``), and robin passes its lines on.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

PLANNING_POLICIES = {"fcfs", "eft", "lea", "leo", "lem"}
# its lines on stdout, its errors on stderr
WARM_UP = ("from batloc.schedulers.planning.planner import warm_up; "
           "warm_up(lambda line: print(line, flush=True))")


def needs_planning_core(schedulers: list[dict]) -> bool:
    return any(s.get("policy") in PLANNING_POLICIES for s in schedulers)


def prepare(schedulers: list[dict], log, warn, stop) -> None:
    """Load or compile the planning core before the runs, if one needs it; a compile is said as it goes.

    `stop`: robin's stop request (robin.process.STOP); a compile in progress is then abandoned.
    """
    if not needs_planning_core(schedulers):
        return
    child = subprocess.Popen([sys.executable, "-c", WARM_UP], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    errors = []

    def relay():
        for line in child.stdout:
            if not stop.is_set():
                log(f"robin: {line.rstrip()}")
        errors.extend(child.stderr.read().strip().splitlines())

    reader = threading.Thread(target=relay, name="planning-core", daemon=True)
    reader.start()
    while child.poll() is None:
        if stop.is_set():
            child.kill()
            child.wait()
            break
        time.sleep(0.05)
    reader.join()
    child.stdout.close()
    child.stderr.close()
    if stop.is_set():
        return   # the Ctrl-C that stopped the sweep reached the child too: no failure of its own
    if child.returncode != 0:
        tail = (errors or ["no message"])[-1]
        warn(f"robin: warning: loading the planning core failed ({tail}); each run will try itself")
