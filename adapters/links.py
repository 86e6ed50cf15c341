"""The proxy's two ZeroMQ ends, each watched so that a dead peer is an error, not a hang.

Toward the engine the proxy binds a REP socket (it stands where the engine
expects a scheduler); toward the wrapped scheduler it connects a REQ socket
(the scheduler binds, as every Batsim 4 decision process does). Both are
``batloc.engine.watched_socket`` sockets, as the engine's own link, so a peer
that went away is told apart from one that is thinking; the wrapped
scheduler's process, when the proxy started it, is polled too.
"""

import errno
import time

import zmq

from batloc.engine.watched_socket import POLL_MS, WatchedSocket

from .errors import ProxyError


class EngineSide(WatchedSocket):
    """Where the engine connects: a bound REP socket."""

    def __init__(self, ctx, endpoint, child=None):
        super().__init__(ctx, zmq.REP)
        self.endpoint = endpoint
        self.child = child
        self.received = False
        try:
            self.sock.bind(endpoint)
        except zmq.ZMQError as e:
            self.close()
            if e.errno == errno.EADDRINUSE:
                raise ProxyError(f"cannot listen on {endpoint}: address already in use "
                                 "(another scheduler or proxy on that port?)") from None
            raise ProxyError(f"cannot listen on {endpoint}: {e}") from None

    def recv(self, now):
        def check():
            if self.child is not None and self.child.poll() is not None:
                raise ProxyError(f"the wrapped scheduler exited (status {self.child.returncode}) while the "
                                 f"proxy waited for the engine at t={now:.6f}")
            if self.received and self.disconnected:
                raise ProxyError(f"the engine disconnected from {self.endpoint} at simulated time {now:.6f} "
                                 "before the simulation ended (did it crash? see its output)")

        raw = self.wait(check)
        self.received = True
        return raw

    def gone(self):
        """The engine, which sent a message, has disconnected since (read between two of our own waits)."""
        self._read_monitor()
        return self.received and self.disconnected

    def send(self, payload):
        self.sock.send(payload)


class SchedulerSide(WatchedSocket):
    """The wrapped scheduler: a REQ socket connected to where it listens."""

    def __init__(self, ctx, endpoint, child=None, ready_timeout=30.0, reply_timeout=None, engine=None):
        super().__init__(ctx, zmq.REQ)
        self.endpoint = endpoint
        self.child = child
        self.engine = engine    # EngineSide: the engine going away ends the wait as well
        self.ready_timeout = ready_timeout
        self.reply_timeout = reply_timeout
        self.answered = False
        self.connect(endpoint, lambda e: ProxyError(f"invalid endpoint for the wrapped scheduler {endpoint!r}: {e}"))

    def exchange(self, payload, now):
        self.sock.send(payload)
        if self.answered and self.sock.poll(POLL_MS, zmq.POLLIN):
            return self.sock.recv(copy=True)      # fast path: no monitor work
        started = time.monotonic()
        limit = self.reply_timeout if self.answered else self.ready_timeout

        def check():
            if self.engine is not None and self.engine.gone():
                # nobody is left to answer: waiting out the reply timeout would only hold the port
                raise ProxyError(f"the engine disconnected at simulated time {now:.6f} while the wrapped scheduler "
                                 "was deciding (did the engine crash or get stopped? see its output)")
            if self.child is not None and self.child.poll() is not None:
                raise ProxyError(f"the wrapped scheduler exited (status {self.child.returncode}) at simulated "
                                 f"time {now:.6f} without answering (did it crash? see its output)")
            if self.handshake_failed:
                raise ProxyError(f"the program listening on {self.endpoint} does not speak ZeroMQ "
                                 "(is the port used by another program?)")
            if self.answered and self.disconnected:
                raise ProxyError(f"the wrapped scheduler disconnected from {self.endpoint} at simulated time "
                                 f"{now:.6f} while the proxy waited for its answer (did it crash?)")
            if limit is not None and time.monotonic() - started > limit:
                if not self.answered:
                    raise ProxyError(f"the wrapped scheduler did not answer on {self.endpoint} within {limit:g} s "
                                     "(is it running and listening there? see --ready-timeout)")
                raise ProxyError(f"the wrapped scheduler did not answer within {limit:g} s at simulated time "
                                 f"{now:.6f} (see --reply-timeout)")

        raw = self.wait(check)
        self.answered = True
        return raw
