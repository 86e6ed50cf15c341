"""The Batsim side every scheduler family shares: passes, wake-ups, stagings, window ends, statistics.

Each family's base (planning: ``planning/scheduler.py``, file-sharing:
``filesharing/base.py``, plain: ``plain/base.py``) subclasses
``SchedulerBase`` and says what a pass is (``schedule``), how many jobs wait
(``unstarted``) and what its statistics are (``stats``); this class speaks
the protocol around them, once for all:

- **Passes.** One pass per engine message after something changed (``dirty``),
  timed; with dynamic jobs the simulation ends only once we send
  ``registration_finished``: we do so when no static job is to come, no job
  waits, no staging is due and no job holding cores may still register one
  (waiting for room, or writing its outputs back at its end): none can be
  needed any more.
- **Wake-ups.** Batsim 4.2.1 aborts on a CALL_ME_LATER that is not strictly
  in the future ("You asked to be awaken in the past"). ``call_at`` therefore
  asks at least one protocol tick (1 µs, times carry six decimals) after now,
  each instant once; a timer is due at a call whose time is within one tick
  of it, since the engine dates its messages to the tick.
- **Stagings** (contract §3): a ``data_staging`` job from Lustre to the node's
  memory, registered and executed at once or, booked for later, at that
  instant through a wake-up.
- **Window ends** (contract §6): the engine counts a job's walltime from its
  execution, after its load, while its reservation window [t_k, t_k +
  walltime) includes the load. A job that waits for its file therefore gets a
  kill timer at its window's end when it takes its cores (then still in the
  future). There, a job computing is killed; a job still waiting for its file
  is executed and killed in the same answer, so it ends COMPLETED_KILLED at its
  window's end, its cores freed, as the paper's schedule has it (Batsim 4.2.1
  runs the execution, then the kill, at that instant). A timer is read once
  every event of its message is in (``end_windows``), never at its
  REQUESTED_CALL: Batsim 4.2.1 may send a job's JOB_COMPLETED after the call
  in the same message, and it aborts on a KILL_JOB of a job whose end it has
  reported (it forgets the job once that message is sent: ``jobs.cpp``,
  "Cannot get job ...: it does not exist"). The option
  ``walltime_includes_load: false`` sets no timer: the engine's walltime,
  counted from the execution, is then the only kill (as the staging proxy's
  ``--walltime-excludes-load``), so both groups of a sweep follow one rule.
- **Held jobs**: ``Held``, a job holding cores, and ``HeldJobs``, the held
  jobs and stagings in flight that the families' states are built on and
  these timers read (``self.state.held``, ``self.state.stagings``).
"""

import heapq
import json
import logging
import math
import time as _time
from dataclasses import dataclass
from typing import Optional

import numpy as np
from procset import ProcInt, ProcSet

from batloc.locality.decision_log import DecisionLog
from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.locality.staging import STAGE_WORKLOAD, StagingBook, is_staging_job
from batloc.schedulers.admission import NoMemory
from batloc.schedulers.dispatch import execute_job, quick_answers, register_and_execute
from batloc.schedulers.boundary import PREFIX, TICK, BatlocScheduler, OptionsError, options_or_exit

log = logging.getLogger("batloc.schedulers")


def _no_clock():
    return 0.0


# ProcInt's own constructor checks its bounds (types, order, sign), which procset_of's runs meet by construction
_interval = tuple.__new__


def procset_of(ids):
    """The ProcSet of the resource ids `ids` (any order, repeats allowed), equal to ``ProcSet(*ids)``.

    ``ProcSet(*ids)`` merges id by id through generators (tens of µs per job,
    a tenth of a scheduler's time on a saturated day); here the runs are found
    once and set as the ProcSet's interval list, as procset's own ``copy`` does."""
    ids = sorted(set(ids))
    runs = []
    if ids:
        lo = prev = ids[0]
        for i in ids[1:]:
            if i != prev + 1:
                runs.append(_interval(ProcInt, (lo, prev)))
                lo = i
            prev = i
        runs.append(_interval(ProcInt, (lo, prev)))
    result = ProcSet()
    result._itvs = runs
    return result


