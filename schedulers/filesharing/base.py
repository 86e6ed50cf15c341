"""The pybatsim side of the file-sharing policies: events, starts, stagings, replications.

A policy subclasses ``FileSharingScheduler`` and says when and where jobs
start (``submitted``, ``schedule``); this class keeps the actual state and
speaks the protocol. It follows the contract like the planning schedulers
(``planning_scheduler.py``, whose staging and kill lines are repeated here
rather than imported, since that core is being rewritten): a start holds the
job's cores (lowest free ids of the node); on a miss a ``data_staging`` job
loads the file into the node's memory, in the slot the transfer Gantt chart
gives it (issued at the slot's start, through CALL_ME_LATER when later), and
the job is executed when it completes; a job needing a file that is loading
there waits for that staging. The reservation window of a job is
[t, t + walltime) from its transfer slot's start (or its start without a
transfer, or the slot's start of the load it waits for if later); a job that would compute past it is killed there (contract §6).
Replications (DLL) are staging jobs that hold no cores.
"""

import json
import logging
import math
import time as _time
from dataclasses import dataclass
from typing import Optional

import numpy as np
from procset import ProcSet

from batloc.locality.cache import NodeCache
from batloc.locality.decision_log import DecisionLog
from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.locality.staging import (STAGE_WORKLOAD, StagingBook, is_staging_job, staging_job_id,
                                     staging_profile, storage_mapping)
from batloc.locality.value_cache import FileCensus, ValueCache
from batloc.schedulers.admission import Admission
from batloc.schedulers.boundary import BAD_INPUT, BatlocScheduler, leave, options_or_exit
from batloc.schedulers.filesharing.options import FileSharingOptions, OptionsError
from batloc.schedulers.filesharing.transfers import TransferChart

log = logging.getLogger("batloc.schedulers")
EPS = 1e-6   # protocol times carry six decimals


@dataclass
class Job:
    id: str
    cores: int
    walltime: float        # +inf when the job has none
    file: Optional[str]
    size: float
    subtime: float
    seq: int               # submission order


@dataclass
class Held:
    """A job holding cores: waiting for its file, or computing."""
    job: Job
    node: int
    positions: np.ndarray
    start: float           # reservation start: cores held from here
    deadline: float        # end of the reservation window
    staging: Optional[str]
    computing: bool
    alloc: Optional[ProcSet] = None


def _procset(ids):
    """A ProcSet from sorted ids, built from their runs: ProcSet(*ids) merges id by id."""
    runs, start = [], None
    for prev, cur in zip([None] + ids[:-1], ids):
        if prev is None or cur != prev + 1:
            if start is not None:
                runs.append((start, prev))
            start = cur
    if start is not None:
        runs.append((start, ids[-1]))
    return ProcSet(*runs)


