"""The engine's end of the link when it runs the decision process itself (``--in-process``).

Batsim 5 can load a decision component as a library; here the engine starts
a pybatsim scheduler, unchanged, as its own child
(``schedulers/in_process.py``: no ZeroMQ, no port, no second command) and
exchanges each message's bytes with it over a pair of pipes. The bytes are
those of a ZeroMQ run (same encoder and decoder on both ends), so the outputs
are too.

The child is a process and not a call in the engine's thread so that the
engine keeps every guarantee of the ZeroMQ mode whatever the scheduler does:
while it waits for an answer it acts on SIGTERM, SIGINT and SIGHUP and on the
reply timeout (``--reply-timeout``, loading included), and a scheduler that
raises, exits, segfaults or is killed for its memory ends the run with the
engine's one line at that simulated time, outputs written, as a scheduler
that died over ZeroMQ does. Its traceback, if any, is printed first by the
scheduler's own ``sys.excepthook``, as its process would; the engine then
ends the child (SIGKILL if it is inside a call, else the closed pipe tells it).
"""

import json
import os
import select
import signal
import subprocess
import sys
import time

from batloc.schedulers.pipes import ANSWER, FAILED, LOAD_ERROR, MESSAGE, READY, Frames, PeerGone

from .errors import EngineError
from .network import REPLY_TIMEOUT
from .watched_socket import POLL_MS

# How long a scheduler told that the run is over (its pipe closed) may take to leave (flushing its files)
LEAVE_GRACE = 10.0


class InProcessLink:
    def __init__(self, scheduler, options_text="{}", verbosity="warning", timed=False, reply_timeout=REPLY_TIMEOUT,
                 stop=None):
        self.name = scheduler
        self.reply_timeout = reply_timeout
        self.stop = stop
        self.timed = timed
        self.cpu = None          # CPU seconds of the scheduler's process, known once it ended (--time-scheduler)
        self.reached = False     # whether the scheduler took the engine's first message
        self.busy = False        # inside a call: a scheduler told to leave then may never read it
        self.end_error = None    # what the scheduler did wrong after the simulation ended, if anything
        try:
            json.loads(options_text)
        except json.JSONDecodeError as e:
            raise EngineError(f"--scheduler-options is not JSON ({e.msg} at column {e.colno}): {options_text!r}; "
                              "options are a JSON object such as '{\"cache\": \"lru\"}'") from None
        to_child, to_engine = os.pipe(), os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "batloc.schedulers.in_process", str(to_child[0]), str(to_engine[1]),
                 str(os.getpid()), scheduler, options_text, verbosity],
                pass_fds=(to_child[0], to_engine[1]), stdin=subprocess.DEVNULL)
        except OSError as e:
            for fd in (*to_child, *to_engine):
                os.close(fd)
            raise EngineError(f"cannot start the in-process scheduler {scheduler}: {e.strerror or e}") from None
        os.close(to_child[0])
        os.close(to_engine[1])
        self.frames = Frames(to_engine[0], to_child[1])
        self.poller = select.poll()
        self.poller.register(to_engine[0], select.POLLIN)
        try:
            self._loaded()
        except BaseException:
            self.close()
            raise

    def _loaded(self):
        self.busy = True     # a scheduler hung while loading is killed at once
        try:
            kind, raw = self.frames.read(self._waiter(None))
        except PeerGone:
            status = self._reap()
            raise EngineError(f"the in-process scheduler {self.name} did not start ({_status(status)})") from None
        if kind == LOAD_ERROR:
            raise EngineError(f"--in-process: {raw.decode(errors='replace')}")
        if kind != READY:
            raise EngineError(f"the in-process scheduler {self.name} did not start (it sent {kind!r})")
        self.busy = False

    def exchange(self, payload, now):
        """Run the scheduler over the message `payload` (bytes); return its answer's bytes, or raise EngineError."""
        self.busy = True
        try:
            self.frames.write(MESSAGE, payload)
            self.reached = True
            kind, raw = self.frames.read(self._waiter(now))
        except PeerGone:
            raise EngineError(self._gone(now)) from None
        if kind == ANSWER:
            self.busy = False
            return raw
        if kind == FAILED:
            raise EngineError(f"the in-process scheduler {self.name} failed at simulated time {now:.6f}: "
                              f"{raw.decode(errors='replace')} (see above)")
        raise EngineError(f"the in-process scheduler {self.name} sent a frame of kind {kind!r} at simulated time "
                          f"{now:.6f}")

    def _waiter(self, now):
        """What the pipe's reader calls before a read that would block: wait for the answer, polling, and give up
        on a signal (`now` None: while loading, the main thread's signal handler acts) or the reply timeout."""
        started = time.monotonic()
        limit = self.reply_timeout or None

        def wait():
            while not self.poller.poll(POLL_MS):
                if self.stop is not None and now is not None:
                    self.stop.check(now)
                if limit is not None and time.monotonic() - started > limit:
                    what = "load" if now is None else "answer"
                    when = "" if now is None else f" at simulated time {now:.6f}"
                    raise EngineError(f"the in-process scheduler {self.name} did not {what} within {limit:g} s{when} "
                                      "(see --reply-timeout)")

        return wait

    def _gone(self, now):
        """Why the scheduler's end of the pipe closed during a call: it exited or was killed."""
        status = self._reap()
        if status is not None and status < 0:
            return f"the in-process scheduler {self.name} died at simulated time {now:.6f} ({_status(status)})"
        return f"the in-process scheduler {self.name} stopped at simulated time {now:.6f} ({_status(status)})"

    def _reap(self, grace=LEAVE_GRACE):
        """Wait (up to `grace` s, then SIGKILL) for the child to end; its exit code (negative: the signal)."""
        proc = self.proc
        if proc is None:
            return None
        if proc.returncode is not None:
            return proc.returncode
        deadline = time.monotonic() + grace
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if self.timed:
            self.cpu = usage.ru_utime + usage.ru_stime
        return proc.returncode

    def close(self):
        """End the child: at once if it is inside a call (hung, or the run stopped under it), else by closing its
        pipe, which it reads as the end of the run."""
        if self.proc is None:
            return
        if self.busy and self.proc.returncode is None:
            try:
                self.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.frames.close()
        code = self._reap()
        if code and not self.busy and self.end_error is None:
            self.end_error = EngineError(f"the in-process scheduler {self.name} ended with {_status(code)} after "
                                         "the simulation (see above)")
        self.proc = None


def _status(code):
    if code is None:
        return "its end unknown"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (": out of memory?" if -code == signal.SIGKILL else "")
    return f"exit status {code}"
