"""pybatsim's message loop for batloc's schedulers: the same callbacks, in the same order, with less around them.

pybatsim 3.2.1 reads each message in ``Batsim._read_bat_msg``: it formats the
message into an INFO line (shown or not), walks an if-chain of event types,
rebuilds a job's workload name from its id several times per submission,
sorts the answer's events by timestamp with a Python key, and formats the
answer into a second INFO line. On a saturated day (31 834 jobs, about 85 000
messages) that is a share of the scheduler's time outside its passes that no
scheduler needs. ``quick_read`` does what that loop does for the events
batloc's engine and Batsim 4.2.1 send to a batloc scheduler (job submitted,
completed, killed; requested call; the two NOTIFYs of a workload's end;
simulation ends), updating pybatsim's ``Batsim`` object exactly as pybatsim
does (its ``jobs``, ``profiles``, counters, each ``Job``), so that every
callback finds what it found before and the answer is the same bytes.

A message holding any other event, and every message while pybatsim's own INFO
log is shown, goes through pybatsim's loop unchanged (``fallback``). Only the
schedulers built on ``boundary.BatlocScheduler`` get this loop
(``use_quick_dispatch``, at their first message); stock pybatsim schedulers
and users' own keep pybatsim's.
"""

import logging

from batsim.batsim import Batsim, Job
from procset import ProcSet

# pybatsim's own logger, whose INFO lines its loop formats each message into
PYBATSIM_LOG = logging.getLogger("batsim.batsim")
SUBMITTED = Job.State.SUBMITTED
STATES = Job.State.__members__
UNKNOWN = Job.State.UNKNOWN
SEPARATOR = Batsim.WORKLOAD_JOB_SEPARATOR
HANDLED = frozenset(("JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED", "REQUESTED_CALL", "SIMULATION_ENDS"))
NOTIFIED = frozenset(("no_more_static_job_to_submit", "no_more_external_event_to_occur"))
# the counter pybatsim adds a completed job to, by its final state
COUNTERS = {Job.State.COMPLETED_WALLTIME_REACHED: "nb_jobs_timeout", Job.State.COMPLETED_FAILED: "nb_jobs_failed",
            Job.State.COMPLETED_SUCCESSFULLY: "nb_jobs_successful", Job.State.COMPLETED_KILLED: "nb_jobs_killed"}


def _timestamp(event):
    return event["timestamp"]


def use_quick_dispatch(bs, scheduler):
    """Give pybatsim's `bs` this loop for its next messages, when `scheduler` is the one it calls."""
    if bs.scheduler is scheduler and "_read_bat_msg" not in vars(bs):
        bs._read_bat_msg = lambda: quick_read(bs)


def handled(events):
    """Whether this loop handles every event of a message the way pybatsim would."""
    for event in events:
        kind = event["type"]
        if kind not in HANDLED and not (kind == "NOTIFY" and event.get("data", {}).get("type") in NOTIFIED):
            return False
    return True


def killed_now(data):
    """The ids a JOB_KILLED event says were killed: those with a progress. A kill asked for a job that ends
    in the same instant names the job in `job_ids` without a progress (Batsim 4.2.1 and the engine alike:
    its JOB_COMPLETED, successful, comes first); pybatsim 3.2.1 skips such ids only when *no* id has a
    progress, and fails with a KeyError when some have one (a window kill of two jobs, one of which ends
    then: seen on a 64-node saturated input)."""
    progress = data["job_progress"]
    return [jid for jid in data["job_ids"] if jid in progress]


def _without_ended(events):
    """The events with each JOB_KILLED's ids cut to the killed ones (``killed_now``): what pybatsim's loop
    then does is what it means to do."""
    out = []
    for event in events:
        if event["type"] == "JOB_KILLED":
            data = event["data"]
            ids = killed_now(data)
            if len(ids) != len(data["job_ids"]):
                event = {**event, "data": {**data, "job_ids": ids}}
        out.append(event)
    return out


