"""The proxy's protocol logic: one engine message in, what to tell each side out.

No sockets here (``proxy`` moves the bytes), so every rule can be tested on
plain dicts. Per engine message:

1. ``from_engine``: keep what concerns the proxy (staging completions, the
   platform, job submissions and ends) and build the message the wrapped
   scheduler sees — the same ``now``, minus the staging jobs' events, with a
   SIMULATION_BEGINS config that does not announce dynamic jobs (unless the
   wrapped scheduler registers jobs itself). If nothing is left for it, the
   proxy answers alone and the scheduler is not woken (``None``).
2. ``to_engine``: the scheduler's reply with every EXECUTE_JOB of a
   file-annotated job checked against the node memories (held while its file
   loads, staging jobs added), after the EXECUTE_JOBs released by staging
   completions of this instant. What must wait for a later instant waits for
   a call the proxy asks for itself (``own_calls``).

The wrapped scheduler is shown the compute resources only, numbered 0…n−1
(``compute_ids``): every resource id it receives or sends is translated, so
it cannot place a job on a storage. A job it executes twice is refused.

Workflows (contract §2b): the proxy registers a workflow's dependent jobs
itself, as batloc's schedulers do (``locality.workflow``), unless the wrapped
scheduler registers jobs (``--scheduler-registers``): when a job's last parent
completes, REGISTER_PROFILE and REGISTER_JOB go to the engine first in the
answer, and the wrapped scheduler sees the job's JOB_SUBMITTED right after its
parent's JOB_COMPLETED, in the same message; a job one of whose parents did not
complete is registered and rejected in the engine, unseen by the scheduler.
"""

import sys

from batloc.locality.decision_log import DecisionLog
from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.locality.staging import is_staging_job
from batloc.locality.workflow import DependencyBook, WorkflowError, dependent_profile_name, read_dependents

from .compute_ids import ComputeIds
from .errors import ProxyError
from .one_node import OneNode
from .own_calls import OwnCalls, time_key
from .staging_state import StagingState
from .window_ends import WindowEnds

_TERMINAL = ("COMPLETED_KILLED", "COMPLETED_FAILED", "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED",
             "REJECTED")


def _names_jobs(data):
    """The job ids a REJECT_JOB, CHANGE_JOB_STATE or KILL_JOB names are strings, as the protocol says."""
    if "job_ids" in data:
        return isinstance(data["job_ids"], list) and all(isinstance(j, str) for j in data["job_ids"])
    return isinstance(data.get("job_id"), str)


