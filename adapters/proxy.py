"""The staging proxy's loop: engine message → wrapped scheduler → engine reply, until SIMULATION_ENDS.

The engine sends one message per simulated instant and waits for one reply
(contract §4), so the proxy is a strict relay: it never talks to the wrapped
scheduler except inside an engine request, and answers staging-only messages
itself. Messages that it does not change are forwarded as the engine's own
bytes (the common case: submissions, completions of jobs that hit).

On a fatal error while the engine waits for an answer, the proxy answers with
the error's text, which is not a Batsim message: the engine then stops at
once and quotes it, instead of waiting for a peer that is gone.
"""

import sys

import zmq

from batloc.engine.protocol import decode, encode

from .errors import ProxyError
from .links import EngineSide, SchedulerSide
from .relay import Relay


class StageProxy:
    def __init__(self, bind, connect, relay: Relay, child=None, ready_timeout=30.0, reply_timeout=None,
                 log=None):
        self.relay = relay
        self.child = child
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.ctx = zmq.Context()
        self.engine = self.sched = None
        try:
            self.engine = EngineSide(self.ctx, bind, child)
            self.sched = SchedulerSide(self.ctx, connect, child, ready_timeout, reply_timeout, self.engine)
        except ProxyError:
            self.close()
            raise
        self.messages = 0            # engine messages
        self.woken = 0               # of which forwarded to the wrapped scheduler

    def run(self):
        relay = self.relay
        while True:
            raw = self.engine.recv(relay.now)
            self.messages += 1
            try:
                reply = self._answer(raw)
            except ProxyError as exc:
                # The engine is waiting: make it stop now, quoting why.
                self.engine.send(f"batloc-stage-proxy: {exc}".encode())
                self.engine.close(linger=2000)
                self.engine = None
                raise
            self.engine.send(reply)
            if relay.ended:
                return

    def _answer(self, raw):
        relay = self.relay
        try:
            msg = decode(raw)
            if not isinstance(msg["now"], (int, float)) or not isinstance(msg["events"], list) or not all(
                    isinstance(e, dict) and isinstance(e.get("type"), str) and isinstance(e.get("data", {}), dict)
                    for e in msg["events"]):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise ProxyError(f"the engine sent something that is not a Batsim message: {raw[:200]!r}") from None
        to_sched = relay.from_engine(msg)
        if to_sched is None:
            return encode(relay.to_engine(None))
        self.woken += 1
        payload = raw if to_sched is msg else encode(to_sched)
        sraw = self.sched.exchange(payload, relay.now)
        try:
            sreply = decode(sraw)
            if not isinstance(sreply.get("events"), list):
                raise TypeError
        except (ValueError, TypeError, AttributeError):
            raise ProxyError(f"the wrapped scheduler's answer at t={relay.now:.6f} is not a Batsim message: "
                             f"{sraw[:200]!r}") from None
        for i, e in enumerate(sreply["events"]):
            if not isinstance(e, dict) or not isinstance(e.get("type"), str) or not isinstance(e.get("data", {}), dict):
                raise ProxyError(f"the wrapped scheduler's answer at t={relay.now:.6f}: event #{i} is not a Batsim "
                                 f"event (an object with a type and a data object): {e!r}"[:400])
        return encode(relay.to_engine(sreply))

    def close(self):
        for side in (self.engine, self.sched):
            if side is not None:
                side.close()
        self.engine = self.sched = None
        self.ctx.term()