def fallback(bs, msg):
    """pybatsim's own loop over the message `msg`, already received."""
    network = bs.network
    if any(event["type"] == "JOB_KILLED" for event in msg["events"]):
        msg = {**msg, "events": _without_ended(msg["events"])}
    network.recv = lambda blocking=False: msg      # read once, by pybatsim's loop
    try:
        return Batsim._read_bat_msg(bs)
    finally:
        del network.recv


def quick_read(bs):
    """One message in, its answer out; False once the simulation ended (``Batsim._read_bat_msg``)."""
    network, scheduler = bs.network, bs.scheduler
    msg = None
    while msg is None:
        msg = network.recv(blocking=not bs.running_simulation)
        if msg is None:
            scheduler.onDeadlock()
    events = msg["events"]
    if PYBATSIM_LOG.isEnabledFor(logging.INFO) or not handled(events):
        return fallback(bs, msg)
    bs._current_time = msg["now"]
    bs._events_to_send = []
    finished = False
    scheduler.onBeforeEvents()
    jobs = bs.jobs
    for event in events:
        kind = event["type"]
        data = event.get("data", {})
        if kind == "JOB_SUBMITTED":
            submitted(bs, event, data, scheduler)
        elif kind == "JOB_COMPLETED":
            job = jobs[data["job_id"]]
            job.finish_time = event["timestamp"]
            state = STATES.get(data["job_state"], UNKNOWN)
            job.job_state = state
            job.return_code = data["return_code"]
            counter = COUNTERS.get(state)
            if counter is not None:
                setattr(bs, counter, getattr(bs, counter) + 1)
            bs.nb_jobs_completed += 1
            if bs.use_storage_controller and job.id.split(SEPARATOR)[0] == "dyn-storage-controller":
                bs.storage_controller.data_staging_completed(job)
            else:
                scheduler.onJobCompletion(job)
        elif kind == "REQUESTED_CALL":
            scheduler.onRequestedCall()
        elif kind == "JOB_KILLED":
            killed = []
            progress = data["job_progress"]
            for jid in killed_now(data):
                job = jobs[jid]
                job.progress = progress[jid]
                killed.append(job)
            if killed:
                scheduler.onJobsKilled(killed)
        elif kind == "NOTIFY":
            if data["type"] == "no_more_static_job_to_submit":
                bs.no_more_static_jobs = True
                scheduler.onNoMoreJobsInWorkloads()
            else:
                bs.no_more_external_events = True
                scheduler.onNoMoreExternalEvents()
        else:   # SIMULATION_ENDS
            assert bs.running_simulation, "No simulation is currently running"
            bs.running_simulation = False
            finished = True
            scheduler.onSimulationEnds()
    scheduler.onNoMoreEvents()
    out = bs._events_to_send
    if len(out) > 1:
        bs._events_to_send = out = sorted(out, key=_timestamp)
    bs.network.send({"now": bs._current_time, "events": out})
    if finished:
        bs.network.close()
        if bs.event_publisher is not None:
            bs.event_publisher.close()
    return not finished


def submitted(bs, event, data, scheduler):
    """JOB_SUBMITTED, as pybatsim reads it: a new ``Job`` in ``bs.jobs``, its profile kept, then the callback."""
    job_id = data["job_id"]
    spec = data["job"]
    job = Job(spec["id"], spec["subtime"], spec.get("walltime", -1), spec["res"], spec["profile"], spec)
    profile = data["profile"] if "profile" in data else {}
    job.job_state = SUBMITTED
    bs.nb_jobs_submitted += 1
    workload = job.id.split(SEPARATOR)[0]
    profiles = bs.profiles.get(workload)
    if profile is not None:
        if profiles is None:
            profiles = bs.profiles[workload] = {}
        if job.profile not in profiles:
            profiles[job.profile] = profile
    assert profiles is not None and job.profile in profiles
    job.profile_dict = profiles[job.profile]
    jobs = bs.jobs
    if job_id in jobs:
        old = jobs[job_id]
        bs.logger.warning("The job '{}' was alredy in the job list. Probaly a dynamic job that was submitted "
                          "before: \nOld job: {}\nNew job: {}".format(job_id, old, job))
        if old.job_state == Job.State.IN_SUBMISSON:
            bs.nb_jobs_in_submission = bs.nb_jobs_in_submission - 1
        job.metadata = old.metadata
        bs.nb_jobs_submitted_from_scheduler += 1
    else:
        bs.nb_jobs_submitted_from_batsim += 1
    jobs[job_id] = job
    if not (bs.use_storage_controller and workload == "dyn-storage-controller"):
        scheduler.onJobSubmission(job)


