"""Stopping on SIGTERM, SIGINT or SIGHUP without losing what was simulated.

SimGrid runs the simulation in its own threads, inside a C++ call of the main
thread, so a Python signal handler would only run once the whole simulation
returned, and a KeyboardInterrupt could surface inside SimGrid. Instead the
three signals are blocked in every thread (set before any thread exists, so
SimGrid's and ZeroMQ's threads inherit it) and one watcher thread takes them
with `sigwait`:

- before the simulation starts, it interrupts the main thread, which is
  loading inputs in plain Python (`Interrupted` is raised there, once: a
  second signal while the first unwinds changes nothing); should the
  main thread not take it within `GRACE` seconds (stuck in a call that waits
  without holding the interpreter), the watcher ends the process itself, in
  the same one line (nothing is written before the inputs are loaded). A long
  C call that holds the interpreter (SimGrid building a platform of a million
  hosts) leaves no thread to run Python: around it (`ending_at_once`) the
  signals take their default action and end the process at once, and a
  herald process writes the line (in ``--in-process`` runs the supervisor
  writes it). The JSON parser is no such call: it runs the duplicate-key
  check, Python, for every object;
- once it runs, it only records the signal; the simulation stops at its next
  safe point (the next instant of its loop, or the next poll while waiting for
  the scheduler) and the outputs are written as after any fatal error.

A scheduler in the engine's process (``--in-process``) runs with the signals
unblocked, in the simulation's thread and while it loads (`unblocked`), so
that the processes it starts do not inherit them blocked (a child that
outlives the run with SIGTERM blocked can only be killed with -9), nor the
threads it starts; a signal that reaches one of those threads is counted
through Python's wakeup file, which the watcher reads five times a second
(it costs the calls nothing). A child forked from any thread gets the default
handlers and mask back (`os.register_at_fork`).
"""

import _thread
import faulthandler
import os
import select
import signal
import sys
import threading
from contextlib import contextmanager

from .errors import Interrupted

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How long the main thread may take to act on a signal while the inputs load before the watcher ends the process
GRACE = 2.0
# How often the watcher reads the signals that reached a thread with them unblocked (seconds)
WAKEUP_POLL = 0.2


class StopOnSignal:
    def __init__(self):
        self.signum = None            # the first signal received, once the simulation runs
        self._running = False
        self._loading = True          # nothing written yet: the watcher may end the process itself
        self._taken = threading.Event()
        self._lock = threading.RLock()   # the handler may run in the main thread while it holds it
        self._wakeup = None
        if threading.current_thread() is not threading.main_thread():
            return   # only the main thread may handle signals: leave them to the caller
        for sig in SIGNALS:
            signal.signal(sig, self._handler)   # what `interrupt_main` (or a call's thread) triggers
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._wakeup = read
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        os.register_at_fork(after_in_child=_defaults_in_child)
        threading.Thread(target=self._watch, name="batloc-signals", daemon=True).start()

    def _watch(self):
        while True:
            sig = signal.sigtimedwait(SIGNALS, WAKEUP_POLL)
            # CPython returns an uninitialised siginfo when a stop/continue (SIGSTOP, SIGCONT) interrupts the
            # wait past its deadline: a number that is none of ours is a timeout, not a signal
            if sig is None or sig.si_signo not in SIGNALS:
                self._drain()
                continue
            sig = sig.si_signo
            with self._lock:
                if self._running:
                    self._record(sig)
                    continue
                _thread.interrupt_main(sig)
                loading = self._loading
            if loading and not self._taken.wait(GRACE):
                name = signal.Signals(sig).name
                print(f"batloc-batsim: interrupted by {name} before the simulation started (the inputs were still "
                      "loading); no output written", file=sys.stderr, flush=True)
                os._exit(128 + sig)

    def _handler(self, signum, frame):
        """The Python handler: in the main thread, raise before the run; during it, only record (a scheduler's
        thread that took the signal makes it pending there)."""
        with self._lock:
            if self._running:
                self._record(signum)
                return
            if self._taken.is_set():   # a second signal while the first unwinds: raised in its except clause, it
                return                 # printed a traceback in place of the first's line
            self._taken.set()
        raise Interrupted(signum)

    def _record(self, sig):
        if self.signum is None:
            self.signum = sig

    def inputs_loaded(self):
        """From now on the main thread runs Python the watcher can interrupt (and files may be open)."""
        with self._lock:
            self._loading = False

    def simulation_starts(self):
        """From now on a signal is a request for the simulation to stop at its next safe point."""
        with self._lock:
            self._running = True
            self._loading = False

    def unblocked(self):
        """A context in which the signals are unblocked in this thread (an in-process scheduler loading)."""
        return _Unblocked(self)

    def unblock_here(self):
        """For good, in this thread (the simulation's, which calls an in-process scheduler)."""
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)

    def _drain(self):
        """Signals that reached a thread with them unblocked, as Python's wakeup file counted them."""
        if self._wakeup is None:
            return
        try:
            data = os.read(self._wakeup, 64)
        except BlockingIOError:
            return
        for sig in data:
            if sig in SIGNALS:
                with self._lock:
                    self._record(signal.Signals(sig))

    def check(self, now):
        """Raise `Interrupted` if a signal came; called by the simulation at its safe points."""
        if self.signum is not None:
            raise Interrupted(self.signum, now)


