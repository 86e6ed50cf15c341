"""Stopping on SIGTERM, SIGINT or SIGHUP without losing what was simulated.

SimGrid runs the simulation in its own threads, inside a C++ call of the main
thread, so a Python signal handler would only run once the whole simulation
returned, and a KeyboardInterrupt could surface inside SimGrid. Instead the
three signals are blocked in every thread (set before any thread exists, so
SimGrid's and ZeroMQ's threads inherit it) and one watcher thread takes them
with `sigwait`:

- before the simulation starts, it interrupts the main thread, which is
  loading inputs in plain Python (`Interrupted` is raised there);
- once it runs, it only records the signal; the simulation stops at its next
  safe point (the next instant of its loop, or the next poll while waiting for
  the scheduler) and the outputs are written as after any fatal error.
"""

import _thread
import signal
import threading

from .errors import Interrupted

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class StopOnSignal:
    def __init__(self):
        self.signum = None            # the first signal received, once the simulation runs
        self._running = False
        self._lock = threading.Lock()
        if threading.current_thread() is not threading.main_thread():
            return   # only the main thread may handle signals: leave them to the caller
        for sig in SIGNALS:
            signal.signal(sig, _raise_interrupted)   # what `interrupt_main` triggers in the main thread
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        threading.Thread(target=self._watch, name="batloc-signals", daemon=True).start()

    def _watch(self):
        while True:
            sig = signal.sigwait(SIGNALS)
            with self._lock:
                if self._running:
                    if self.signum is None:
                        self.signum = sig
                else:
                    _thread.interrupt_main(sig)

    def simulation_starts(self):
        """From now on a signal is a request for the simulation to stop at its next safe point."""
        with self._lock:
            self._running = True

    def check(self, now):
        """Raise `Interrupted` if a signal came; called by the simulation at its safe points."""
        if self.signum is not None:
            raise Interrupted(self.signum, now)


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)
