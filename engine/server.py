"""The engine's event loop: one SimGrid actor, timers in a Python heap, the Batsim protocol.

SimGrid's Python bindings run each actor as an OS thread, so one actor per job
is slow (every switch is a thread hand-off). Here a single actor owns the
simulation: delays, walltimes, submissions and requested calls are entries of
a heap; only what needs SimGrid's flow model (transfers, executions) becomes
SimGrid activities, waited for with `wait_any_for(time to next timer)`. While
no activity is in flight SimGrid is not called at all; its clock catches up
(`sleep_until`) just before the next activity starts.

Two modes. On a platform where Batsim's own messages take time (latencies
on the routes to the master), the *timed* mode reproduces when Batsim's
server hears of each event and when it tells the scheduler (``mailbox``):
decisions apply when their message reaches the server, jobs end where they
run and are announced when their message arrives, events of one instant may
come in several messages. Where every such message takes less than 1 ns
(batloc's own platforms), the *instant* mode gives the same instants more
cheaply: everything that happens at one simulated instant is sent to the
scheduler as one message; its decisions apply at that instant (or later, if
it dates them).

`Simulation` is one state with three roles, one file each, as in Batsim
(`server`, `protocol` reader, `jobs_execution`): the clock, heap and run loop
here, the scheduler's decisions in ``decisions``, the jobs' life cycle in
``jobs``. The state is created here, in one place, so that every attribute
the roles share is visible at once.
"""

import heapq
import itertools
import sys
from collections import deque

from .decisions import HANDLERS, DecisionHandlers
from .errors import EngineError
from .io_gate import exclusive_io
from .jobs import JobLifecycle
from .checks import number, shown
from .mailbox import TimedMessages
from .protocol import decode_batsim, encode, simulation_begins
from .timers import CALL, DEFERRED, FIRST_SUBMISSION, INF, MICROSECOND_EXACT, PHASE_END, WALLTIME
from .workload import submission_order

# Answers in a row at one instant after which no job was submitted, registered or ended: time cannot
# move on while each answer asks for another message at once (a QUERY, a KILL_JOB of an ended job, a
# CALL_ME_LATER for now under --lenient-call-me-later...), so such a scheduler loops; Batsim would hang.
STALL_LIMIT = 1000


# How far before the earliest instant an activity could end a timer must be for SimGrid not to be asked,
# relative to the time: far above the rounding of SimGrid's sums (1e-16), so that a bound met exactly asks
QUIET_MARGIN = 1e-9