# Whether a signal that ends the process inside `ending_at_once` is told by a herald (False under the in-process
# mode's supervisor, which tells it itself)
HERALD = True


@contextmanager
def ending_at_once(what="loading its inputs"):
    """While inside, the three signals end the process at once by their default action (see above): for
    loading inputs in one long C call, before anything is written. Only in the main thread.

    Its line (`what`: what was under way) is then written by a herald, a process forked for the call: the
    signal's C handler (``faulthandler``, which needs no interpreter) writes to the herald's pipe for that
    signal before the default action, and the herald says which signal ended the engine; a call that returns
    closes the pipes and the herald ends in silence, as it does when the engine is killed with -9."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_DFL) for sig in SIGNALS}
    herald = _Herald(what) if HERALD else None
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # blocked in the engine, not in a supervisor or --recover
        if herald is not None:
            herald.dismiss()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Herald:
    """The process that writes the engine's line when a signal ends it inside `ending_at_once` (above)."""

    def __init__(self, what):
        self.pipes = {sig: os.pipe() for sig in SIGNALS}
        sys.stderr.flush()
        try:
            self.pid = os.fork()
        except OSError:   # no process to spare: the signal ends the engine without its line, as before
            self.pid = None
        if self.pid == 0:
            self._serve(what)   # never returns
        for sig, (read, write) in self.pipes.items():
            os.close(read)
            if self.pid is not None:
                faulthandler.register(sig, file=write, all_threads=False, chain=True)

    def _serve(self, what):
        try:
            for sig in SIGNALS:   # a signal to the engine's whole group is for the engine: the herald tells it
                signal.signal(sig, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
            reads = {}
            for sig, (read, write) in self.pipes.items():
                os.close(write)
                reads[read] = sig
            while reads:
                for fd in select.select(list(reads), [], [])[0]:
                    if os.read(fd, 65536):
                        name = signal.Signals(reads[fd]).name
                        os.write(2, f"batloc-batsim: interrupted by {name} before the simulation started ({what}); "
                                    "no output written\n".encode())
                        os._exit(0)
                    del reads[fd]   # closed: the call returned, or the engine was killed without a signal of ours
        finally:
            os._exit(0)

    def dismiss(self):
        for sig, (_, write) in self.pipes.items():
            if self.pid is not None:
                faulthandler.unregister(sig)
            os.close(write)
        if self.pid is not None:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass


class _Unblocked:
    __slots__ = ("stop",)

    def __init__(self, stop):
        self.stop = stop

    def __enter__(self):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)

    def __exit__(self, *exc):
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        self.stop._drain()
        return False


def _defaults_in_child():
    """A process forked by the engine (a scheduler's worker) handles the three signals as any process does."""
    try:
        signal.set_wakeup_fd(-1)
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
    except ValueError:   # not the main thread: cannot happen after a fork, but a hook must never fail
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
