"""A ZeroMQ socket watched by a monitor, shared by the engine and the staging proxy.

A blocking recv cannot tell "the peer is thinking" from "the peer is gone".
The monitor's events can: each wait polls the socket and its monitor, and
between polls the caller's ``check`` decides whether waiting is hopeless (it
raises its own error, with its own wording). ``disconnected`` describes the
last state seen: ZeroMQ reconnects on its own, and a peer that came back is
not gone.
"""

import zmq
from zmq.utils.monitor import recv_monitor_message

POLL_MS = 200
# A peer may send its last word (the error that says why it stops) and close at once; under load
# its disconnection can reach the monitor before its message reaches the socket. A disconnected
# peer's socket gets this long to deliver before the caller's check calls the peer gone.
LAST_WORD_MS = 1000

_HANDSHAKE_FAILURES = tuple(
    getattr(zmq, name)
    for name in ("EVENT_HANDSHAKE_FAILED_PROTOCOL", "EVENT_HANDSHAKE_FAILED_NO_DETAIL")
    if hasattr(zmq, name)
)


class WatchedSocket:
    def __init__(self, ctx, kind):
        self.sock = ctx.socket(kind)
        self.monitor = self.sock.get_monitor_socket()
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        self.connected = False          # a peer was connected at some point
        self.disconnected = False
        self.handshake_failed = False   # the peer does not speak ZeroMQ
        self.handshake_done = False     # the peer speaks ZeroMQ

    def connect(self, endpoint, error):
        """Connect to `endpoint`, lingering on nothing at close; a bad endpoint closes the
        socket and raises ``error(the ZeroMQ error)``, the caller's one line."""
        self.sock.setsockopt(zmq.LINGER, 0)
        try:
            self.sock.connect(endpoint)
        except zmq.ZMQError as e:
            self.close()
            raise error(e) from None

    def _read_monitor(self):
        while self.monitor.poll(0):
            event = recv_monitor_message(self.monitor)["event"]
            if event in (zmq.EVENT_CONNECTED, zmq.EVENT_ACCEPTED):
                self.connected = True
                self.disconnected = False
            elif event == zmq.EVENT_DISCONNECTED:
                self.disconnected = True
            elif event in _HANDSHAKE_FAILURES:
                self.handshake_failed = True
            elif event == getattr(zmq, "EVENT_HANDSHAKE_SUCCEEDED", None):
                self.handshake_done = True

    def wait(self, check):
        """The next message's bytes; `check()` runs between polls and raises to give up."""
        while True:
            events = dict(self.poller.poll(POLL_MS))
            if self.monitor in events:
                self._read_monitor()
            if self.sock in events or (self.disconnected and self.sock.poll(LAST_WORD_MS)):
                return self.sock.recv(copy=True)
            check()

    def close(self, linger=0):
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
        self.sock.close(linger)