class FileSharingScheduler(BatlocScheduler):
    policy_name = "?"
    accepted_options = ()          # beyond options.COMMON
    default_options = {}

    # ---- what a policy defines ------------------------------------------
    def submitted(self, job, now):
        """A job arrived (already validated)."""
        raise NotImplementedError

    def schedule(self, now):
        """Start what can start now (called once per engine message after a change)."""
        raise NotImplementedError

    def unstarted(self):
        """Number of submitted jobs not started yet."""
        raise NotImplementedError

    def node_changed(self, node):
        """Something real happened on `node` (a start or an end)."""

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        self.opts = options_or_exit(self.parse_options, options, OptionsError)
        super().__init__(dict(options or {}))
        self.jobs = {}
        self.held = {}
        self.dirty = False
        self.finished_registration = False
        self.kill_at = {}          # deadline -> [job id]
        self.calls = set()
        self.due = {}              # time -> [Staging] to issue then
        self.replicas = set()      # ids of replication stagings
        self.n_replicas = 0
        self.seq = 0
        self.pass_times = []       # (jobs waiting, seconds) per scheduling pass

    @classmethod
    def parse_options(cls, raw):
        return FileSharingOptions.parse(raw, cls.accepted_options, cls.policy_name, **cls.default_options)

    def onSimulationBegins(self):
        try:
            self.platform = PlatformView.from_resources(
                self.bs.machines["compute"], self.bs.machines["storage"], self.opts.bandwidth)
        except PlatformError as exc:   # one line, and the engine sees the scheduler leave at once
            leave(str(exc), BAD_INPUT)
        self.admission = Admission(self.platform, no_walltime_note=f"{self.policy_name} estimates its run "
                                                                   "time as 0 and never kills it")
        nodes = self.platform.nodes
        self.census = FileCensus()
        if self.opts.cache == "value":
            self.memories = [ValueCache(n.memory_bytes, self.census) for n in nodes]
        else:
            self.memories = [NodeCache(n.memory_bytes, self.opts.cache) for n in nodes]
        self.free = [np.ones(len(n.core_ids), dtype=bool) for n in nodes]
        self.n_free = [len(n.core_ids) for n in nodes]
        self.on_node = [dict() for _ in nodes]      # node -> job id -> Held
        self.chart = TransferChart(self.platform.bandwidth, self.opts.shared_lane)
        self.stagings = StagingBook()
        self.decision_log = DecisionLog(self.opts.decisions_path)
        self.label = self.policy_name

    # ---- events -------------------------------------------------------------
    def onJobSubmission(self, job):
        if is_staging_job(job.id):
            return
        sub = self.admission.admit(job, self.bs)
        if sub is None:
            return
        self.jobs[job.id] = job
        self.seq += 1
        self.dirty = True
        self.submitted(Job(job.id, sub.cores, sub.walltime, sub.file, sub.size, float(job.submit_time), self.seq),
                       self.bs.time())

    def onJobCompletion(self, job):
        now = self.bs.time()
        if is_staging_job(job.id):
            self._staging_done(job.id, now)
        else:
            self._finish(job.id, now)
        self.dirty = True

    def onJobsKilled(self, jobs):
        now = self.bs.time()
        for job in jobs:
            self._finish(job.id, now)
        self.dirty = True

    def onRequestedCall(self):
        now = self.bs.time()
        self.calls = {t for t in self.calls if t > now + EPS}
        for t in sorted(t for t in self.due if t <= now + EPS):
            for st in self.due.pop(t):
                self._issue(st)
        for deadline in sorted(d for d in self.kill_at if d <= now + EPS):
            victims = [self.jobs[j] for j in self.kill_at.pop(deadline)
                       if j in self.held and self.held[j].computing]
            if victims:
                self.bs.kill_jobs(victims)

    def onNoMoreEvents(self):
        if not hasattr(self, "platform"):
            return
        if self.dirty:
            self.dirty = False
            t0 = _time.perf_counter()
            waiting = self.unstarted()
            self.schedule(self.bs.time())
            self.pass_times.append((waiting, _time.perf_counter() - t0))
        if (not self.finished_registration and self.bs.no_more_static_jobs
                and self.unstarted() == 0 and not self.due):
            self.finished_registration = True
            self.bs.notify_registration_finished()

    def onSimulationEnds(self):
        self.decision_log.close()
        overflows = sum(len(m.overflows) for m in self.memories)
        if overflows:
            log.warning("%d loads did not fit in node memory (cache %s)", overflows, self.opts.cache)
        if self.opts.stats:
            self._write_stats()

    # ---- what policies read -----------------------------------------------
    def file_state(self, file, node):
        """('loaded' | 'loading' | 'absent', load end) of `file` in `node`'s memory now."""
        status = self.memories[node].status(file, self.bs.time()) if file is not None else "absent"
        if status == "loading":
            st = self.stagings.find(node, file)
            return status, (st.est_end if st is not None else self.bs.time())
        return status, None

    def free_cores(self, node):
        return self.n_free[node]

    # ---- actions ------------------------------------------------------------
    def start(self, job, node, now, score=None):
        """Hold `job`'s cores on `node` now; load its file or wait for it; log the decision."""
        positions = np.flatnonzero(self.free[node])[:job.cores]
        if len(positions) < job.cores:
            raise RuntimeError(f"{job.id}: {self.platform.nodes[node].name} has "
                               f"{len(positions)} free cores, {job.cores} needed")
        self.free[node][positions] = False
        self.n_free[node] -= len(positions)
        memory = self.memories[node]
        absent = job.file is not None and memory.status(job.file, now) == "absent"
        slot = self.chart.reserve(node, job.size, now) if absent else None
        self.census.accessed(job.file)
        case, evicted = memory.start_job(job.file, job.size, now, load_end=slot[1] if slot else None)
        self.census.drop(evicted, node)
        self.census.add(job.file, node)
        name = self.platform.nodes[node].name
        staging, window_start, planned = None, now, now
        if case == "miss":
            st = self.stagings.begin(staging_job_id(job.id, name), node, job.file, job.size,
                                     slot[0], slot[1], job.id)
            staging, window_start, planned = st.id, slot[0], slot[1]
            self._issue_at(st, now)
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            # A load booked for later (behind other transfers) opens the window as its own would.
            staging, window_start, planned = st.id, max(now, st.start), max(now, st.est_end)
        core_ids = self.platform.nodes[node].core_ids
        held = Held(job, node, positions, now, window_start + job.walltime, staging,
                    computing=case in ("hit", "none"), alloc=_procset([core_ids[p] for p in positions.tolist()]))
        self.held[job.id] = held
        self.on_node[node][job.id] = held
        self.decision_log.write(now, job.id, self.label, name, str(held.alloc), job.cores, planned,
                                job.file, job.size, case, staging, score)
        if held.computing:
            self._execute(held, now)
        self.node_changed(node)
        return case

    def replicate(self, file, size, node, now):
        """DLL: load `file` into `node`'s memory, holding no cores (§3 of the paper)."""
        slot = self.chart.reserve(node, size, now)
        case, evicted = self.memories[node].start_job(file, size, now, load_end=slot[1])
        self.census.drop(evicted, node)
        self.census.add(file, node)
        self.n_replicas += 1
        sid = f"{STAGE_WORKLOAD}!rep-{file}-{self.platform.nodes[node].name}-{self.n_replicas}"
        st = self.stagings.begin(sid, node, file, size, slot[0], slot[1], None)
        st.waiters.clear()
        self.replicas.add(sid)
        self._issue_at(st, now)
        return sid

    # ---- protocol -------------------------------------------------------------
    def _issue_at(self, st, now):
        if st.start <= now + EPS:
            self._issue(st)
            return
        self.due.setdefault(st.start, []).append(st)
        self._call_at(st.start)

    def _issue(self, st):
        node = self.platform.nodes[st.node]
        profile = st.id.split("!", 1)[1]
        self.bs.register_profiles(STAGE_WORKLOAD, {profile: staging_profile(st.size)})
        job = self.bs.register_job(st.id, 2, -1, profile)
        job.allocation = ProcSet(self.platform.lustre_id, node.mem_id)
        job.storage_mapping = storage_mapping(self.platform.lustre_id, node.mem_id)
        self.bs.execute_job(job)

    def _execute(self, held, now):
        job = self.jobs[held.job.id]
        job.allocation = held.alloc
        self.bs.execute_job(job)
        # The engine counts walltime from the execution; a job that waited for its
        # file must be cut at the end of its window here (contract §6).
        if math.isfinite(held.deadline) and now + held.job.walltime > held.deadline + EPS:
            self.kill_at.setdefault(held.deadline, []).append(held.job.id)
            self._call_at(held.deadline)

    def _call_at(self, t):
        if t not in self.calls:
            self.calls.add(t)
            self.bs.wake_me_up_at(t)

    def _staging_done(self, staging_id, now):
        st = self.stagings.complete(staging_id)
        self.chart.released(st.node, st.est_end, now)
        memory = self.memories[st.node]
        memory.load_done(st.file, now)
        if staging_id in self.replicas:
            self.replicas.discard(staging_id)
            self.census.drop(memory.end_job(st.file, now), st.node)
        for jid in st.waiters:
            held = self.held.get(jid)
            if held is not None:
                held.computing = True
                self._execute(held, now)

    def _finish(self, job_id, now):
        held = self.held.pop(job_id, None)
        if held is None:
            return
        node = held.node
        self.free[node][held.positions] = True
        self.n_free[node] += len(held.positions)
        self.on_node[node].pop(job_id, None)
        self.census.drop(self.memories[node].end_job(held.job.file, now), node)
        if held.staging is not None and not held.computing:
            st = self.stagings.by_id.get(held.staging)
            if st is not None and job_id in st.waiters:
                st.waiters.remove(job_id)
        self.node_changed(node)

    def _write_stats(self):
        dt = np.array([p[1] for p in self.pass_times], dtype=float)
        q = np.array([p[0] for p in self.pass_times], dtype=float)
        out = {"policy": self.label, "passes": int(dt.size), "decision_seconds": float(dt.sum()),
               "max_pass_s": float(dt.max()) if dt.size else 0.0,
               "max_waiting": float(q.max()) if q.size else 0.0, "replications": self.n_replicas}
        with open(self.opts.stats, "w") as fh:
            json.dump(out, fh, indent=1)
