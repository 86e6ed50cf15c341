"""The engine's end of the ZeroMQ REQ/REP link to the decision process.

As in Batsim 4 the scheduler binds and the engine connects. A monitor socket
lets the engine tell apart "nobody there yet", "something that is not a
ZeroMQ scheduler holds the port" and "the scheduler went away", instead of
blocking forever in recv (``watched_socket``, shared with the staging proxy).
"""

import time

import zmq

from .errors import EngineError
from .watched_socket import POLL_MS, WatchedSocket


# How long a scheduler may think over one message before the run ends (it is hung or lost):
# far beyond a re-plan of a long saturated queue, far below a week of waiting. --reply-timeout 0 lifts it.
REPLY_TIMEOUT = 600.0


class SchedulerLink(WatchedSocket):
    def __init__(self, endpoint, ready_timeout=30.0, reply_timeout=REPLY_TIMEOUT, stop=None):
        self.endpoint = endpoint
        self.ready_timeout = ready_timeout
        self.reply_timeout = reply_timeout
        self.stop = stop  # signals.StopOnSignal: a signal ends the wait
        self.ctx = zmq.Context()
        super().__init__(self.ctx, zmq.REQ)
        self.sock.setsockopt(zmq.RCVTIMEO, POLL_MS)
        self.answered = False
        self.connect(endpoint, lambda e: EngineError(f"invalid socket endpoint {endpoint!r}: {e}"))

    def exchange(self, payload, now):
        """Send one request and return the reply's bytes, or raise EngineError."""
        self.sock.send(payload)  # copying is far cheaper than zero-copy for small frames
        if self.answered:
            # Fast path: the scheduler usually answers well within one poll period.
            try:
                return self.sock.recv()
            except zmq.Again:
                pass
        return self._wait_reply(now)

    def _wait_reply(self, now):
        started = time.monotonic()

        def check():
            # A ZeroMQ peer that has not answered yet is a scheduler starting
            # (loading or compiling its planning core can take minutes): it
            # gets the reply timeout; anything else, the ready timeout.
            limit = self.reply_timeout if self.answered or self.handshake_done else self.ready_timeout
            if self.stop is not None:
                self.stop.check(now)
            if self.handshake_failed:
                raise EngineError(
                    f"the program listening on {self.endpoint} does not speak ZeroMQ "
                    "(socket already in use by another program?)")
            if self.disconnected and self.reached:
                # From the first message on: a scheduler that dies over SIMULATION_BEGINS is seen at once too.
                raise EngineError(
                    f"the scheduler disconnected from {self.endpoint} at simulated time {now:.6f} "
                    "while the engine waited for its answer: it died or crashed (see its output)")
            if limit is not None and time.monotonic() - started > limit:
                if not self.answered:
                    if self.connected:
                        raise EngineError(
                            f"something accepted the connection on {self.endpoint} but sent no Batsim "
                            f"answer within {limit:g} s (another program on that port, or a scheduler "
                            "that hangs?)")
                    raise EngineError(
                        f"no scheduler answered on {self.endpoint} within {limit:g} s "
                        "(is it running, and bound to that endpoint? see --ready-timeout)")
                raise EngineError(
                    f"the scheduler did not answer within {limit:g} s at simulated time {now:.6f} "
                    "(see --reply-timeout)")

        raw = self.wait(check)
        self.answered = True
        return raw

    @property
    def reached(self):
        """Whether a scheduler took the engine's first message (its ZeroMQ handshake succeeded, or it answered)."""
        return self.answered or self.handshake_done

    def close(self):
        super().close()
        self.ctx.term()
