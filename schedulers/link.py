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
input orjson refuses (a number beyond 64 bits, NaN) is read again by
``json.loads``; an answer orjson cannot write, or would write differently
(it writes NaN as null, where ``json.dumps`` writes NaN, which the engine
refuses), is written by ``json.dumps``. A received message is a dict whose
formatting into pybatsim's INFO line is deferred to when that line is shown.
"""

import json
import logging

import orjson
import zmq
from batsim.network import NetworkHandler

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
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = json.loads(raw.decode())   # the standard library's verdict, as in pybatsim
    return Message(value) if type(value) is dict else value


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


def use_quick_network(bs):
    """Give pybatsim's `bs` the quick handler (same socket, same settings), once."""
    if type(bs.network) is NetworkHandler:
        bs.network.__class__ = QuickNetwork
