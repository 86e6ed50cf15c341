"""What an in-process scheduler leaves running once the run is over: ended with the run, in one line.

A scheduler in the engine's process (``--in-process``) may start a thread that
never ends (not a daemon) or a process (a worker pool, a helper command). The
first kept ``batloc-batsim`` alive after "simulation ended", so that robin
took a finished run for a timeout (the engine now leaves by ``os._exit``,
``cli._leave``, whatever its threads); the second outlived the run. Once the
outputs are written and the run's line is out, the engine kills the processes
below it (SIGKILL: they are the scheduler's, and the run is over) and names
what was left. A process that escaped by becoming the child of init is beyond
it; the supervisor (a child subreaper) takes those of a run that died.
"""

import sys
import threading

from batloc.processes import end_descendants


def end_leftovers():
    """Kill the processes below this one, and say in one line what the scheduler left running."""
    threads = sorted(t.name for t in threading.enumerate()
                     if t.is_alive() and not t.daemon and t is not threading.main_thread())
    pids = end_descendants()
    if not threads and not pids:
        return
    parts = []
    if threads:
        parts.append(f"{len(threads)} thread(s) ({_names(threads)})")
    if pids:
        parts.append(f"{len(pids)} process(es) (pid {_names([str(p) for p in pids])})")
    print(f"batloc-batsim: notice: the in-process scheduler left {' and '.join(parts)} running after the run: "
          "ended with it", file=sys.stderr, flush=True)


def _names(items, shown=3):
    return ", ".join(items[:shown]) + (", ..." if len(items) > shown else "")