@dataclass
class Held:
    """A job holding cores: waiting for its file, or computing."""
    job: object            # the family's record of the job: id, cores, walltime, file, size
    node: int
    positions: np.ndarray
    start: float           # cores held from here (t_k)
    deadline: float        # the end of its reservation window (+inf without a walltime)
    staging: Optional[str]
    computing: bool
    alloc: Optional[ProcSet] = None
    # A job reading several files may wait for several stagings (its own loads, others'):
    # those still in flight; None for a job of one file (``staging`` says which).
    waits: Optional[set] = None
    # Killed at its window's end: its files left its node's memory model then (``HeldJobs.killed``),
    # its cores stay held until its end is reported.
    files_left: bool = False


def stagings_waited(held):
    """The stagings a held job still waits for (any family's record of a held job)."""
    waits = getattr(held, "waits", None)
    if waits is not None:
        return waits
    return (held.staging,) if held.staging is not None else ()


class HeldJobs:
    """The jobs holding cores and the stagings in flight: the part of a file-aware family's
    state (planning, file-sharing) that the window-end timers read too."""

    def __init__(self):
        self.held = {}                 # job id -> Held
        self.stagings = StagingBook()

    def loaded(self, staging_id):
        """Staging `staging_id` completed: (its Staging, the Held jobs waiting for it, now computing)."""
        st = self.stagings.complete(staging_id)
        ready = []
        for jid in st.waiters:
            held = self.held.get(jid)
            if held is not None:        # None: it ended while waiting
                if held.waits is not None:
                    held.waits.discard(staging_id)
                    if held.waits:
                        continue        # another of its files is still loading
                held.computing = True
                ready.append(held)
        return st, ready

    def killed(self, job_id, now):
        """Its scheduler kills `job_id` now, at its window's end: the job ends now for its node's memory,
        before any start of this instant (contract §5, *one instant*), as the validator replays it; its
        cores stay held until the engine reports its end (they are offered from then on, at this instant
        in the next pass)."""
        held = self.held.get(job_id)
        if held is not None and not held.files_left:
            held.files_left = True
            self.files_left(held, now)

    def files_left(self, held, now):
        """`held`'s job no longer uses its files (it ended, or was killed): the family's memory model."""
        raise NotImplementedError

    def release(self, job_id):
        """A job ended (completed or killed): its Held, gone from the staging it waited for; None if unknown."""
        held = self.held.pop(job_id, None)
        if held is not None and not held.computing:
            self.leave_stagings(held)
        return held

    def leave_stagings(self, held):
        """`held` no longer waits for its loads (it ended, or its window ended, before they did)."""
        for sid in stagings_waited(held):
            self.stagings.leave(sid, held.job.id)


