"""Where a batloc scheduler meets the outside: its ``-o`` options, the engine's socket, and how it leaves.

Every family (planning, file-sharing, plain) starts from here, so that each
fails the same way: one line on stderr, never a traceback, and an exit status
saying why — 2 for input that makes the run meaningless (options, platform),
1 for an engine that went away.

Options: pybatsim hands the scheduler's constructor whatever ``-o`` decoded
to, and Python's JSON reader accepts ``NaN`` and ``Infinity``; NaN compares
false with every bound, so range checks alone let it through.

The engine: pybatsim waits on its REP socket with a timeout (``-t``, 2 s by
default) and calls ``onDeadlock`` each time it expires. Silence is no sign
of trouble (a long simulation step is silent), but the socket's ZeroMQ
monitor says when the engine's connection closed: a killed engine closes it,
a slow one does not.
"""

import math
import sys

import zmq
from batsim.batsim import BatsimScheduler
from zmq.utils.monitor import recv_monitor_message

from batloc.outputs import OutputError
from batloc.schedulers.link import use_quick_network

PREFIX = "batloc scheduler"
BAD_INPUT, ENGINE_GONE = 2, 1
# The protocol's time resolution: times carry six decimals, and Batsim 4.2.1
# refuses a CALL_ME_LATER that is not strictly later than its clock.
TICK = 1e-6


class OptionsError(ValueError):
    """An option a scheduler does not know or cannot use (each family's ``options`` module raises it)."""


class FileOutputs:
    """The options naming a scheduler's output files (a mixin of every family's options)."""

    @property
    def decisions_path(self):
        """``decisions`` if given, else ``<export_prefix>_decisions.csv``, else None (no log)."""
        if self.decisions:
            return self.decisions
        if self.export_prefix:
            return f"{self.export_prefix}_decisions.csv"
        return None


def _one_line_for_outputs(kind, exc, tb, previous=sys.excepthook):
    """An output the scheduler cannot write (a full disk) ends it with one line; anything else as before.

    pybatsim calls the callbacks from its own loop, which catches nothing: the
    hook for uncaught exceptions is the one place that sees every family's."""
    if issubclass(kind, OutputError):
        print(f"{PREFIX}: error: {exc}", file=sys.stderr, flush=True)
    else:
        previous(kind, exc, tb)


sys.excepthook = _one_line_for_outputs


def leave(message, status):
    """Print `message` as the scheduler's one line and exit with `status`."""
    print(f"{PREFIX}: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


def warn(message):
    """One line on stderr about something the run goes on without (a rejected job, a missing field)."""
    print(f"{PREFIX}: warning: {message}", file=sys.stderr, flush=True)


def finite_number(value, integer=False):
    """Whether `value` is a JSON number (not a boolean) that is finite, and an integer if asked."""
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:   # an integer beyond any float
        return False


def options_or_exit(parse, options, errors):
    """`parse(dict)` applied to pybatsim's options; an error of type `errors` is the scheduler's one line."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        text = repr(options)
        leave(f"the -o options must be a JSON object such as '{{\"cache\": \"lru\"}}', got "
              f"{text if len(text) <= 60 else text[:57] + '...'}", BAD_INPUT)
    try:
        return parse(dict(options))
    except errors as exc:
        leave(str(exc), BAD_INPUT)


def with_forced(raw, forced, who, error):
    """`raw` with the options a scheduler file fixes (e.g. ``fcfs_bf.py``: backfilling); another value is `error`."""
    for key, value in forced.items():
        if key in raw and raw[key] != value:
            raise error(f"{who}: sets {key}={value!r}; got {key}={raw[key]!r}")
    return {**raw, **forced}


class EngineWatch:
    """Counts the peers of pybatsim's REP socket from the moment the engine's first message arrived."""

    def __init__(self, network):
        self.endpoint = network.socket_endpoint
        self.monitor = network.connection.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        # The engine is connected already; a probe of the port (accepted, then
        # disconnected) must not count as the engine leaving.
        self.peers = 1
        self.alone = False

    def gone(self):
        """True at the second check in a row that finds no peer (ZeroMQ peers may reconnect in between)."""
        while self.monitor.poll(0):
            event = recv_monitor_message(self.monitor)["event"]
            self.peers += 1 if event == zmq.EVENT_ACCEPTED else -1
        alone = self.peers <= 0
        gone, self.alone = alone and self.alone, alone
        return gone


class BatlocScheduler(BatsimScheduler):
    """The base of every family's base class: leaving when the engine has gone, or after a last answer."""

    fatal = None            # the line printed by stop_after_answer
    engine_watch = None

    def onBeforeEvents(self):
        if self.fatal is not None:
            raise SystemExit(BAD_INPUT)
        if self.engine_watch is None:
            # At the first message, before any answer: an engine killed while it
            # waits for that answer must be seen leaving too.
            self.engine_watch = EngineWatch(self.bs.network)
            use_quick_network(self.bs)

    def onDeadlock(self):
        if self.engine_watch is not None and self.engine_watch.gone():
            leave(f"the engine at {self.engine_watch.endpoint} went away at simulated time {self.bs.time():.6f}: "
                  "its connection closed before the simulation ended (killed? see its output)", ENGINE_GONE)

    def stop_after_answer(self, line):
        """Print `line`, answer the current message, and exit at the next one (a call asked one tick later).

        The engine then sees a scheduler that went away after answering, which it
        reports at once, instead of one that never answered, which it waits for."""
        self.fatal = line
        print(line, file=sys.stderr, flush=True)
        self.bs.wake_me_up_at(self.bs.time() + TICK)
