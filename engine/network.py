"""The engine's end of the ZeroMQ REQ/REP link to the decision process.

As in Batsim 4 the scheduler binds and the engine connects. A monitor socket
lets the engine tell apart "nobody there yet", "something that is not a
ZeroMQ scheduler holds the port" and "the scheduler went away", instead of
blocking forever in recv.
"""

import time

import zmq
from zmq.utils.monitor import recv_monitor_message

from .errors import EngineError

_POLL_MS = 200


class SchedulerLink:
    def __init__(self, endpoint, ready_timeout=30.0, reply_timeout=None):
        self.endpoint = endpoint
        self.ready_timeout = ready_timeout
        self.reply_timeout = reply_timeout
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVTIMEO, _POLL_MS)
        self.monitor = self.sock.get_monitor_socket()
        try:
            self.sock.connect(endpoint)
        except zmq.ZMQError as e:
            self.close()
            raise EngineError(f"invalid socket endpoint {endpoint!r}: {e}") from None
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        self.answered = False
        self.tcp_connected = False
        self.handshake_failed = False
        self.disconnected = False

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
        limit = self.reply_timeout if self.answered else self.ready_timeout
        while True:
            events = dict(self.poller.poll(_POLL_MS))
            if self.monitor in events:
                self._read_monitor()
            if self.sock in events:
                self.answered = True
                return self.sock.recv(copy=True)
            if self.handshake_failed:
                raise EngineError(
                    f"the program listening on {self.endpoint} does not speak ZeroMQ "
                    "(socket already in use by another program?)")
            if self.answered and self.disconnected:
                raise EngineError(
                    f"the scheduler disconnected from {self.endpoint} at simulated time {now:.6f} "
                    "while the engine waited for its answer (did it crash? see its output)")
            if limit is not None and time.monotonic() - started > limit:
                if not self.answered:
                    if self.tcp_connected:
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

    def _read_monitor(self):
        while self.monitor.poll(0):
            event = recv_monitor_message(self.monitor)["event"]
            if event == zmq.EVENT_CONNECTED:
                self.tcp_connected = True
            elif event == zmq.EVENT_DISCONNECTED:
                self.disconnected = True
            elif event in _HANDSHAKE_FAILURES:
                self.handshake_failed = True

    def close(self):
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
        self.sock.close(0)
        self.ctx.term()


_HANDSHAKE_FAILURES = tuple(
    getattr(zmq, name)
    for name in ("EVENT_HANDSHAKE_FAILED_PROTOCOL", "EVENT_HANDSHAKE_FAILED_NO_DETAIL")
    if hasattr(zmq, name)
)
