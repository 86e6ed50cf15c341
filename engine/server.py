"""The engine's event loop: one SimGrid actor, timers in a Python heap, the Batsim protocol.

SimGrid's Python bindings run each actor as an OS thread, so one actor per job
is slow (every switch is a thread hand-off). Here a single actor owns the
simulation: delays, walltimes, submissions and requested calls are entries of
a heap; only what needs SimGrid's flow model (transfers, executions) becomes
SimGrid activities, waited for with `wait_any_for(time to next timer)`. While
no activity is in flight SimGrid is not called at all; its clock catches up
(`sleep_until`) just before the next activity starts.

Everything that happens at one simulated instant is sent to the scheduler as
one message; its decisions apply at that instant (or later, if it dates them).
"""

import heapq
import itertools
import sys

from .errors import EngineError
from .io_gate import exclusive_io
from .protocol import decode, encode
from .profiles import Delay, check_profile, format_intervals, parse_intervals, phases
from .workload import Job, Workload

INF = float("inf")
# At equal times: ends of phases before walltime kills (a job that ends exactly
# at its walltime succeeded), then requested calls, then deferred decisions.
PHASE_END, WALLTIME, CALL, DEFERRED = 0, 1, 2, 3


class Simulation:
    def __init__(self, sg, engine, platform, workloads, link, exporter, options, progress=None):
        self.sg = sg
        self.engine = engine
        self.platform = platform
        self.workloads = {w.name: w for w in workloads}
        self.link = link
        self.out = exporter
        self.opt = options
        self.progress = progress
        self.now = 0.0
        self.heap = []
        self.seq = itertools.count()
        self.events = []
        order = ((j.subtime, wi, ji, j) for wi, w in enumerate(workloads) for ji, j in enumerate(w.jobs))
        self.static = [t[3] for t in sorted(order, key=lambda t: t[:3])]
        self.next_static = 0
        self.jobs = {}
        self.unfinished = 0
        self.busy = {}  # compute resource id -> job id using it
        self.nb_computing = 0
        self.registration_open = options.dynamic_jobs
        self.acts = sg.ActivitySet()
        self.act_count = 0
        self.act_owner = {}
        self.dynamic_profiles = set()
        self.by_id = {r.id: r for r in platform.resources}
        self.messages = 0
        self.warned_storage = False
        self.io = exclusive_io(platform, self.next_phase)  # None unless a storage is pfs_access=exclusive

    # ---- time -----------------------------------------------------------
    def push(self, time, kind, job=None, data=None):
        token = job.token if job is not None else 0
        heapq.heappush(self.heap, (time, kind, next(self.seq), job, token, data))

    def next_time(self):
        t = self.heap[0][0] if self.heap else INF
        if self.next_static < len(self.static):
            t = min(t, self.static[self.next_static].subtime)
        return t

    def sync_simgrid(self):
        if self.engine.clock < self.now:
            self.sg.this_actor.sleep_until(self.now)

    def advance(self, t):
        """Move to the next instant at which something happens, and make it happen."""
        if self.act_count:
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
        static = self.static
        while self.next_static < len(static) and static[self.next_static].subtime <= now:
            self.submit(static[self.next_static])
            self.next_static += 1
            if self.next_static == len(static):
                self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})

    # ---- protocol ---------------------------------------------------------
    def emit(self, etype, data):
        # Batsim prints times with six decimals; events are always sent at the instant they happen
        self.events.append({"timestamp": round(self.now, 6), "type": etype, "data": data})

    def flush(self):
        while self.events:
            events, self.events = self.events, []
            now = round(self.now, 6)
            reply = self.link.exchange(encode({"now": now, "events": events}), self.now)
            self.messages += 1
            self.apply_reply(reply)

    def apply_reply(self, raw):
        try:
            msg = decode(raw)
            events = msg["events"]
            if not isinstance(events, list):
                raise TypeError
        except (ValueError, KeyError, TypeError):  # JSON decode errors are ValueErrors
            raise EngineError(
                f"the scheduler's answer at t={self.now:.6f} is not a Batsim message: {raw[:200]!r}") from None
        for event in events:
            ts = event.get("timestamp", self.now) if isinstance(event, dict) else None
            if isinstance(ts, (int, float)) and ts > self.now + 1e-9:
                self.push(float(ts), DEFERRED, data=event)
            else:
                self.apply_event(event)

    def apply_event(self, event):
        if not isinstance(event, dict) or "type" not in event:
            raise EngineError(f"the scheduler sent a malformed event at t={self.now:.6f}: {event!r}")
        handler = _HANDLERS.get(event["type"])
        if handler is None:
            raise EngineError(f"the scheduler sent an unknown event type {event['type']!r} at t={self.now:.6f}")
        data = event.get("data", {})
        if not isinstance(data, dict):
            raise EngineError(f"the scheduler's {event['type']} event has no data object: {event!r}")
        handler(self, data)

    def job_named(self, job_id, what):
        job = self.jobs.get(job_id)
        if job is None:
            raise EngineError(f"the scheduler asked to {what} job {job_id!r}, which is unknown to the engine")
        return job

    def on_execute(self, data):
        job = self.job_named(data.get("job_id"), "execute")
        if job.state != "SUBMITTED":
            raise EngineError(f"the scheduler executed job {job.id!r}, which is {job.state}, not waiting")
        try:
            ids = parse_intervals(data.get("alloc", ""))
        except EngineError as e:
            raise EngineError(f"{self._execute_context(job)}: {e}") from None
        by_id, busy = self.by_id, self.busy
        resources = []
        for rid in ids:
            r = by_id.get(rid)
            if r is None:
                raise EngineError(
                    f"{self._execute_context(job)}: resource {rid} does not exist (the platform has ids 0-{len(by_id) - 1})")
            if rid in busy:  # holds compute ids only: storages may be shared
                raise EngineError(f"{self._execute_context(job)}: resource {rid} ({r.name}) is already used by job {busy[rid]!r}")
            resources.append(r)
        if len(set(ids)) != len(ids):
            raise EngineError(f"{self._execute_context(job)}: allocation {data['alloc']!r} names a resource twice")
        if len(resources) != job.res:
            raise EngineError(f"{self._execute_context(job)}: allocation {data['alloc']!r} has {len(resources)} resources, "
                              f"the job requests {job.res}")
        mapping = data.get("storage_mapping") or {}

        def storage(label):
            if label in mapping:
                r = self.by_id.get(mapping[label])
                if r is None:
                    raise EngineError(f"{self._execute_context(job)}: storage_mapping {label!r} names resource "
                                      f"{mapping[label]!r}, which does not exist")
                return r.host
            if len(self.platform.storage) == 1:
                return self.platform.storage[0].host
            raise EngineError(f"{self._execute_context(job)}: the profile uses storage {label!r} but storage_mapping does not map it")

        profiles = self.workloads[job.workload].profiles
        if not self.warned_storage and profiles[job.profile]["type"] != "data_staging" and any(
                r.kind == "storage" for r in resources):
            self.warned_storage = True
            name = next(r.name for r in resources if r.kind == "storage")
            print(f"batloc-batsim: warning: {self._execute_context(job)}: job runs on storage resource {name} (a scheduler that "
                  "ignores storage_resources?); its timing is not meaningful. Warned once.", file=sys.stderr)
        job.state = "RUNNING"
        job.start = self.now
        job.alloc = resources
        job.alloc_str = format_intervals(ids)
        computing = 0
        for r in resources:
            if r.kind == "compute":
                busy[r.id] = job.id
                computing += 1
        self.nb_computing += computing
        self.out.machine_state(self.now, self.nb_computing)
        job.pdata = profiles[job.profile]
        job.runner = phases(job.pdata, profiles, [r.host for r in resources], storage)
        if job.walltime > 0:
            self.push(self.now + job.walltime, WALLTIME, job)
        self.next_phase(job)

    def _execute_context(self, job):
        return f"EXECUTE_JOB of {job.id!r} at t={self.now:.6f}"

    def on_reject(self, data):
        job = self.job_named(data.get("job_id"), "reject")
        if job.state != "SUBMITTED":
            raise EngineError(f"the scheduler rejected job {job.id!r}, which is {job.state}, not waiting")
        job.state = "REJECTED"
        self.finish_bookkeeping(job)

    def on_kill(self, data):
        ids = data.get("job_ids", [])
        progress = {}
        for job_id in ids:
            job = self.job_named(job_id, "kill")
            if job.state == "RUNNING":
                progress[job.id] = {"profile": job.profile, "progress": self.progress_of(job)}
                self.end_job(job, "COMPLETED_KILLED", -1, announce=False)
            elif job.state == "SUBMITTED":
                print(f"batloc-batsim: warning: KILL_JOB of {job.id!r}, which has not started; ignored",
                      file=sys.stderr)
        self.emit("JOB_KILLED", {"job_ids": list(ids), "job_progress": progress})

    def on_call_me_later(self, data):
        ts = data.get("timestamp")
        if isinstance(ts, bool) or not isinstance(ts, (int, float)):
            raise EngineError(f"CALL_ME_LATER at t={self.now:.6f} without a numeric timestamp: {data!r}")
        self.push(max(float(ts), self.now), CALL)

    def on_register_profile(self, data):
        self.require_dynamic("REGISTER_PROFILE")
        wname, pname, profile = data.get("workload_name"), data.get("profile_name"), data.get("profile")
        if not isinstance(wname, str) or not isinstance(pname, str):
            raise EngineError(f"REGISTER_PROFILE at t={self.now:.6f} needs workload_name and profile_name")
        workload = self.workloads.setdefault(wname, Workload(wname))
        check_profile(profile, f"REGISTER_PROFILE {wname}!{pname}", workload.profiles)
        if pname in workload.profiles:
            raise EngineError(f"REGISTER_PROFILE: profile {pname!r} already exists in workload {wname!r}")
        workload.profiles[pname] = profile
        self.dynamic_profiles.add((wname, pname))

    def on_register_job(self, data):
        self.require_dynamic("REGISTER_JOB")
        if not self.registration_open:
            raise EngineError(f"REGISTER_JOB at t={self.now:.6f} after the scheduler's registration_finished")
        job_id = data.get("job_id")
        desc = dict(data.get("job") or {})
        if not isinstance(job_id, str):
            raise EngineError(f"REGISTER_JOB at t={self.now:.6f} without a job_id")
        wname, sep, local = job_id.partition("!")
        if not sep:
            raise EngineError(f"REGISTER_JOB: job id {job_id!r} must read WORKLOAD!JOB")
        if job_id in self.jobs:
            raise EngineError(f"REGISTER_JOB: job {job_id!r} already exists")
        workload = self.workloads.get(wname)
        pname = desc.get("profile")
        if workload is None or pname not in workload.profiles:
            hint = "" if self.opt.profile_reuse else (
                " (without --enable-profile-reuse a dynamic profile is deleted once its first job ends)")
            raise EngineError(f"REGISTER_JOB {job_id!r}: profile {pname!r} of workload {wname!r} is unknown{hint}")
        res = desc.get("res")
        if isinstance(res, bool) or not isinstance(res, int) or res < 1:
            raise EngineError(f"REGISTER_JOB {job_id!r}: 'res' must be a positive integer, got {res!r}")
        walltime = desc.get("walltime", -1)
        walltime = -1.0 if walltime is None else float(walltime)
        desc["id"] = job_id
        desc.setdefault("subtime", self.now)
        job = Job(wname, local, desc, self.now, res, walltime, pname)
        self.submit(job, announce=self.opt.ack_dynamic)

    def on_notify(self, data):
        kind = data.get("type")
        if kind == "registration_finished":
            self.registration_open = False
        elif kind == "continue_registration":
            self.registration_open = self.opt.dynamic_jobs
        else:
            raise EngineError(f"the scheduler sent an unknown NOTIFY type {kind!r} at t={self.now:.6f}")

    def on_set_metadata(self, data):
        job = self.job_named(data.get("job_id"), "set metadata of")
        job.metadata = str(data.get("metadata", ""))

    def on_change_job_state(self, data):
        job = self.job_named(data.get("job_id"), "change the state of")
        state = data.get("job_state")
        if job.state in ("SUBMITTED", "RUNNING") and state in ("COMPLETED_KILLED", "COMPLETED_FAILED",
                                                              "COMPLETED_SUCCESSFULLY"):
            if job.state == "RUNNING":
                self.end_job(job, state, -1, announce=False)
            else:
                job.start = job.finish = self.now
                job.state = state
                self.finish_bookkeeping(job)

    def on_set_resource_state(self, data):
        # No power model: acknowledge so that schedulers waiting for it go on.
        self.emit("RESOURCE_STATE_CHANGED", {"resources": data.get("resources", ""), "state": data.get("state", "")})

    def on_query(self, data):
        requests = data.get("requests", {})
        if "consumed_energy" in requests:
            self.emit("ANSWER", {"consumed_energy": 0.0})

    def require_dynamic(self, what):
        if not self.opt.dynamic_jobs:
            raise EngineError(f"the scheduler sent {what} at t={self.now:.6f}, but dynamic jobs are disabled "
                              "(run the engine with --enable-dynamic-jobs)")

    # ---- jobs ---------------------------------------------------------------
    def submit(self, job, announce=True):
        job.state = "SUBMITTED"
        self.jobs[job.id] = job
        self.unfinished += 1
        if announce:
            desc = job.description  # the engine's own copy of the input: sent as is, id rewritten
            desc["id"] = job.id
            data = {"job_id": job.id, "job": desc}
            if self.opt.forward_profiles:
                data["profile"] = self.workloads[job.workload].profiles[job.profile]
            self.emit("JOB_SUBMITTED", data)

    def next_phase(self, job):
        if self.io is not None:
            self.io.leave(job)
        try:
            phase = next(job.runner)
        except StopIteration:
            ret = job.pdata.get("ret", 0)
            self.end_job(job, "COMPLETED_SUCCESSFULLY" if ret == 0 else "COMPLETED_FAILED", ret)
            return
        except EngineError as e:
            raise EngineError(f"job {job.id!r}: {e}") from None
        job.phase_start = self.now
        if type(phase) is Delay:
            job.activities = None
            job.phase_end = self.now + phase.seconds
            self.push(job.phase_end, PHASE_END, job)
            return
        job.phase_end = None
        if self.io is not None and not self.io.admit(job, phase):
            return  # waits for exclusive file-system access; the gate resumes it
        self.sync_simgrid()
        acts = []
        try:
            for host, flops in phase.execs:
                ex = self.sg.this_actor.exec_init(flops)
                ex.host = host
                acts.append(ex.start())
            for src, dst, size in phase.comms:
                acts.append(self.sg.Comm.sendto_async(src, dst, int(size)))
        except Exception as e:
            raise EngineError(f"job {job.id!r} (profile {job.profile!r}) cannot run on its allocation: {e}") from None
        if not acts:
            self.push(self.now, PHASE_END, job)
            return
        job.activities = acts
        for a in acts:
            self.acts.push(a)
            self.act_owner[a] = job
        self.act_count += len(acts)

    def activity_done(self, act):
        self.act_count -= 1
        job = self.act_owner.pop(act)
        job.activities.remove(act)
        if not job.activities:
            job.activities = None
            self.next_phase(job)

    def progress_of(self, job):
        if job.phase_end is not None and job.phase_end > job.phase_start:
            return min(1.0, (self.now - job.phase_start) / (job.phase_end - job.phase_start))
        return 0.0

    def end_job(self, job, state, return_code, announce=True):
        if self.io is not None:
            self.io.forget(job)
        if job.activities:
            for a in job.activities:
                self.act_owner.pop(a, None)
                self.acts.erase(a)
                a.cancel()
                self.act_count -= 1
            job.activities = None
        job.token += 1
        job.runner = None
        job.state = state
        job.finish = self.now
        for r in job.alloc:
            if r.kind == "compute":
                del self.busy[r.id]
                self.nb_computing -= 1
        self.out.machine_state(self.now, self.nb_computing)
        self.finish_bookkeeping(job)
        if announce:
            self.emit("JOB_COMPLETED", {
                "job_id": job.id, "job_state": state, "return_code": return_code,
                "kill_reason": "", "alloc": job.alloc_str,
            })
        key = (job.workload, job.profile)
        if key in self.dynamic_profiles and not self.opt.profile_reuse:
            # Batsim 4.2 deletes a dynamic profile once its first job ends (contract §3)
            self.workloads[job.workload].profiles.pop(job.profile, None)
            self.dynamic_profiles.discard(key)

    def finish_bookkeeping(self, job):
        self.unfinished -= 1
        self.out.job(job)
        if self.progress is not None and self.workloads[job.workload].path is not None:
            self.progress.job_done()

    # ---- the run ------------------------------------------------------------
    def begin_message(self):
        p = self.platform
        return {
            "nb_resources": len(p.resources),
            "nb_compute_resources": len(p.compute),
            "nb_storage_resources": len(p.storage),
            "allow_compute_sharing": False,
            "allow_storage_sharing": True,
            "config": {
                "redis-enabled": False,
                "redis-hostname": "127.0.0.1",
                "redis-port": 6379,
                "redis-prefix": "default",
                "profiles-forwarded-on-submission": self.opt.forward_profiles,
                "dynamic-jobs-enabled": self.opt.dynamic_jobs,
                "dynamic-jobs-acknowledged": self.opt.ack_dynamic,
                "profile-reuse-enabled": self.opt.profile_reuse,
                "forward-unknown-events": False,
            },
            "compute_resources": [r.describe() for r in p.compute],
            "storage_resources": [r.describe() for r in p.storage],
            "workloads": {w.name: w.path for w in self.workloads.values()},
            "profiles": {w.name: w.profiles for w in self.workloads.values()},
        }

    def finished(self):
        return (self.next_static >= len(self.static) and self.unfinished == 0
                and not self.registration_open and not self.events)

    def run(self):
        self.emit("SIMULATION_BEGINS", self.begin_message())
        if not self.static:
            self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})
        self.flush()
        while True:
            if self.finished():
                break
            t = self.next_time()
            if t == INF and not self.act_count:
                if self.unfinished == 0 and self.next_static >= len(self.static):
                    # Only the scheduler could add work, and nothing will call it again.
                    print("batloc-batsim: warning: every job ended but the scheduler never sent "
                          "NOTIFY registration_finished; ending the simulation", file=sys.stderr)
                    self.registration_open = False
                    continue
                self.deadlock()
            self.advance(t)
            if self.progress is not None:
                self.progress.update(self.now)
            self.flush()
        self.emit("SIMULATION_ENDS", {})
        self.flush()

    def write_unfinished(self):
        """After a fatal error: write every job not yet written, so that none is silently lost."""
        for job in self.jobs.values():
            if job.state in ("SUBMITTED", "RUNNING"):
                self.out.unfinished(job)
        for job in self.static[self.next_static:]:
            self.out.unfinished(job)

    def deadlock(self):
        waiting = [j.id for j in self.jobs.values() if j.state == "SUBMITTED"]
        shown = ", ".join(waiting[:5]) + (" …" if len(waiting) > 5 else "")
        raise EngineError(
            f"deadlock at t={self.now:.6f}: {len(waiting)} job(s) wait ({shown}) but nothing is running and "
            "the scheduler asked for no further call (they are written to jobs.csv as SUBMITTED)")


_HANDLERS = {
    "EXECUTE_JOB": Simulation.on_execute,
    "REJECT_JOB": Simulation.on_reject,
    "KILL_JOB": Simulation.on_kill,
    "CALL_ME_LATER": Simulation.on_call_me_later,
    "REGISTER_PROFILE": Simulation.on_register_profile,
    "REGISTER_JOB": Simulation.on_register_job,
    "NOTIFY": Simulation.on_notify,
    "SET_JOB_METADATA": Simulation.on_set_metadata,
    "CHANGE_JOB_STATE": Simulation.on_change_job_state,
    "SET_RESOURCE_STATE": Simulation.on_set_resource_state,
    "QUERY": Simulation.on_query,
}
