"""The supervisor of an engine that runs its scheduler in its own process (``--in-process``).

Called in the engine's thread (``in_process``), a scheduler that hangs holds
the engine with it, and one that segfaults, calls ``os._exit`` or exhausts
the memory takes it down. So ``batloc-batsim --in-process`` forks before it
does anything else: the child is the engine, the parent watches it and
gives the run the ending a ZeroMQ scheduler's failure would give it, within
0.2 s:
- a call (or the scheduler's loading) that outlives ``--reply-timeout``, or
  a SIGTERM, SIGINT or SIGHUP that comes while the engine is inside a call:
  the engine is killed and its outputs rebuilt from the run's journal
  (``recovery``), which holds every event up to the checkpoint written just
  before that call — the very files the engine writes when a signal stops
  it there; a signal outside a call is the engine's own to act on, as ever;
- an engine that died by itself (the scheduler segfaulted, exited, was
  killed for its memory; or the engine's own crash): the same rebuild, and
  one line saying who died where.
The parent's exit status is the engine's, or the one the engine would have
had (1 for an error, 128 + the signal's number); the engine dies with it
(``PR_SET_PDEATHSIG``), so a kill -9 of the command kills the run, whose
journal `--recover` replays. The engine stamps each call
in memory both processes share (`Stamp`: when it began, at what simulated
time), which costs two stores a message; the parent polls it five times a
second and otherwise sleeps.
"""

import mmap
import os
import signal
import struct
import sys
import time

from .export import absolute
from . import signals
from .journal import Unreadable, path_of

POLL = 0.2
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How long the engine may take to act on a signal that came outside a call before it is taken as stuck
SIGNAL_GRACE = 10.0
LOADING = -1.0
# A scheduler loading in Python takes a signal at once (it loads with the signals unblocked): the engine says so
# itself unless it is stuck in a long call (numba compiling), which the supervisor then ends
LOADING_GRACE = 1.0


class Stamp:
    """When the engine's current call into its scheduler began (0: none) and at what simulated time (LOADING:
    the scheduler is being loaded), in memory shared with the supervisor (made before the fork)."""

    FIELDS = struct.Struct("dd")
    START = struct.Struct("d")

    def __init__(self):
        self.memory = mmap.mmap(-1, self.FIELDS.size)

    def call(self, now):
        self.FIELDS.pack_into(self.memory, 0, time.monotonic(), now)

    def loading(self):
        self.FIELDS.pack_into(self.memory, 0, time.monotonic(), LOADING)

    def idle(self):
        self.START.pack_into(self.memory, 0, 0.0)

    def read(self):
        return self.FIELDS.unpack_from(self.memory, 0)


def supervise(args):
    """Fork. In the child (the engine) return its Stamp; in the parent, supervise it and return its exit status."""
    stamp = Stamp()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    _adopt_orphans()
    pid = os.fork()
    if pid == 0:
        _die_with(parent)
        signals.HERALD = False   # this supervisor tells a signal that ends the engine while it loads
        return None, stamp
    status = Supervisor(pid, stamp, args).run()
    _end_orphans()
    return status, None


def _adopt_orphans():
    """Processes the scheduler started and the engine left when it died come to this process, not to init
    (PR_SET_CHILD_SUBREAPER, Linux), so that they end with the run (`_end_orphans`)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1)   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _end_orphans():
    from batloc.processes import end_descendants

    pids = end_descendants()
    if pids:
        print(f"batloc-batsim: notice: the in-process scheduler left {len(pids)} process(es) running after the "
              f"engine ended (pid {', '.join(map(str, pids[:3]))}{', ...' if len(pids) > 3 else ''}): ended with "
              "it", file=sys.stderr, flush=True)


def _die_with(parent):
    """The engine dies with its supervisor (the command a user or robin started and may kill with -9), its
    journal left for `--recover` (Linux; elsewhere it finishes its run)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:   # the supervisor died before the call
        os._exit(128 + signal.SIGKILL)


