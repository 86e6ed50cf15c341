"""Drive a batloc scheduler without the engine, under the paper's model.

A tiny event loop stands in for Batsim: jobs run for their delay profile
(killed at their walltime), a staging of S bytes to node k takes S / BW_k
(+ latency), every load on its own (FATPIPE). It calls the scheduler's pybatsim
callbacks through a stand-in ``bs`` object, so tests can check hand-computed
schedules and quick experiments can run before or without the real engine.
It is not the engine: use ``batloc-batsim`` for real runs.
"""

import heapq
import math

from batsim.batsim import Job
from procset import ProcSet

from batloc.outputs import JOBS_HEADER, open_for_writing, row


def make_resources(nodes, memory_bytes=128e9, bandwidth=1e8, backbone=None):
    """SIMULATION_BEGINS-like resources for nodes given as {name: cores}.

    Ids follow the contract's host order (sorted names): cores first, then
    storages (lustre, then the node memories). `backbone`: the bandwidth lustre
    carries (a platform with a backbone, contract §6); the dry run itself still
    gives every load its node link alone."""
    compute, storage = [], []
    rid = 0
    for name in sorted(nodes):
        for c in range(nodes[name]):
            compute.append({"id": rid, "name": f"{name}_c{c:02d}", "state": "idle",
                            "properties": {"node": name}})
            rid += 1
    storage.append({"id": rid, "name": "lustre", "state": "idle",
                    "properties": {"bandwidth": str(backbone)} if backbone else {}})
    rid += 1
    for name in sorted(nodes):
        mem = memory_bytes[name] if isinstance(memory_bytes, dict) else memory_bytes
        bw = bandwidth[name] if isinstance(bandwidth, dict) else bandwidth
        storage.append({"id": rid, "name": f"{name}_mem", "state": "idle",
                        "properties": {"node": name, "memory_bytes": str(mem), "bandwidth": str(bw)}})
        rid += 1
    return compute, storage


class _FakeBatsim:
    dynamic_job_registration_enabled = True      # batloc's schedulers stage files as dynamic jobs

    def __init__(self, run):
        self._run = run
        self.machines = {"compute": run.compute, "storage": run.storage}
        self.network = _NoNetwork()
        self.no_more_static_jobs = False
        self.profiles = {"w0": dict(run.workload.get("profiles", {}))}
        self.jobs = {}
        # SIMULATION_BEGINS names each workload's file; here the document itself
        self.workloads = {"w0": run.workload}

    def time(self):
        return self._run.now

    def register_profiles(self, workload, profiles):
        self.profiles.setdefault(workload, {}).update(profiles)

    def register_job(self, id, res, walltime, profile_name, subtime=None):
        if self._run.registration_finished:     # the engine and Batsim refuse it too
            raise AssertionError(f"t={self._run.now}: REGISTER_JOB {id} after registration_finished")
        job = Job.from_json_dict({"id": id, "res": res, "walltime": walltime, "profile": profile_name,
                                  "subtime": self._run.now})
        job.profile_dict = self.profiles[job.workload][profile_name]
        self.jobs[id] = job
        self._run.registered.append(id)
        return job

    def execute_job(self, job):
        self.jobs[job.id].state = Job.State.RUNNING
        self._run.out.append(("execute", job, job.allocation))

    def reject_jobs(self, jobs):
        for j in jobs:
            j.state = Job.State.REJECTED       # where pybatsim keeps the scheduler's own decisions
            self._run.rejected.append(j.id)

    def kill_jobs(self, jobs):
        self._run.out.append(("kill", [j.id for j in jobs], None))

    def wake_me_up_at(self, t):
        if not t > self._run.now:   # Batsim 4.2.1: "You asked to be awaken in the past"
            raise AssertionError(f"t={self._run.now}: CALL_ME_LATER at {t}, not after now")
        self._run.push(t, "call", None)

    def notify_registration_finished(self):
        self._run.registration_finished = True


class _NoNetwork:
    """What a scheduler may reach of pybatsim's network handler: the dry run sends nothing."""

    def send(self, msg):
        pass