def quick_answers(bs):
    """Whether ``register_and_execute`` and ``execute_job`` may stand in for pybatsim's calls: `bs` is
    pybatsim's own ``Batsim`` (not a test's stand-in, nor a subclass with calls of its own), its DEBUG
    lines off (pybatsim formats a profile into one per registration, shown or not)."""
    return type(bs) is Batsim and not PYBATSIM_LOG.isEnabledFor(logging.DEBUG)


def register_and_execute(bs, job_id, res, walltime, workload, profile_name, profile, alloc, storage_mapping):
    """pybatsim's ``register_profiles``, ``register_job`` and ``execute_job`` for a job of one new profile
    (a staging): the same three events in the answer, the same ``Job`` in ``bs.jobs``, the same counters."""
    now = bs._current_time
    out = bs._events_to_send
    out.append({"timestamp": now, "type": "REGISTER_PROFILE",
                "data": {"workload_name": workload, "profile_name": profile_name, "profile": profile}})
    profiles = bs.profiles.get(workload)
    if profiles is None:
        profiles = bs.profiles[workload] = {}
    profiles[profile_name] = profile
    spec = {"profile": profile_name, "id": job_id, "res": res, "walltime": walltime, "subtime": now}
    out.append({"timestamp": now, "type": "REGISTER_JOB", "data": {"job_id": job_id, "job": spec}})
    job = Job(job_id, now, walltime, res, profile_name, spec)
    job.job_state = Job.State.IN_SUBMISSON
    if bs.ack_of_dynamic_jobs:
        bs.nb_jobs_in_submission += 1
    else:
        bs.nb_jobs_submitted += 1
        bs.nb_jobs_submitted_from_scheduler += 1
    assert job_id.split(SEPARATOR)[0] == workload, "a staging's id names its workload"
    job.profile_dict = profile
    bs.jobs[job_id] = job
    job.allocation = alloc
    job.state = Job.State.RUNNING
    job.storage_mapping = storage_mapping
    out.append({"timestamp": now, "type": "EXECUTE_JOB",
                "data": {"job_id": job_id, "alloc": alloc_text(alloc), "storage_mapping": storage_mapping}})
    bs.nb_jobs_scheduled += 1
    return job


def execute_job(bs, job):
    """pybatsim's ``execute_job(job)``: the same event, the same ``Job`` in ``bs.jobs`` updated."""
    alloc = job.allocation
    assert alloc is not None
    data = {"job_id": job.id, "alloc": alloc_text(alloc)}
    known = bs.jobs[job.id]
    known.allocation = alloc
    known.state = Job.State.RUNNING
    if hasattr(job, "mapping"):
        data["mapping"] = known.mapping = job.mapping
    if hasattr(job, "storage_mapping"):
        data["storage_mapping"] = known.storage_mapping = job.storage_mapping
    bs._events_to_send.append({"timestamp": bs._current_time, "type": "EXECUTE_JOB", "data": data})
    bs.nb_jobs_scheduled += 1


def alloc_text(procset):
    """``str(procset)`` ("3-5 9"), without procset's generators and format calls."""
    if type(procset) is not ProcSet:
        return str(procset)
    return " ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in procset._itvs)