class SchedulerBase(BatlocScheduler):
    decision_log = None

    # ---- what a family defines -----------------------------------------
    @classmethod
    def parse_options(cls, raw):
        """The options of `raw` (a dict); OptionsError names the first bad one."""
        raise NotImplementedError

    def schedule(self, now):
        """One pass: start what can start now."""
        raise NotImplementedError

    def unstarted(self):
        """Number of submitted jobs not started yet."""
        raise NotImplementedError

    def dependents_waiting(self):
        """Dependent jobs whose parents still run (``workflows.WorkflowSubmissions``): registration
        must stay open for them."""
        return 0

    def stagings_to_come(self):
        """Whether a job holding cores may still register a staging: one waiting for room in memory (its
        load is registered when it gets the room: no staging, none waited for, not computing), or a
        workflow task whose outputs a staging writes back at its end (``write_back: "staged"``).
        Registration stays open for them (the engine refuses a REGISTER_JOB after
        ``registration_finished``, and so does Batsim)."""
        state = getattr(self, "state", None)
        if state is None:
            return False        # the plain family stages nothing
        staged = getattr(self.opts, "write_back", "instant") == "staged"
        return any((staged and getattr(h.job, "outputs", None))
                   or (not h.computing and h.staging is None and not h.waits) for h in state.held.values())

    def may_schedule(self):
        """Whether a pass may run now (a periodic scheduler waits for its next instant)."""
        return True

    def memories(self):
        """The node memories (``NodeCache``-like), for the overflow count at the end."""
        return ()

    def stats(self):
        """What the option ``stats`` writes at the end (benchmarks)."""
        return {}

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        self.opts = options_or_exit(self.parse_options, options, OptionsError)
        super().__init__(dict(options or {}))
        self.ready = False            # set once the family has read the platform
        self.jobs = {}                # job id -> pybatsim Job
        self.dirty = False
        self.finished_registration = False
        self.calls = set()            # instants a REQUESTED_CALL is asked for
        self.call_times = []          # heap of them
        self.due = {}                 # instant -> [Staging] to issue then
        self.kill_at = {}             # window end -> [job id]
        self.kill_times = []          # heap of the window ends in kill_at
        self.pass_times = []          # (jobs waiting, seconds) per pass
        self.pass_cpu = 0.0           # CPU seconds of this thread in passes (the wall time above counts
                                      # the engine's turns too when both share a busy CPU)
        # The thread's CPU clock is a system call (3 µs, far more on a loaded VM), read around every
        # pass: only when the statistics that report it are asked for (option ``stats``).
        self.cpu_clock = _time.thread_time if getattr(self.opts, "stats", None) else _no_clock
        self.born = _time.perf_counter()
        self.first_pass_seconds = None

    def read_platform(self):
        """The platform view of SIMULATION_BEGINS, or None once the scheduler is stopping (one line)."""
        try:
            return PlatformView.from_resources(
                self.bs.machines["compute"], self.bs.machines["storage"], self.opts.bandwidth)
        except PlatformError as exc:
            self.stop_deciding(f"{PREFIX}: {exc}")
            return None

    def open_decision_log(self):
        self.decision_log = DecisionLog(self.opts.decisions_path)

    # ---- events -------------------------------------------------------------
    def admitted(self, job):
        """The Submission of a job a file-aware family may schedule, or None (staging job, rejected, stopping)."""
        if is_staging_job(job.id) or self.fatal is not None:
            return None
        try:
            sub = self.admission.admit(job, self.bs)
        except NoMemory as exc:
            self.stop_deciding(f"{PREFIX}: {exc}")
            return None
        if sub is None:
            return None
        self.jobs[job.id] = job
        self.dirty = True
        return sub

    def onRequestedCall(self):
        now = self.bs.time()
        while self.call_times and self.call_times[0] <= now + TICK:
            self.calls.discard(heapq.heappop(self.call_times))
        for t in sorted(t for t in self.due if t <= now + TICK):
            for st in self.due.pop(t):
                self.issue_staging(st)

    def onNoMoreEvents(self):
        if self.fatal is not None or not self.ready:
            return
        self.end_windows()
        if self.dirty and self.may_schedule():
            self.dirty = False
            waiting, t0, c0 = self.unstarted(), _time.perf_counter(), self.cpu_clock()
            self.schedule(self.bs.time())
            done = _time.perf_counter()
            self.pass_cpu += self.cpu_clock() - c0
            self.pass_times.append((waiting, done - t0))
            if self.first_pass_seconds is None:
                self.first_pass_seconds = done - self.born
        if (not self.finished_registration and self.bs.no_more_static_jobs
                and self.unstarted() == 0 and not self.due and not self.dependents_waiting()
                and not self.stagings_to_come()):
            self.finished_registration = True
            self.bs.notify_registration_finished()

    def onSimulationEnds(self):
        if self.decision_log is not None:
            self.decision_log.close()
        overflows = sum(len(m.overflows) for m in self.memories())
        if overflows:
            log.warning("%d loads did not fit in node memory (cache %s)", overflows, self.opts.cache)
        path = getattr(self.opts, "stats", None)
        if path:
            with open(path, "w") as fh:
                json.dump(self.stats(), fh, indent=1)

    # ---- wake-ups -----------------------------------------------------------
    def call_at(self, t):
        """A REQUESTED_CALL at `t`, or one tick after now if `t` is not later (never in the past)."""
        if not math.isfinite(t):
            return
        t = max(t, self.bs.time() + TICK)
        if t not in self.calls:
            self.calls.add(t)
            heapq.heappush(self.call_times, t)
            self.bs.wake_me_up_at(t)

    # ---- stagings -------------------------------------------------------------
    def issue_staging(self, st):
        """Register and execute the staging job `st` (a ``locality.staging.Staging``) now."""
        profile = st.id.split("!", 1)[1]
        # from Lustre (or another node's memory, or to Lustre: a workflow's output) to the node's memory
        description, mapping = st.endpoints(self.platform.lustre_id, self.platform.mem_ids)
        if quick_answers(self.bs):
            register_and_execute(self.bs, st.id, 2, -1, STAGE_WORKLOAD, profile, description,
                                 procset_of(mapping.values()), mapping)
            return
        self.bs.register_profiles(STAGE_WORKLOAD, {profile: description})
        job = self.bs.register_job(st.id, 2, -1, profile)
        job.allocation = procset_of(mapping.values())
        job.storage_mapping = mapping
        self.bs.execute_job(job)

    def issue_staging_at(self, st, now):
        """Issue `st` at its booked start: now if reached, else through a wake-up."""
        if st.start <= now + TICK:
            self.issue_staging(st)
            return
        self.due.setdefault(st.start, []).append(st)
        self.call_at(st.start)

    # ---- held jobs and their windows ------------------------------------------
    def execute(self, held):
        job = self.jobs[held.job.id]
        job.allocation = held.alloc
        if quick_answers(self.bs):
            execute_job(self.bs, job)
        else:
            self.bs.execute_job(job)

    def watch_window(self, held):
        """`held` took its cores: if it waits for its file, kill it at its window's end.

        Asked now, while that end is still in the future: once the load is over
        it may be past (a load slower than planned), and Batsim refuses a call
        in the past."""
        if held.computing or not math.isfinite(held.deadline):
            return
        if not getattr(self.opts, "walltime_includes_load", True):
            return      # the engine's own walltime, from the execution on, is the only kill
        if held.deadline not in self.kill_at:
            self.kill_at[held.deadline] = []
            heapq.heappush(self.kill_times, held.deadline)
            self.call_at(held.deadline)
        self.kill_at[held.deadline].append(held.job.id)

    def end_windows(self):
        """Kill the held jobs whose window ended by now. Called after the message's last event (a
        family may call it earlier in ``onNoMoreEvents``; a second call finds nothing due), so that a
        job whose completion came in the same message as its timer is not killed."""
        now = self.bs.time()
        held_jobs = self.state.held if self.kill_times else None
        while self.kill_times and self.kill_times[0] <= now + TICK:
            victims = []
            for jid in self.kill_at.pop(heapq.heappop(self.kill_times)):
                held = held_jobs.get(jid)
                if held is None:
                    continue        # it ended within its window
                if not held.computing:
                    # Its load outlasted its window: it leaves the staging's waiters
                    # and ends now, executed and killed, so that it has a final state.
                    self.state.leave_stagings(held)
                    held.computing = True
                    self.execute(held)
                self.state.killed(jid, now)
                victims.append(self.jobs[jid])
            if victims:
                self.bs.kill_jobs(victims)
