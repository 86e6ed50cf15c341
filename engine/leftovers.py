"""What an in-process scheduler leaves running once the run is over: ended with the run, in one line.

A scheduler in the engine's process (``--in-process``) may start a thread that
never ends (not a daemon) or a process (a worker pool, a helper command). The
first kept ``batloc-batsim`` alive after "simulation ended", so that robin
took a finished run for a timeout; the second outlived the run. Once the
outputs are written and the run's line is out, the engine ends both: its
processes below it are killed (SIGKILL: they are the scheduler's, and the run
is over), and the engine exits without waiting for the threads. A process that
escaped by becoming the child of init is beyond it; the supervisor (a child
subreaper) takes those of a run that died.
"""

import os
import sys
import threading

from batloc.processes import end_descendants


def end_leftovers(status):
    """End what the scheduler left; return `status`, or exit with it when threads are left to drop."""
    threads = sorted(t.name for t in threading.enumerate()
                     if t.is_alive() and not t.daemon and t is not threading.main_thread())
    pids = end_descendants()
    if not threads and not pids:
        return status
    parts = []
    if threads:
        parts.append(f"{len(threads)} thread(s) ({_names(threads)})")
    if pids:
        parts.append(f"{len(pids)} process(es) (pid {_names([str(p) for p in pids])})")
    print(f"batloc-batsim: notice: the in-process scheduler left {' and '.join(parts)} running after the run: "
          "ended with it", file=sys.stderr, flush=True)
    if threads:
        sys.stdout.flush()
        os._exit(status)   # Python would wait for those threads for ever
    return status


def _names(items, shown=3):
    return ", ".join(items[:shown]) + (", ..." if len(items) > shown else "")