class Simulation(DecisionHandlers, JobLifecycle, TimedMessages):
    def __init__(self, sg, engine, platform, workloads, link, exporter, options, progress=None, stop=None):
        self.sg = sg
        self.engine = engine
        self.platform = platform
        self.workloads = {w.name: w for w in workloads}
        self.link = link
        self.out = exporter
        self.opt = options
        self.progress = progress
        self.stop = stop  # signals.StopOnSignal: checked once per instant
        self.now = 0.0
        self.heap = []
        self.seq = itertools.count()
        self.events = []
        self.static = submission_order(workloads)
        self.release = [max(j.subtime, FIRST_SUBMISSION) for j in self.static]  # when each is announced
        self.next_static = 0
        self.jobs = {}
        self.unfinished = 0
        self.busy = {}  # compute resource id -> job id using it
        self.nb_computing = 0
        self.registration_open = options.dynamic_jobs
        self.acts = sg.ActivitySet()
        self.act_count = 0
        self.act_owner = {}
        # When no activity in flight can end before the next timer, SimGrid need not be asked (each call is
        # a hand-off between threads): an activity started at t cannot end before t + its amount at the
        # fastest it can go (a transfer: its route's slowest link; a computation: its host's speed)
        self.act_earliest = {}   # activity -> that instant
        self.quiet_until = INF   # the earliest of them
        self.route_rates = {}    # (source host, destination host) -> its route's slowest link's bandwidth
        self.dynamic_profiles = set()
        self.by_id = {r.id: r for r in platform.resources}
        self.allocations = {}  # alloc text -> its reading (decisions.DecisionHandlers._allocation)
        self.messages = 0
        self.warned = set()  # kinds of warnings already printed
        self.exact_until = MICROSECOND_EXACT   # INF once the warning that times are coarser was printed
        self.stall = (None, None, 0)  # (instant, jobs progress, answers in a row without progress)
        self.io = exclusive_io(platform, self.io_granted)  # None unless a storage is pfs_access=exclusive
        self.timed = False       # Batsim's message times (``mailbox``), decided when the run starts
        self.routes = {}         # (source host, destination host) -> (links, latency) for the L07 clock
        self.to_delete = []      # jobs Batsim deletes once the next message went out (their end is in it)
        self.comms_in_flight = 0 # jobs' phases moving bytes now: a message may share their links
        self.round_puts = None   # timed mode: messages put by the actors of the round being run
        self.zombies = {}        # timed mode: job -> its activities left running past its walltime
        self.clock_transfers = False   # timed mode: jobs' transfers timed by the L07 clock (``mailbox``)
        self.took = None         # timed mode: transfer_done, bound once (every message's end calls it)

    # ---- time -----------------------------------------------------------
    def push(self, time, kind, job=None, data=None):
        token = job.token if job is not None else 0
        heapq.heappush(self.heap, (time, kind, next(self.seq), job, token, data))

    def next_time(self):
        t = self.heap[0][0] if self.heap else INF
        if not self.timed and self.next_static < len(self.static):
            t = min(t, self.release[self.next_static])
        return t

    def sync_simgrid(self):
        if self.engine.clock < self.now:
            self.sg.this_actor.sleep_until(self.now)

    def advance(self, t):
        """Move to the next instant at which something happens, and make it happen."""
        if self.act_count and t + QUIET_MARGIN * (1 + t) >= self.quiet_until:
            clock = self.engine.clock
            if t > clock:
                try:
                    done = self.acts.wait_any() if t == INF else self.acts.wait_any_for(t - clock)
                except self.sg.TimeoutException:
                    done = None
                if done is not None:
                    self.now = max(self.now, self.engine.clock)
                    self.activity_done(done)
                    while self.act_count:
                        other = self.acts.test_any()
                        if other is None:
                            break
                        self.activity_done(other)
                    return
        if t == INF:
            return
        self.now = t
        self.fire_due()

    def fire_due(self):
        now = self.now
        heap = self.heap
        while heap and heap[0][0] <= now:
            _, kind, _, job, token, data = heapq.heappop(heap)
            if job is not None and job.token != token:
                continue  # stale: the job moved on or ended since this was scheduled
            if kind == PHASE_END:
                self.next_phase(job)
            elif kind == WALLTIME:
                self.end_job(job, "COMPLETED_WALLTIME_REACHED", -1)
            elif kind == CALL:
                self.emit("REQUESTED_CALL", {})
            else:
                self.apply_event(data)
        static, release = self.static, self.release
        while self.next_static < len(static) and release[self.next_static] <= now:
            self.submit(static[self.next_static])
            self.next_static += 1
            if self.next_static == len(static):
                self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})

    # ---- protocol ---------------------------------------------------------
    def emit(self, etype, data):
        # Batsim prints times with six decimals; events are always sent at the instant they happen
        if self.now > self.exact_until:
            self.past_exact()
        self.events.append({"timestamp": round(self.now, 6), "type": etype, "data": data})

    def past_exact(self):
        """Once: past 2^32 s the outputs' times are the doubles Batsim's would hold, no longer exact to 1 µs."""
        self.exact_until = INF
        print(f"batloc-batsim: warning: the simulation passes 2^32 s (about 136 years) at t={self.now:.6f}: "
              "times past it are not microsecond-exact in the outputs (a double's spacing there exceeds 1 µs), "
              "as on Batsim", file=sys.stderr)

    def encode_message(self, events):
        return encode({"now": round(self.now, 6), "events": events})

    def flush(self):
        while self.events:
            events, self.events = self.events, []
            self.out.checkpoint(self.now)   # the journal holds all up to here
            reply = self.link.exchange(self.encode_message(events), self.now)
            self.messages += 1
            self.forget_sent_jobs()
            answered = self.apply_reply(reply)
            self.check_stall(answered)

    def forget_sent_jobs(self):
        """Batsim deletes a job once the message holding its end (or rejection) went out (server.cpp)."""
        if self.to_delete:
            for job in self.to_delete:
                job.gone = True
                zombies = self.zombies.pop(job, None)
                if zombies:
                    self.cancel_activities(zombies)
            self.to_delete = []

    def check_stall(self, answered):
        """`answered`: the answer's event types, or a function giving them (only the error needs them)."""
        at, progress, count = self.stall
        moved = (len(self.jobs), self.unfinished)
        # one instant as the protocol prints it: Batsim's own messages move the clock by 1e-10 s or so meanwhile
        if progress == moved and at is not None and self.now - at < 1e-6:
            count += 1
        else:
            at, count = self.now, 0
        self.stall = (at, moved, count)
        if count >= STALL_LIMIT:
            if callable(answered):
                answered = answered()
            raise EngineError(
                f"the scheduler answered {count} messages in a row at t={self.now:.6f} without any job being "
                f"submitted, registered or ending (its last answer: {', '.join(answered) or 'no event'}); "
                "it loops at one instant")

    def apply_reply(self, raw):
        """Instant mode: apply the answer's decisions now, or at their date when it is later."""
        events, _ = self.read_reply(raw)
        types = []
        now = self.now
        for ts, event in events:
            types.append(str(event.get("type")) if isinstance(event, dict) else "?")
            if ts > now + 1e-9:  # a decision dated later (a batloc extension: Batsim refuses them)
                self.push(ts, DEFERRED, data=event)
                continue
            self.apply_event(event)
        return types

    def read_reply(self, raw):
        """The answer's decisions as (timestamp, event), and its `now`; a malformed answer stops the run."""
        where = f"the scheduler's answer at t={self.now:.6f}"
        try:
            msg = decode_batsim(raw)
            events, now = msg["events"], msg["now"]
            if not isinstance(events, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):  # JSON decode errors are ValueErrors
            hint = " (it holds NaN or Infinity, which JSON does not allow)" if any(
                w in raw for w in (b"NaN", b"Infinity")) else ""
            raise EngineError(f"{where} is not a Batsim message{hint}: {raw[:200]!r}") from None
        now = number(now, "'now'", where)
        out = []
        for event in events:
            ts = event.get("timestamp", self.now) if isinstance(event, dict) else self.now
            if not (type(ts) is float and -INF < ts < INF):   # the common case needs no conversion
                ts = number(ts, "an event's timestamp", where)
            if ts < self.now - 1e-6:
                self.warn_once("past event", f"{where} dates an event at t={ts:.6f}, in the past: applied now, "
                                             "as Batsim does")
            if self.timed and ts > max(now, self.now) + 1e-9:   # later than the answer's now: Batsim refuses it
                self.defer(ts, event)
                continue
            out.append((ts, event))
        return (deque(out) if self.timed else out), now

    def warn_once(self, kind, text):
        if kind not in self.warned:
            self.warned.add(kind)
            print(f"batloc-batsim: warning: {text} (further such warnings are not shown)", file=sys.stderr)

    def apply_event(self, event):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise EngineError(f"the scheduler sent a malformed event at t={self.now:.6f}: {shown(event)}")
        handler = HANDLERS.get(event["type"])
        if handler is None:
            raise EngineError(f"the scheduler sent an unknown event type {shown(event['type'])} at t={self.now:.6f}")
        data = event.get("data", {})
        if not isinstance(data, dict):
            raise EngineError(f"the scheduler's {event['type']} event has no data object: {shown(event)}")
        handler(self, data)

    # ---- the run ------------------------------------------------------------
    def finished(self):
        return (self.next_static >= len(self.static) and self.unfinished == 0
                and not self.registration_open and not self.events)

    def begins(self):
        return simulation_begins(self.platform, self.workloads.values(), self.opt)

    def run(self):
        self.timed = not self.opt.instant
        if self.timed:
            self.run_timed()
            return
        self.emit("SIMULATION_BEGINS", self.begins())
        if not self.static:
            self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})
        self.flush()
        stop = self.stop
        while True:
            if self.finished():
                break
            if stop is not None and stop.signum is not None:
                stop.check(self.now)
            t = self.next_time()
            if t == INF and not self.act_count:
                if self.unfinished == 0 and self.next_static >= len(self.static):
                    self.registration_never_closed()
                    continue
                self.deadlock()
            self.advance(t)
            if self.progress is not None:
                self.progress.update(self.now)
            self.flush()
        self.emit("SIMULATION_ENDS", {})
        self.flush()

    def registration_never_closed(self):
        # Only the scheduler could add work, and nothing will call it again.
        print("batloc-batsim: warning: every job ended but the scheduler never sent "
              "NOTIFY registration_finished; ending the simulation", file=sys.stderr)
        self.registration_open = False

    def deadlock(self):
        left = [j for j in self.jobs.values() if j.state in ("SUBMITTED", "RUNNING")]
        waiting = [j.id for j in left if j.state == "SUBMITTED"]
        held = [j.id for j in left if j.state == "RUNNING"]

        def names(ids):
            return ", ".join(map(repr, ids[:5])) + (" …" if len(ids) > 5 else "")

        stuck = f"; {len(held)} job(s) run with nothing left to do ({names(held)})" if held else ""
        raise EngineError(
            f"deadlock at t={self.now:.6f}: {len(waiting)} job(s) wait ({names(waiting)}) but nothing is running "
            f"and the scheduler asked for no further call{stuck} (written to jobs.csv as SUBMITTED or RUNNING)")