class DryRun:
    def __init__(self, scheduler, compute, storage, workload, latency=0.0):
        self.sched, self.compute, self.storage, self.workload = scheduler, compute, storage, workload
        self.latency = latency
        self.now = 0.0
        self.heap, self.seq = [], 0
        self.out, self.rejected = [], []
        self.registered = []       # dynamic job ids in registration order (stagings, dependent jobs)
        self.registration_finished = False
        self.results = {}          # job id -> dict(start, finish, alloc, state)
        self.core_busy = {}        # core id -> job id
        self.mem = {s["id"]: s for s in storage}
        self.bs = _FakeBatsim(self)
        scheduler.bs = self.bs

    def push(self, t, kind, payload):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, payload))

    def run(self):
        static = sorted(self.workload["jobs"], key=lambda j: j["subtime"])
        for j in static:
            self.push(float(j["subtime"]), "submit", j)
        self.static_left = len(static)
        self.sched.onSimulationBegins()
        while self.heap:
            t = self.heap[0][0]
            self.now = t
            batch = []
            while self.heap and self.heap[0][0] == t:
                batch.append(heapq.heappop(self.heap))
            for _, _, kind, payload in batch:
                getattr(self, "_on_" + kind)(payload)
            if self.static_left == 0 and not self.bs.no_more_static_jobs:
                self.bs.no_more_static_jobs = True
            self.sched.onNoMoreEvents()
            self._apply()
        if not self.registration_finished:
            raise RuntimeError("simulation ended without registration_finished")
        self.sched.onSimulationEnds()
        return self.results

    # ---- incoming --------------------------------------------------------
    def _on_submit(self, raw):
        d = dict(raw)
        d["id"] = f"w0!{raw['id']}"
        job = Job.from_json_dict(d)
        job.profile_dict = self.workload["profiles"][raw["profile"]]
        job.job_state = Job.State.SUBMITTED
        self.bs.jobs[job.id] = job
        self.static_left -= 1
        self.sched.onJobSubmission(job)

    def _on_done(self, job_id):
        r = self.results[job_id]
        if r["finish"] is not None:
            return          # killed earlier
        r["finish"] = self.now
        self._free(job_id, r)
        job = self.bs.jobs[job_id]
        job.job_state = Job.State[r["state"]]
        self.sched.onJobCompletion(job)

    def _on_killed(self, job_ids):
        killed = []
        for jid in job_ids:
            r = self.results.get(jid)
            if r and r["finish"] is None:
                r["finish"], r["state"] = self.now, "COMPLETED_KILLED"
                self._free(jid, r)
                killed.append(self.bs.jobs[jid])
        if killed:
            self.sched.onJobsKilled(killed)

    def _on_call(self, _):
        self.sched.onRequestedCall()

    # ---- outgoing --------------------------------------------------------
    def _apply(self):
        out, self.out = self.out, []
        for kind, what, alloc in out:
            if kind == "kill":
                ended = [jid for jid in what if self.results.get(jid, {}).get("finish") is not None]
                if ended:
                    # Batsim 4.2.1 forgets a job once the message reporting its end is sent,
                    # and aborts on a later KILL_JOB of it (jobs.cpp: "Cannot get job").
                    raise AssertionError(f"t={self.now}: KILL_JOB of {', '.join(ended)}, whose end the "
                                         "scheduler was already told (Batsim 4.2.1 aborts on it)")
                # Batsim answers a kill in a later message at the same time.
                self.push(self.now, "killed", what)
                continue
            job = what
            alloc = list(ProcSet.from_str(str(alloc)) if not isinstance(alloc, ProcSet) else alloc)
            prof = job.profile_dict
            if prof["type"] == "data_staging":
                # every load on its own link: at the slowest node link on its way (FATPIPE)
                bw = min(float(self.mem[s]["properties"]["bandwidth"]) for s in job.storage_mapping.values()
                         if "bandwidth" in self.mem[s]["properties"])
                dur = prof["nb_bytes"] / bw + self.latency
                state = "COMPLETED_SUCCESSFULLY"
            else:
                for c in alloc:
                    if c in self.core_busy:
                        raise AssertionError(f"t={self.now}: core {c} given to {job.id} while {self.core_busy[c]} runs")
                    self.core_busy[c] = job.id
                wall = job.requested_time if job.requested_time and job.requested_time > 0 else math.inf
                dur = min(prof["delay"], wall)
                state = "COMPLETED_SUCCESSFULLY" if prof["delay"] <= wall else "COMPLETED_WALLTIME_REACHED"
            self.results[job.id] = {"start": self.now, "finish": None, "alloc": alloc, "state": state}
            self.push(self.now + dur, "done", job.id)

    def _free(self, job_id, r):
        for c in r["alloc"]:
            if self.core_busy.get(c) == job_id:
                del self.core_busy[c]


def write_jobs_csv(run, path):
    """The dry run's results in Batsim 4's jobs.csv layout (contract §5), for the validator."""
    rows = []
    for jid, r in run.results.items():
        job = run.bs.jobs[jid]
        wl, local = jid.split("!", 1)
        sub = float(job.submit_time)
        start, fin = r["start"], r["finish"]
        rows.append((fin, [local, wl, job.profile, f"{sub:.6f}", str(job.requested_resources),
                           f"{float(job.requested_time):.6f}", int(r["state"] == "COMPLETED_SUCCESSFULLY"),
                           r["state"], f"{start:.6f}", f"{fin - start:.6f}", f"{fin:.6f}",
                           f"{start - sub:.6f}", f"{fin - sub:.6f}", "", str(ProcSet(*r["alloc"])), "-1", ""]))
    for jid in run.rejected:               # as Batsim writes a rejected job: no times
        job = run.bs.jobs[jid]
        wl, local = jid.split("!", 1)
        rows.append((run.now, [local, wl, job.profile, f"{float(job.submit_time):.6f}", str(job.requested_resources),
                               f"{float(job.requested_time):.6f}", 0, "REJECTED", "", "", "", "", "", "", "", "",
                               ""]))
    with open_for_writing(path) as fh:
        fh.write(JOBS_HEADER + "\n")
        for _, fields in sorted(rows, key=lambda x: x[0]):
            fh.write(row(fields))
