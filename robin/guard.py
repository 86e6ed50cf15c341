"""A run's process groups die with the process that started them, however it dies.

robin starts every command in its own session, so that a terminal's Ctrl-C
reaches robin only and robin stops its runs in order. The flip side: when the
process that started them dies without that chance (a Dask worker killed
mid-run, `kill -9`), the engine and the scheduler live on, and a retried run
would share its folder with them. The guard is a small process reading a pipe
whose only writer is the starting process; the kernel closes that end when
the starting process dies, whatever killed it, and the guard then SIGKILLs
every group still registered (SIGKILL: an orphaned engine must not write
outputs over those of the retry).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

# Runs in a fresh interpreter (-I: no site, no user paths): it must start fast and import nothing of ours.
_GUARD = r"""
import os, signal, sys
groups = set()
for line in sys.stdin:
    sign, pgid = line[:1], int(line[1:])
    if sign == "+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


class Guard:
    """One guard process per robin process (or Dask worker), started at the first registration."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._owner = None
        self._lock = threading.Lock()

    def register(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def release(self, pgid: int) -> None:
        """`pgid` was stopped by its starter: the guard forgets it (its number may be reused)."""
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None or self._owner != os.getpid():
                # a forked child must not share its parent's guard: it would never see EOF
                self._proc = subprocess.Popen([sys.executable, "-I", "-c", _GUARD], stdin=subprocess.PIPE,
                                              stdout=subprocess.DEVNULL, text=True, start_new_session=True)
                self._owner = os.getpid()
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self._proc = None  # killed from outside: the next registration starts another


GUARD = Guard()