class Relay:
    def __init__(self, model="paper", decisions_path=None, scheduler_registers=False, walltime_includes_load=True,
                 one_node=False):
        self.model = model
        self.one_node = one_node       # True until SIMULATION_BEGINS, then the OneNode (or None)
        self.decisions_path = decisions_path
        self.scheduler_registers = scheduler_registers
        self.state = None
        self.ids = None                # ComputeIds, from SIMULATION_BEGINS
        self.executed = {}             # job id -> when the wrapped scheduler executed it
        self.now = 0.0
        self.open_jobs = set()         # submitted, not ended: may still need a staging
        self.closed = set()            # ended in the engine (completed, killed, rejected): Batsim forgets them
        self.static_done = False
        self.sched_finished = False    # the wrapped scheduler's own registration_finished
        self.registration_finished = False
        self.calls = OwnCalls()        # future-dated EXECUTE_JOBs, failure notices, window ends
        self.windows = WindowEnds(walltime_includes_load)
        self.inner_allocs = {}         # job id -> its allocation in the wrapped scheduler's ids (executed jobs)
        self.profiles = {}             # job id -> profile name (for JOB_KILLED progress)
        self.ended = False
        self._released = []
        self._due = []
        self._rejected = []            # job ids to reject in the engine: their file fits no node's memory
        self.dependencies = None       # DependencyBook of the workloads' dependent jobs (contract §2b)
        self.dependent_profiles = {}   # dependent job id -> its profile
        self.registered = set()        # dependent jobs registered by the proxy
        self._registrations = []       # REGISTER_*/REJECT_JOB of dependents, sent first in the next answer

    # ---- engine -> scheduler --------------------------------------------------
    def from_engine(self, msg):
        """Returns the message for the wrapped scheduler, or None if it must not be woken."""
        now = msg["now"]
        if now < self.now:
            raise ProxyError(f"the engine's time went backwards ({now} after {self.now})")
        self.now = now
        forward, released, touched = [], [], False
        for e in msg["events"]:
            etype, data = e.get("type"), e.get("data") or {}
            if etype == "JOB_COMPLETED":
                job_id = data.get("job_id")
                if is_staging_job(job_id):
                    released += self.state.staging_done(job_id, now)
                    touched = True
                    continue
                inner = self.inner_allocs.get(job_id)
                due = self._end(job_id, data.get("job_state") == "COMPLETED_SUCCESSFULLY")
                if self.one_node and inner is not None and "alloc" in data:
                    e = dict(e, data=dict(data, alloc=inner))   # the ids its scheduler gave it
                    touched = True
                elif not self.ids.identity and "alloc" in data:
                    e = dict(e, data=dict(data, alloc=self.ids.to_inner(data["alloc"])))
                    touched = True
                if job_id in self.windows.killed:
                    e = self.windows.completed(e)
                    touched = True
                if due:                          # dependents submitted at their last parent's end
                    forward += [e] + due
                    touched = True
                    continue
            elif etype == "JOB_SUBMITTED":
                job_id = data.get("job_id")
                if is_staging_job(job_id) or job_id in self.registered:   # acknowledged registration of ours
                    touched = True
                    continue
                job = data.get("job") or {}
                reason = self.state.submitted(job_id, job)
                if reason is not None:           # the wrapped scheduler never sees it
                    self._reject(job_id, reason)
                    self._end(job_id)            # its dependents cannot run
                    touched = True
                    continue
                self.open_jobs.add(job_id)
                self.profiles[job_id] = job.get("profile")
                self.windows.submitted(job_id, job.get("walltime"))
            elif etype == "JOB_KILLED":
                for job_id in e["data"].get("job_ids", []):
                    self._end(job_id)
                shown = self.windows.shown(e, now)
                if shown != [e]:                 # the proxy's own kills: walltime ends for the scheduler
                    forward += shown
                    touched = True
                    continue
            elif etype == "REQUESTED_CALL":
                shown = self.calls.received(now)
                if shown is not None:            # the proxy's own call
                    touched = True
                    forward += shown
                    continue
            elif etype == "NOTIFY" and data.get("type") == "no_more_static_job_to_submit":
                self.static_done = True
            elif etype == "SIMULATION_BEGINS":
                e = self._begin(e)
            elif etype == "RESOURCE_STATE_CHANGED" and self.ids is not None and (self.one_node or
                                                                                  not self.ids.identity):
                resources = self.ids.to_inner(data.get("resources"))
                if self.one_node:
                    resources = self.one_node.to_scheduler(resources)
                e = dict(e, data=dict(data, resources=resources))
                touched = True
            elif etype == "SIMULATION_ENDS":
                self.ended = True
                if self.state is not None and self.state.log is not None:
                    self.state.log.close()
            forward.append(e)
        self._released = released
        # Future-dated EXECUTE_JOBs come due on our own REQUESTED_CALL.
        self._due = self.calls.due(now)
        touched = touched or bool(self._due)
        if not forward:
            return None
        if not touched and len(forward) == len(msg["events"]) and not any(
                f["type"] == "SIMULATION_BEGINS" for f in forward):
            return msg   # unchanged: the caller may forward the engine's own bytes
        return {"now": now, "events": forward}

    def _begin(self, e):
        data = e.get("data") or {}
        config = dict(data.get("config") or {})
        if not config.get("dynamic-jobs-enabled", False):
            raise ProxyError(
                "the engine runs without dynamic jobs, so the proxy cannot stage files: "
                "run it with --enable-dynamic-jobs (contract §3)")
        try:
            platform = PlatformView.from_resources(data.get("compute_resources") or [],
                                                   data.get("storage_resources") or [])
        except PlatformError as exc:
            raise ProxyError(f"the platform does not fit the staging proxy: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ProxyError("SIMULATION_BEGINS: every resource needs an integer id and a name "
                             f"(got {str(data.get('compute_resources'))[:200]})") from None
        try:
            log = DecisionLog(self.decisions_path) if self.decisions_path else None
        except OSError as exc:
            raise ProxyError(f"cannot write the decision log {self.decisions_path}: {exc.strerror or exc}") from None
        nb_resources = len(data.get("compute_resources") or []) + len(data.get("storage_resources") or [])
        self.state = StagingState(platform, self.model, log, nb_resources)
        if not self.scheduler_registers:
            self._read_workflows(data.get("workloads") or {})
        self.ids = ComputeIds(data.get("compute_resources") or [])
        if self.one_node:
            self.one_node = OneNode([platform.node_of_core.get(i, -1) for i in self.ids.outer])
        if not self.scheduler_registers:
            # The wrapped scheduler must not wait for itself to end the registration.
            config["dynamic-jobs-enabled"] = False
            config["dynamic-jobs-acknowledged"] = False
        return dict(e, data=self.ids.begins(dict(data, config=config)))

    def _end(self, job_id, succeeded=False):
        """A job ended in the engine, or was rejected: returns the JOB_SUBMITTED events of the dependent
        jobs now due (their registration queued for the engine)."""
        if job_id in self.open_jobs:
            self.closed.add(job_id)
        self.open_jobs.discard(job_id)
        self.profiles.pop(job_id, None)
        self.inner_allocs.pop(job_id, None)
        if self.one_node:
            self.one_node.ended(job_id)
        self.state.ended(job_id, self.now, succeeded)
        return self._dependents_due(job_id, succeeded)

    # ---- workflows ------------------------------------------------------------
    def _read_workflows(self, workloads):
        self.dependencies = DependencyBook()
        for name, source in sorted(workloads.items()):
            try:
                jobs, profiles = read_dependents(source, f"workload {name}")
            except WorkflowError as exc:
                raise ProxyError(str(exc)) from None
            for j in jobs:
                self.dependent_profiles[f"{name}!{j['id']}"] = profiles[j["profile"]]
            self.dependencies.add_workload(name, jobs)

    def _dependents_due(self, job_id, succeeded):
        """Register the dependents `job_id`'s end makes due; the ready ones' JOB_SUBMITTED for the scheduler."""
        if not self.dependencies or not isinstance(job_id, str):
            return []
        ready, doomed = self.dependencies.ended(job_id, succeeded)
        shown = []
        for d in ready:
            job = self._register(d)
            reason = self.state.submitted(d.id, job)
            if reason is not None:             # the wrapped scheduler never sees it
                print(f"batloc-stage-proxy: {reason}", file=sys.stderr, flush=True)
                self._registrations.append({"type": "REJECT_JOB", "data": {"job_id": d.id}})
                shown += self._end(d.id)
                continue
            self.open_jobs.add(d.id)
            self.profiles[d.id] = job["profile"]
            self.windows.submitted(d.id, job.get("walltime"))
            shown.append({"timestamp": self.now, "type": "JOB_SUBMITTED", "data": {
                "job_id": d.id, "job": job, "profile": self.dependent_profiles.pop(d.id)}})
        for d in doomed:
            self._register(d)
            self._registrations.append({"type": "REJECT_JOB", "data": {"job_id": d.id}})
        return shown

    def _register(self, d):
        """Queue REGISTER_PROFILE and REGISTER_JOB of dependent `d` for the engine; its job object."""
        pname = dependent_profile_name(d.description["profile"], d.id)
        job = {**d.description, "id": d.id, "subtime": self.now, "profile": pname}
        walltime = job.get("walltime", -1)
        self._registrations += [
            {"type": "REGISTER_PROFILE", "data": {"workload_name": d.workload, "profile_name": pname,
                                                  "profile": self.dependent_profiles[d.id]}},
            {"type": "REGISTER_JOB", "data": {"job_id": d.id, "job": {
                "id": d.id, "res": job["res"], "walltime": walltime if walltime is not None else -1,
                "profile": pname, "subtime": self.now}}}]
        self.registered.add(d.id)
        return job

    def _flush_registrations(self, now):
        out, self._registrations = self._registrations, []
        for ev in out:
            ev["timestamp"] = now
        return out

    # ---- scheduler -> engine ----------------------------------------------------
    def to_engine(self, reply):
        """The reply for the engine: released EXECUTE_JOBs, then the scheduler's events, checked."""
        now = self.now
        out = [{"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": j}} for j in self._rejected]
        self._rejected = []
        out += self._flush_registrations(now)     # before the scheduler may execute a dependent job
        for ev in self._released:          # their stagings completed: they go as decided
            ev["timestamp"] = now
            out.append(ev)
        for ev in self._due:
            out += self._execute(ev, now)
        self._released = self._due = []
        out += self._end_windows(now)
        events = (reply or {}).get("events", []) if reply is not None else []
        self._killed_now(events, now)
        out += self._admit(now)            # room freed by the ends the engine just reported
        for e in events:
            etype, data = e.get("type"), e.get("data") or {}
            if etype == "EXECUTE_JOB":
                self._executed_once(data.get("job_id"), now)
                ts = e.get("timestamp", now)
                if isinstance(ts, (int, float)) and time_key(ts) > time_key(now):
                    out.append(self.calls.defer(e, ts, now))
                else:
                    out += self._execute(e, now)
            elif etype in ("REJECT_JOB", "CHANGE_JOB_STATE", "KILL_JOB") and not _names_jobs(data):
                out.append(e)                   # malformed: the engine refuses it, with its own message
            elif etype == "KILL_JOB":
                out += self._kill(e, now)
            elif etype == "REJECT_JOB":
                self._end(data.get("job_id"))
                out.append(e)
            elif etype == "CHANGE_JOB_STATE" and data.get("job_state") in _TERMINAL:
                if self.state.is_held(data["job_id"]):
                    # running for the wrapped scheduler, never started in the engine: Batsim 4.2.1
                    # lets such a job only become REJECTED
                    e = dict(e, data=dict(data, job_state="REJECTED"))
                self._end(data["job_id"])
                out.append(e)
            elif etype == "CALL_ME_LATER":
                self.calls.theirs(data.get("timestamp"))   # so that its call is told from the proxy's own
                out.append(e)
            elif etype == "SET_RESOURCE_STATE":
                what = f"SET_RESOURCE_STATE at t={now:.6f}"
                out.append(dict(e, data=dict(data, resources=self.ids.to_outer(data.get("resources"), what))))
            elif etype == "NOTIFY" and data.get("type") == "registration_finished":
                self.sched_finished = True      # sent on when the proxy needs no more stagings
            elif etype == "NOTIFY" and data.get("type") == "continue_registration":
                self.sched_finished = self.registration_finished = False
                out.append(e)
            elif etype == "REGISTER_JOB":
                # a job the scheduler adds itself: its file counts like a submitted job's
                job_id, job = data.get("job_id"), data.get("job")
                if isinstance(job_id, str) and isinstance(job, dict) and not is_staging_job(job_id):
                    reason = self.state.submitted(job_id, job)
                    if reason is not None:     # its own job: not ours to reject, but never silently
                        print(f"batloc-stage-proxy: warning: {reason.replace(' rejected', '')}; registered by the "
                              "wrapped scheduler itself, it runs without loading it", file=sys.stderr, flush=True)
                    self.open_jobs.add(job_id)
                    self.profiles[job_id] = job.get("profile")
                out.append(e)
            else:
                out.append(e)
        out += self._admit(now)            # room freed by the scheduler's own rejections and kills
        out += self._flush_registrations(now)     # dependents of the jobs it rejected or killed
        out += self._maybe_finish_registration(now)
        return {"now": now, "events": out}

    def _admit(self, now):
        if not self.state.waiting:
            return []
        events = self.state.admit(now)
        for ev in events:
            ev["timestamp"] = now
        return events

    def _executed_once(self, job_id, now):
        """A job runs once: a second EXECUTE_JOB of it would be lost in the proxy, or run it twice."""
        if not isinstance(job_id, str):
            return                          # malformed: the engine refuses it in its own words
        if job_id in self.executed:
            raise ProxyError(f"the wrapped scheduler executed job {job_id} twice (at t={self.executed[job_id]:.6f} "
                             f"and again at t={now:.6f}); refused")
        self.executed[job_id] = now

    def _execute(self, inner, now):
        data = inner.get("data") or {}
        what = f"EXECUTE_JOB of {data.get('job_id')} at t={now:.6f}"
        if data.get("storage_mapping"):
            raise ProxyError(f"{what}: the wrapped scheduler sent a storage_mapping, but it is shown no storage "
                             "(the proxy stages files itself)")
        alloc = self.ids.to_outer(data.get("alloc"), what)
        if self.one_node and isinstance(data.get("job_id"), str) and self.state.info.get(data["job_id"]):
            alloc = self.ids.to_outer(self.one_node.place(data["job_id"], data.get("alloc")), what)
        e = dict(inner, data=dict(data, alloc=alloc))
        reason = self.state.oversized(e)
        if reason is not None:
            # Never loaded where it cannot fit: rejected in the engine; the wrapped scheduler, which
            # holds its cores, learns at once (on the proxy's own call at this instant) that it failed.
            data = e["data"]
            self._end(data["job_id"])
            print(f"batloc-stage-proxy: {reason}", file=sys.stderr, flush=True)
            call = self.calls.notify_later({"timestamp": now, "type": "JOB_COMPLETED", "data": {
                "job_id": data["job_id"], "job_state": "COMPLETED_FAILED", "return_code": 1,
                "kill_reason": "", "alloc": inner["data"].get("alloc", "")}}, now)
            return [{"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": data["job_id"]}}, call]
        events = self.state.execute(e, now)
        self.inner_allocs[data["job_id"]] = inner["data"].get("alloc", "")
        # Executed at once (no file, or a hit): the engine's walltime is the window; a timer only for a
        # job held for its file, as batloc's own schedulers set one (schedulers/base.py)
        runs_now = any(ev.get("type") == "EXECUTE_JOB" and (ev.get("data") or {}).get("job_id") == data["job_id"]
                       for ev in events)
        end = None if runs_now else self.windows.started(data["job_id"], now)
        if end is not None:
            events.append(self.calls.wake(end, now))
        for ev in events:
            ev["timestamp"] = now
        return events

    def _end_windows(self, now):
        """Kill the jobs whose window ends now (``window_ends``): a job still held is executed and killed."""
        out = []
        for job_id in self.windows.due(now):
            if job_id not in self.open_jobs:
                continue                    # it ended within its window
            self.windows.kill(job_id, self.inner_allocs.get(job_id, ""))
            event = self.state.held_event(job_id)
            if event is not None:
                self.state.given_up(job_id, now)   # its room and its wait for a load are given up now
                out.append(dict(event, timestamp=now))
            else:
                self.state.ended(job_id, now)      # computing: it ends now for its node's memory
            out.append({"timestamp": now, "type": "KILL_JOB", "data": {"job_ids": [job_id]}})
        return out

    def _killed_now(self, events, now):
        """The running jobs the scheduler kills in this reply end now for their nodes' memory, before any
        start of this instant is claimed, whatever the order of its events (contract §5, *one instant*;
        their cores are the engine's to free)."""
        for e in events:
            data = e.get("data") or {}
            if e.get("type") == "KILL_JOB" and _names_jobs(data):
                for job_id in data["job_ids"]:
                    if job_id in self.state.running_nodes and not self.state.is_held(job_id):
                        self.state.ended(job_id, now)

    def _reject(self, job_id, reason):
        print(f"batloc-stage-proxy: {reason}", file=sys.stderr, flush=True)
        self._rejected.append(job_id)

    def _kill(self, e, now):
        """A KILL_JOB of the wrapped scheduler, made one that Batsim 4.2.1 accepts.

        Batsim aborts on a kill of a job it never started (a job held here while its file loads or waits
        for room, or executed by the scheduler for a later instant) and of a job whose end it has reported
        (it forgets the job once that message is sent), e.g. one the proxy rejected in the engine. The
        first are rejected in the engine and their kill reported to the scheduler by the proxy; the kill
        of the others is answered by the proxy with the JOB_KILLED Batsim sends for a job that ended before
        its kill (no progress), both at the protocol's next instant. The rest goes to the engine."""
        data = e.get("data") or {}
        out = []
        held = [j for j in data["job_ids"] if self.state.is_held(j) or self.calls.cancel(j)]
        ended = [j for j in data["job_ids"] if j in self.closed and j not in held]
        if ended:
            out.append(self.calls.notify_later({"timestamp": now, "type": "JOB_KILLED", "data": {
                "job_ids": ended, "job_progress": {}}}, now))
        if held:
            # Still waiting for its file: the engine never started it, and Batsim 4.2.1 refuses to kill
            # (or "complete") a job that did not run, so it is rejected there; the wrapped scheduler
            # learns of its kill from the proxy, at the protocol's next instant.
            progress = {j: {"profile_name": self.profiles.get(j), "progress": 0.0} for j in held}
            for job_id in held:
                out.append({"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": job_id}})
                self._end(job_id)
            out.append(self.calls.notify_later({"timestamp": now, "type": "JOB_KILLED", "data": {
                "job_ids": held, "job_progress": progress}}, now))
        rest = [j for j in data["job_ids"] if j not in held and j not in ended]
        if rest or not (held or ended):
            out.append(dict(e, data=dict(data, job_ids=rest)) if held or ended else e)
        return out

    def _maybe_finish_registration(self, now):
        if self.registration_finished or not self.static_done:
            return []
        if self.scheduler_registers and not self.sched_finished:
            return []
        if self.open_jobs or self.state.busy() or self.calls.pending() or self.dependencies:
            return []
        self.registration_finished = True
        return [{"timestamp": now, "type": "NOTIFY", "data": {"type": "registration_finished"}}]
