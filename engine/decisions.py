"""The decisions a scheduler sends, one handler per Batsim event type, each checking its fields.

Handlers run on the `Simulation` (``server``) at the instant the decision
applies; anything the engine cannot do is an `EngineError` naming the event,
the job and the field at fault.
"""

from .checks import integer, number, shown, string, walltime
from .errors import EngineError
from .mailbox import refuse_gone
from .profiles import check_profile, phases
from .protocol import format_intervals, parse_intervals
from .timers import CALL, MICROSECOND_EXACT, WALLTIME
from .workload import Job, Workload, check_end

# Allocation texts whose reading is kept (a few MB at most)
ALLOCATIONS_KEPT = 50_000
# Batsim's job states, the values CHANGE_JOB_STATE may name
JOB_STATES = ("NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")


class DecisionHandlers:
    """The `on_*` methods of `Simulation`, dispatched by `HANDLERS`."""

    def job_named(self, job_id, what):
        if not isinstance(job_id, str):
            raise EngineError(f"the scheduler asked to {what} a job at t={self.now:.6f} but its job_id "
                              f"is not a string: {shown(job_id)}")
        job = self.jobs.get(job_id)
        if job is None:
            raise EngineError(f"the scheduler asked to {what} job {shown(job_id)}, which is unknown to the engine")
        return job

    def on_execute(self, data):
        job = self.job_named(data.get("job_id"), "execute")
        if job.state != "SUBMITTED":
            raise EngineError(f"the scheduler executed job {job.id!r}, which is {job.state}, not waiting")
        ids, alloc_str, repeats = self._allocation(data.get("alloc", ""), job)
        by_id, busy = self.by_id, self.busy
        resources = []
        for rid in ids:
            r = by_id[rid]
            if rid in busy:  # holds compute ids only: storages may be shared
                raise EngineError(f"{self._execute_context(job)}: resource {rid} ({r.name}) is already used by job {busy[rid]!r}")
            resources.append(r)
        if repeats:
            raise EngineError(f"{self._execute_context(job)}: allocation {shown(data['alloc'])} names a resource twice")
        if len(resources) != job.res:
            raise EngineError(f"{self._execute_context(job)}: allocation {shown(data['alloc'])} has {len(resources)} resources, "
                              f"the job requests {job.res}")
        mapping = self._storage_mapping(data.get("storage_mapping"), job)

        def storage(label):
            if label in mapping:
                return mapping[label].host
            if len(self.platform.storage) == 1:
                return self.platform.storage[0].host
            raise EngineError(f"{self._execute_context(job)}: the profile uses storage {label!r} but storage_mapping does not map it")

        profiles = self.workloads[job.workload].profiles
        if self.now > MICROSECOND_EXACT:   # only a start near the largest double can overflow (checked at load)
            check_end(self._execute_context(job), self.now, job.walltime, job.profile, profiles, "its start")
        if profiles[job.profile]["type"] != "data_staging" and any(r.kind == "storage" for r in resources):
            name = next(r.name for r in resources if r.kind == "storage")
            self.warn_once("storage", f"{self._execute_context(job)}: job runs on storage resource {name} (a "
                                      "scheduler that ignores storage_resources?); its timing is not meaningful")
        job.state = "RUNNING"
        job.start = self.now
        job.alloc = resources
        job.alloc_str = alloc_str
        computing = 0
        for r in resources:
            if r.kind == "compute":
                busy[r.id] = job.id
                computing += 1
        self.nb_computing += computing
        self.out.started(job, self.now, self.nb_computing)
        job.pdata = profiles[job.profile]
        # Batsim's executors take the allocation in id order (an interval set)
        job.trail = []
        job.runner = phases(job.pdata, profiles, [r.host for r in sorted(resources, key=lambda r: r.id)], storage,
                            self.workloads[job.workload].traces, job.trail, job.profile)
        if self.timed:
            job.remaining = job.walltime   # Batsim's remaining_time (jobs_execution.cpp): < 0 without walltime
        elif job.walltime > 0:
            self.push(self.now + job.walltime, WALLTIME, job)
        try:
            self.next_phase(job)
        except EngineError:
            self.unstart(job)   # refused before it ran: its row says SUBMITTED, not RUNNING on an allocation
            raise

    def _allocation(self, alloc, job):
        """(resource ids, Batsim's text of them, whether an id repeats) of an EXECUTE_JOB's alloc.

        Kept per text: a saturated run sends the same few thousand allocations tens of thousands of times."""
        known = self.allocations.get(alloc) if type(alloc) is str else None
        if known is None:
            try:
                ids = parse_intervals(alloc, len(self.by_id))
            except EngineError as e:
                raise EngineError(f"{self._execute_context(job)}: {e}") from None
            known = (ids, format_intervals(ids), len(set(ids)) != len(ids))
            if len(self.allocations) < ALLOCATIONS_KEPT:
                self.allocations[alloc] = known
        return known

    def _execute_context(self, job):
        return f"EXECUTE_JOB of {job.id!r} at t={self.now:.6f}"

    def _storage_mapping(self, mapping, job):
        """{label: Resource} from the event's storage_mapping ({label: resource id})."""
        if mapping is None:
            return {}
        if not isinstance(mapping, dict):
            raise EngineError(f"{self._execute_context(job)}: storage_mapping must be an object "
                              f"{{label: resource id}}, got {shown(mapping)}")
        out = {}
        for label, rid in mapping.items():
            r = self.by_id.get(rid) if isinstance(rid, int) and not isinstance(rid, bool) else None
            if r is None:
                raise EngineError(f"{self._execute_context(job)}: storage_mapping {label!r} names resource "
                                  f"{shown(rid)}, which does not exist")
            out[label] = r
        return out

    def on_reject(self, data):
        job = self.job_named(data.get("job_id"), "reject")
        if job.state != "SUBMITTED":
            raise EngineError(f"the scheduler rejected job {job.id!r}, which is {job.state}, not waiting")
        job.state = "REJECTED"
        self.finish_bookkeeping(job)
        self.to_delete.append(job)

    def on_kill(self, data):
        """Batsim 4.2.1 (server.cpp, jobs_execution.cpp killer_process): a kill of a running job ends it; of a job
        that ended but whose end the scheduler has not heard of yet, changes nothing; either way JOB_KILLED
        follows, with JOB_COMPLETED first for a job really killed. A job already named by a kill is skipped
        (no JOB_KILLED if none is left). A kill of a job that never ran, or that the scheduler was told ended
        (Batsim has deleted it by then), aborts Batsim: the engine refuses both."""
        ids = data.get("job_ids")
        if not isinstance(ids, list):
            raise EngineError(f"KILL_JOB at t={self.now:.6f}: job_ids must be a list of job ids, got {shown(ids)}")
        jobs = []
        for job_id in ids:
            job = self.job_named(job_id, "kill")
            if job.gone:
                refuse_gone(job, "KILL_JOB", self.now)
            if job.kill_asked:
                continue
            if job.state in ("SUBMITTED", "REJECTED"):
                raise EngineError(f"KILL_JOB at t={self.now:.6f}: job {job.id!r} has not started, it is {job.state} "
                                  "(Batsim 4.2.1 refuses it too: only a job that ran can be killed; REJECT_JOB ends "
                                  "a waiting one)")
            job.kill_asked = True
            jobs.append(job)
        if not jobs:
            return
        if self.timed:
            self.start_killer(jobs)
        else:
            self.kills_done(jobs, self.kill_running(jobs))

    def kill_running(self, jobs):
        """The killer's work: end the running ones now; returns their progress."""
        progress = {}
        for job in jobs:
            if job.state == "RUNNING":
                progress[job.id] = self.progress_of(job)
                self.end_job(job, "COMPLETED_KILLED", -1, announce=False)
        return progress

    def kills_done(self, jobs, progress):
        """The server hears the killer is done (server_on_killing_done)."""
        for job in jobs:
            if job.state == "COMPLETED_KILLED" and not job.written:
                self.announce_end(job)
        self.emit("JOB_KILLED", {"job_ids": [job.id for job in jobs], "job_progress": progress})

    def on_call_me_later(self, data):
        where = f"CALL_ME_LATER at t={self.now:.6f}"
        ts = number(data.get("timestamp"), "timestamp", where)
        if ts <= self.now:
            # Batsim 4.2.1 aborts here (server.cpp: "You asked to be awaken in the past!"); a call
            # for now would also let a scheduler loop at one instant.
            if not self.opt.lenient_calls:
                raise EngineError(f"{where} asks to be called at t={ts:.6f}, which is not in the future "
                                  "(Batsim 4.2.1 refuses it; --lenient-call-me-later calls such a scheduler now)")
            self.warn_once("past call", f"{where} asks for t={ts:.6f}, which is not in the future: called now "
                                        "(--lenient-call-me-later; Batsim 4.2.1 refuses it)")
        if self.timed:
            self.start_waiter(ts)   # Batsim's waiter: 10 µs at least
        else:
            self.push(max(ts, self.now), CALL)

    def on_register_profile(self, data):
        self.require_dynamic("REGISTER_PROFILE")
        wname, pname, profile = data.get("workload_name"), data.get("profile_name"), data.get("profile")
        if not isinstance(wname, str) or not isinstance(pname, str):
            raise EngineError(f"REGISTER_PROFILE at t={self.now:.6f} needs workload_name and profile_name")
        workload = self.workloads.setdefault(wname, Workload(wname))
        check_profile(profile, f"REGISTER_PROFILE {wname}!{pname}", workload.profiles)
        if profile["type"] == "usage_trace":   # Batsim asserts it: its trace is found from a workload file's folder
            raise EngineError(f"REGISTER_PROFILE {wname}!{pname} at t={self.now:.6f}: a usage_trace profile can only "
                              "come from a workload file (Batsim 4.2.1 reads its trace relative to that file)")
        if pname in workload.profiles:
            raise EngineError(f"REGISTER_PROFILE: profile {shown(pname)} already exists in workload {wname!r}")
        workload.profiles[pname] = profile
        self.dynamic_profiles.add((wname, pname))

    def on_register_job(self, data):
        self.require_dynamic("REGISTER_JOB")
        if not self.registration_open:
            raise EngineError(f"REGISTER_JOB at t={self.now:.6f} after the scheduler's registration_finished")
        job_id, desc = data.get("job_id"), data.get("job")
        if not isinstance(job_id, str):
            raise EngineError(f"REGISTER_JOB at t={self.now:.6f} without a job_id (a string)")
        if not isinstance(desc, dict):
            raise EngineError(f"REGISTER_JOB {shown(job_id)}: 'job' must be an object, got {shown(desc)}")
        desc = dict(desc)
        wname, sep, local = job_id.partition("!")
        if not (sep and wname and local):
            raise EngineError(f"REGISTER_JOB: job id {shown(job_id)} must read WORKLOAD!JOB, neither part empty")
        workload = self.workloads.get(wname)
        if job_id in self.jobs or (workload is not None and workload.holds(local)):
            # a workload's job not yet submitted counts too: its row would be lost when it comes
            raise EngineError(f"REGISTER_JOB at t={self.now:.6f}: job {shown(job_id)} already exists "
                              f"(a job of workload {wname!r})")
        pname = desc.get("profile")
        if workload is None or not isinstance(pname, str) or pname not in workload.profiles:
            hint = "" if self.opt.profile_reuse else (
                " (without --enable-profile-reuse a dynamic profile is deleted once its first job ends)")
            raise EngineError(f"REGISTER_JOB {shown(job_id)}: profile {shown(pname)} of workload {wname!r} is unknown{hint}")
        where = f"REGISTER_JOB {shown(job_id)}"
        res = integer(desc.get("res"), "'res'", where, minimum=1, maximum=len(self.by_id))
        wall = walltime(desc.get("walltime"), where)
        # Batsim 4.2.1 (jobs.cpp) aborts on a registered job without its own id or subtime: a scheduler
        # the engine accepted would fail there. pybatsim's register_job sends both.
        if desc.get("id") not in (job_id, local):
            raise EngineError(f"{where}: the job's 'id' must be {job_id!r} (Batsim 4.2.1 reads the job's own "
                              f"id), got {shown(desc.get('id'))}")
        subtime = number(desc.get("subtime"), "'subtime' (Batsim 4.2.1 needs the job's submission time)", where)
        desc["id"] = job_id
        job = Job(wname, local, desc, subtime, res, wall, pname)   # Batsim's jobs.csv says the job's own subtime
        self.out.registered(job)
        self.submit(job, announce=self.opt.ack_dynamic)

    def on_notify(self, data):
        kind = data.get("type")
        if kind == "registration_finished":
            self.registration_open = False
        elif kind == "continue_registration":
            self.registration_open = self.opt.dynamic_jobs
        else:
            raise EngineError(f"the scheduler sent an unknown NOTIFY type {shown(kind)} at t={self.now:.6f}")

    def on_set_metadata(self, data):
        job = self.job_named(data.get("job_id"), "set metadata of")
        if job.gone:
            refuse_gone(job, "SET_JOB_METADATA", self.now)
        job.metadata = string(data.get("metadata", ""), "metadata", f"SET_JOB_METADATA of {job.id!r}")
        self.out.metadata_set(job)

    def on_change_job_state(self, data):
        job = self.job_named(data.get("job_id"), "change the state of")
        state = data.get("job_state")
        where = f"CHANGE_JOB_STATE of {job.id!r} at t={self.now:.6f}"
        if state not in JOB_STATES:
            raise EngineError(f"{where}: unknown job_state {shown(state)} (Batsim's: {', '.join(JOB_STATES)})")
        # Batsim 4.2.1 (server.cpp) allows only these two changes and aborts on any other
        if job.state == "SUBMITTED" and state == "REJECTED":
            job.state = "REJECTED"
            self.finish_bookkeeping(job)
            self.to_delete.append(job)
        elif job.state == "RUNNING" and state.startswith("COMPLETED_"):
            self.end_job(job, state, -1, announce=False)   # Batsim lets its work go on (contract §4)
            self.finish_bookkeeping(job)
            self.to_delete.append(job)
        else:
            raise EngineError(f"{where}: {job.state} -> {state} (Batsim 4.2.1 refuses it too: a waiting job can "
                              "only become REJECTED, a running one COMPLETED_*)")

    def on_set_resource_state(self, data):
        where = f"SET_RESOURCE_STATE at t={self.now:.6f}"
        resources, state = data.get("resources"), data.get("state")
        try:
            parse_intervals(resources, len(self.by_id))
        except EngineError as e:
            raise EngineError(f"{where}: {e}") from None
        if isinstance(state, bool) or not isinstance(state, (str, int)):
            raise EngineError(f"{where}: state must be a power state number, got {shown(state)}")
        raise EngineError(f"{where}: the engine has no power model (Batsim 4.2.1 refuses power state "
                          "changes too, unless run with --energy)")

    def on_query(self, data):
        requests = data.get("requests")
        if not isinstance(requests, dict) or not requests:
            raise EngineError(f"QUERY at t={self.now:.6f}: requests must be a non-empty object, got {shown(requests)}")
        # Batsim 4.2.1 knows only consumed_energy, and answers it only when run with --energy
        raise EngineError(f"QUERY at t={self.now:.6f}: {', '.join(map(shown, requests))}: the engine has no energy "
                          "model and answers no query (Batsim 4.2.1 refuses a query too, unless run with --energy "
                          "and asking for consumed_energy)")

    def require_dynamic(self, what):
        if not self.opt.dynamic_jobs:
            raise EngineError(f"the scheduler sent {what} at t={self.now:.6f}, but dynamic jobs are disabled "
                              "(run the engine with --enable-dynamic-jobs)")


HANDLERS = {
    "EXECUTE_JOB": DecisionHandlers.on_execute,
    "REJECT_JOB": DecisionHandlers.on_reject,
    "KILL_JOB": DecisionHandlers.on_kill,
    "CALL_ME_LATER": DecisionHandlers.on_call_me_later,
    "REGISTER_PROFILE": DecisionHandlers.on_register_profile,
    "REGISTER_JOB": DecisionHandlers.on_register_job,
    "NOTIFY": DecisionHandlers.on_notify,
    "SET_JOB_METADATA": DecisionHandlers.on_set_metadata,
    "CHANGE_JOB_STATE": DecisionHandlers.on_change_job_state,
    "SET_RESOURCE_STATE": DecisionHandlers.on_set_resource_state,
    "QUERY": DecisionHandlers.on_query,
}
