"""Where a batloc scheduler meets the outside: its ``-o`` options, the engine's socket, and how it leaves.

Every family (planning, file-sharing, plain) starts from here, so that each
fails the same way: one line on stderr, never a traceback, and an exit status
saying why — 2 for input that makes the run meaningless (options, platform),
1 for an engine that went away.

Options: pybatsim hands the scheduler's constructor whatever ``-o`` decoded
to, and Python's JSON reader accepts ``NaN`` and ``Infinity``; NaN compares
false with every bound, so range checks alone let it through.

Input that makes the run meaningless once it has begun (a platform a policy
cannot use, a job without the fields it needs) stops the scheduler deciding:
it says so in one line, then rejects every job, starts nothing, lets what
runs end and finishes the registration, so that the simulation ends on both
engines with a final state for every job, and exits with status 2 once it
has answered SIMULATION_ENDS (``BatlocScheduler.stop_deciding``). A
scheduler that simply left would be reported at once by batloc's engine,
but real Batsim 4.2.1 would wait for its answer for ever.

The engine: pybatsim waits on its REP socket with a timeout (``-t``, 2 s by
default) and calls ``onDeadlock`` each time it expires. Silence is no sign
of trouble (a long simulation step is silent), but the socket's ZeroMQ
monitor says when the engine's connection closed: a killed engine closes it,
a slow one does not.
"""

import math
import sys

import zmq
from batsim.batsim import BatsimScheduler, Job
from zmq.utils.monitor import recv_monitor_message

from batloc.locality.staging import is_staging_job
from batloc.outputs import OutputError
from batloc.processes import quiet_gc
from batloc.schedulers.dispatch import use_quick_dispatch
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


def note(message):
    """One line on stderr about what the scheduler is doing when it takes long (compiling its kernel)."""
    print(f"{PREFIX}: {message}", file=sys.stderr, flush=True)


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
    """The base of every family's base class: leaving when the engine has gone, or after the simulation
    it could not schedule has ended."""

    fatal = None            # the line printed by stop_deciding
    engine_watch = None

    def onBeforeEvents(self):
        if self.engine_watch is None:
            # At the first message, before any answer: an engine killed while it
            # waits for that answer must be seen leaving too. In the engine's own
            # process (link.LocalNetwork) there is no socket, and no engine to lose.
            use_quick_dispatch(self.bs, self)
            if self.bs.network.connection is None:
                self.engine_watch = False
                return
            self.engine_watch = EngineWatch(self.bs.network)
            use_quick_network(self.bs)
            quiet_gc()        # in the engine's process (above) the engine has done it

    def onDeadlock(self):
        if self.engine_watch and self.engine_watch.gone():
            leave(f"the engine at {self.engine_watch.endpoint} went away at simulated time {self.bs.time():.6f}: "
                  "its connection closed before the simulation ended (killed? see its output)", ENGINE_GONE)

    def stop_deciding(self, line):
        """Print `line` and stop deciding: every job is rejected, the simulation ends, then the scheduler
        exits with status 2 (the module's docstring says why).

        From now on pybatsim's callbacks reach the ones set here (instance attributes, which pybatsim
        finds before the family's methods); the rest of the current message too."""
        self.fatal = line
        print(line, file=sys.stderr, flush=True)
        self._to_reject = [job for job in self.bs.jobs.values() if _waits(job)]   # held ones included
        self.onJobSubmission = self._to_reject.append
        self.onJobCompletion = self.onJobsKilled = _ignore
        self.onRequestedCall = self.onNoMoreJobsInWorkloads = _ignore
        self.onNoMoreEvents = self._draining
        self.onSimulationEnds = self._drained

    def _draining(self):
        """Reject every job that waits (the engine's, and the ones a family held cores for before its
        file loaded: the engine never started them), and end the registration of dynamic jobs."""
        waiting = [job for job in self._to_reject if _waits(job)]
        self._to_reject.clear()       # in place: onJobSubmission appends to this very list
        if waiting:
            self.bs.reject_jobs(waiting)
        if self.bs.dynamic_job_registration_enabled and not getattr(self, "finished_registration", False):
            self.finished_registration = True
            self.bs.notify_registration_finished()

    def _drained(self):
        """SIMULATION_ENDS: the family's own end (its files closed) if it had begun, then exit 2 once the
        answer is sent."""
        if getattr(self, "ready", False):
            type(self).onSimulationEnds(self)
        network = self.bs.network
        send = network.send

        def send_then_leave(msg):
            send(msg)
            raise SystemExit(BAD_INPUT)

        network.send = send_then_leave


def _ignore(*_):
    """A callback of a scheduler that no longer decides."""


def _waits(job):
    """Whether pybatsim's `job` is submitted and neither executed nor rejected by this scheduler (pybatsim
    keeps its own decisions in ``state``, the engine's news in ``job_state``); never one of our stagings,
    which run once registered (an acknowledged one comes back as a new, submitted, Job)."""
    return (job.job_state == Job.State.SUBMITTED and not is_staging_job(job.id)
            and getattr(job, "state", None) not in (Job.State.RUNNING, Job.State.REJECTED))