class Supervisor:
    def __init__(self, pid, stamp, args):
        self.pid = pid
        self.stamp = stamp
        self.name = args.in_process
        self.prefix = args.export
        self.shown = args.export
        self.journal = None if args.no_journal else path_of(absolute(args.export), pid)
        self.limit = args.reply_timeout or None
        self.signum = None
        self.signalled_at = None

    def run(self):
        for sig in SIGNALS:
            signal.signal(sig, self._on_signal)
        last_start = None
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return self._ended(os.waitstatus_to_exitcode(status))
            start, now = self.stamp.read()
            if start:
                if self.signum is not None and not self._loading_takes_it(now):
                    name = signal.Signals(self.signum).name
                    at = "before the simulation started" if now == LOADING else f"at t={now:.6f}"
                    return self._stop(f"interrupted by {name} {at}", 128 + self.signum, error=False)
                # two reads agreeing: a stamp read while the engine wrote it is not taken for an old call
                if self.limit is not None and start == last_start and time.monotonic() - start > self.limit:
                    what = "load" if now == LOADING else "answer"
                    when = "" if now == LOADING else f" at simulated time {now:.6f}"
                    return self._stop(f"the in-process scheduler {self.name} did not {what} within {self.limit:g} s"
                                      f"{when} (see --reply-timeout)", 1)
            elif self.signalled_at is not None and time.monotonic() - self.signalled_at > SIGNAL_GRACE:
                name = signal.Signals(self.signum).name
                return self._stop(f"interrupted by {name}; the engine did not stop within {SIGNAL_GRACE:g} s",
                                  128 + self.signum, error=False)
            last_start = start
            time.sleep(POLL)

    def _loading_takes_it(self, now):
        """Whether the engine, loading its scheduler, may still act on the signal itself (LOADING_GRACE)."""
        return now == LOADING and time.monotonic() - self.signalled_at < LOADING_GRACE

    def _on_signal(self, signum, frame):
        """Pass the signal on (a terminal's Ctrl-C reaches both; `kill` this process only): the engine acts on
        it at its next instant, unless it is inside a call, which the loop then ends."""
        if self.signum is None:
            self.signum, self.signalled_at = signum, time.monotonic()
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def _stop(self, why, status, error=True):
        """Kill the engine (it is inside a call it will not leave) and rebuild its outputs."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        return self._report(why, status, error)

    def _ended(self, code):
        """The engine ended: by itself, outputs written (it said how), or killed, its journal left behind."""
        left = self.journal is not None and os.path.exists(self.journal)
        if code >= 0 and not left:
            return code
        start, now = self.stamp.read()
        how = _status(code)
        if self.signum is not None and code == -self.signum:   # while loading its inputs, it dies by them
            name = signal.Signals(self.signum).name
            at = "before the simulation started" if not start and now == 0 else f"at t={now:.6f}"
            return self._report(f"interrupted by {name} {at}", 128 + self.signum, error=False)
        if not start:
            why = f"the engine died at t={now:.6f} ({how})" if now > 0 else f"the engine died ({how})"
        elif now == LOADING:
            why = f"the in-process scheduler {self.name} did not start ({how})"
        elif code < 0:
            why = f"the in-process scheduler {self.name} died at simulated time {now:.6f} ({how})"
        else:
            why = f"the in-process scheduler {self.name} stopped at simulated time {now:.6f} ({how})"
        return self._report(why, 1 if self.signum is None else 128 + self.signum)

    def _report(self, why, status, error=True):
        from .recovery import recover_one

        if self.journal is None:
            outputs = "no output written (--no-journal)"
        elif not os.path.exists(self.journal):
            outputs = f"nothing simulated, no output written (earlier {self.shown}_*.csv, if any, kept)"
        else:
            try:
                done = recover_one(absolute(self.prefix), self.journal, force=True)
            except Unreadable as e:
                outputs = f"no output written: the journal cannot be replayed ({e})"
            else:
                damaged = f" (warning: its journal was {done.damage})" if done.damage else ""
                outputs = (f"outputs written to {self.shown}_*.csv, {done.unfinished} job(s) unfinished{damaged}"
                           if done.written
                           else f"nothing simulated, no output written (earlier {self.shown}_*.csv, if any, kept)")
        print(f"batloc-batsim: {'error: ' if error else ''}{why}; {outputs}", file=sys.stderr, flush=True)
        return status


def _status(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (": out of memory?" if -code == signal.SIGKILL else "")
    return f"exit status {code}"
