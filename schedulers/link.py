"""pybatsim's end of the ZeroMQ link, cheaper per message, meaning the same.

pybatsim 3.2.1 spends more per message than a saturated day can afford (92 000
messages): it sets the socket's receive timeout before every receive (a
ZeroMQ option call), reads and writes JSON with the standard library, and
formats every message it receives into an INFO log line even when INFO is off.
``QuickNetwork`` is its ``NetworkHandler`` with those three costs cut; the
scheduler's ``Batsim`` object gets it at the first message (``use_quick_network``).

What a scheduler sees is unchanged: orjson reads the engine's JSON into the
same values (it is what the engine writes with), and where orjson and the
standard library could disagree the standard library decides, as before:
input orjson refuses (NaN) or would read otherwise (an integer beyond 64
bits, which it makes a float) is read by ``json.loads``; an answer orjson cannot write, or would write differently
(it writes NaN as null, where ``json.dumps`` writes NaN, which the engine
refuses), is written by ``json.dumps``. A received message is a dict whose
formatting into pybatsim's INFO line is deferred to when that line is shown;
a sent one loses its events once sent, when that line is not shown.

``LocalNetwork`` stands in for the socket when the engine runs the scheduler
inside its own process (``batloc-batsim --in-process``): the engine hands it
the bytes it would have sent and takes back the bytes pybatsim answers, read
and written by the same two functions, so that both modes exchange the same
bytes and the scheduler sees the same values.
"""

import json
import logging
import re

import orjson
import zmq
from batsim.network import NetworkHandler

# 20 digits in a row: perhaps an integer beyond 64 bits (or a long fraction), read by the standard library
LONG_NUMBER = re.compile(rb"[0-9]{20}")
# pybatsim's own logger, the one whose INFO line formats each received message
PYBATSIM_LOG = logging.getLogger("batsim.batsim")


class Message(dict):
    """A received message: a plain dict, whose text is made only if pybatsim's INFO line is shown."""

    __slots__ = ()

    def __format__(self, spec):
        if PYBATSIM_LOG.isEnabledFor(logging.INFO):
            return dict.__format__(self, spec)
        return "(message not formatted: INFO is off)"


def decode(raw):
    if LONG_NUMBER.search(raw) is not None:
        value = json.loads(raw.decode())   # orjson would read an integer beyond 64 bits as a float
        return Message(value) if type(value) is dict else value
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = json.loads(raw.decode())   # the standard library's verdict, as in pybatsim
    return Message(value) if type(value) is dict else value


class _Sent:
    """What a sent message's events read as in pybatsim's INFO line about it, when that line is not shown."""

    __slots__ = ()

    def __repr__(self):
        return "(events not formatted: INFO is off)"


SENT = _Sent()


def sent(msg):
    """`msg` was sent: pybatsim's next step formats it into an INFO line, shown or not; when not, its
    events (a list of dicts, 5-10 µs to format) are left out of that text. Nothing else reads `msg`."""
    if type(msg) is dict and "events" in msg and not PYBATSIM_LOG.isEnabledFor(logging.INFO):
        msg["events"] = SENT


def encode(msg):
    try:
        raw = orjson.dumps(msg)
    except TypeError:                      # orjson.JSONEncodeError: a type or value it does not write
        raw = None
    if raw is None or b"null" in raw:      # null may be a NaN to json.dumps: let it decide
        raw = json.dumps(msg).encode()
    return raw


class QuickNetwork(NetworkHandler):
    """pybatsim's REP socket handler; only ``recv`` and ``send`` differ."""

    rcvtimeo = None   # the receive timeout set on the socket, so that it is set only when it changes

    def recv(self, blocking=False):
        timeout = -1 if blocking or self.timeout is None or self.timeout <= 0 else self.timeout
        if timeout != self.rcvtimeo:
            self.connection.RCVTIMEO = timeout
            self.rcvtimeo = timeout
        try:
            raw = self.connection.recv()
        except zmq.error.Again:
            return None
        if self.logger.isEnabledFor(logging.DEBUG):
            self.logger.debug("[PYBATSIM]: RECEIVED_MSG\n %s", raw.decode(errors="replace"))
        return decode(raw)

    def send(self, msg):
        raw = encode(msg)
        if self.logger.isEnabledFor(logging.DEBUG):
            self.logger.debug("[PYBATSIM]: SEND_MSG\n %s", raw.decode(errors="replace"))
        self.connection.send(raw)
        sent(msg)


def use_quick_network(bs):
    """Give pybatsim's `bs` the quick handler (same socket, same settings), once."""
    if type(bs.network) is NetworkHandler:
        bs.network.__class__ = QuickNetwork


class LocalNetwork:
    """pybatsim's ``NetworkHandler`` without a socket: one message in (``deliver``), its answer out.

    pybatsim's ``Batsim`` pulls each message from its handler (``recv``) and
    pushes its answer (``send``); here the engine drives instead, so ``recv``
    returns the message the engine delivered and ``send`` keeps the answer for
    the engine to take. A scheduler that asks for a message the engine has not
    delivered (pybatsim waiting for a second one) is a LocalNetworkError."""

    in_process = True
    connection = None      # no socket: nothing for a scheduler to watch (boundary.EngineWatch)

    def __init__(self, socket_endpoint="in-process", timeout=None, type=None):
        self.socket_endpoint = socket_endpoint
        self.timeout = timeout
        self.logger = logging.getLogger("batsim.network")
        self.inbox = None
        self.answer = None

    def deliver(self, raw):
        """The engine's message `raw` (bytes) is the next one pybatsim reads."""
        self.inbox = raw
        self.answer = None

    def recv(self, blocking=False):
        raw, self.inbox = self.inbox, None
        if raw is None:
            raise LocalNetworkError("the scheduler waited for a message the engine had not sent")
        return decode(raw)

    def recv_string(self, blocking=False):
        raw, self.inbox = self.inbox, None
        if raw is None:
            raise LocalNetworkError("the scheduler waited for a message the engine had not sent")
        return raw.decode()

    def send(self, msg):
        self.answer = encode(msg)
        sent(msg)

    def send_string(self, msg):
        self.answer = msg.encode()

    def bind(self):
        pass

    connect = close = bind


class LocalNetworkError(RuntimeError):
    """pybatsim used the in-process link out of turn."""
