"""The pybatsim side shared by all policies: callbacks, staging protocol, log.

A policy subclasses ``PlanningScheduler``, names itself (``policy_name``) and
holds its score as a compiled formula in the paper's terms: ``t_k`` (cores
available), ``overhead`` = t'_k - t_k (waiting for the file) and ``penalty``
(LEA's eviction penalty, in seconds). Everything else — the planning pass,
the memory model, stagings — is the shared core in ``batloc.schedulers.core``
and ``batloc.locality``.

Protocol (contract §3, §4, §6): a start decision holds the job's cores; on a
miss a ``data_staging`` job loads the file into the node's memory and the job
is executed when that staging completes; jobs needing a file already loading
there wait for the same staging. A job whose computation starts after t_k is
killed at t_k + walltime, the end of its reservation window (paper §III).
With dynamic jobs the simulation only ends once we send
``registration_finished``: we do so when no static job remains to come and
the queue is empty (no staging can be needed any more). A job no node can
run is rejected at submission (``admission``); bad options, a platform off
the contract and an engine that went away end the scheduler in one line
(``boundary``).
"""

import heapq
import json
import logging
import math
import time as _time

import numpy as np
from procset import ProcSet

from batloc.locality.decision_log import DecisionLog
from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.locality.staging import STAGE_WORKLOAD, is_staging_job, staging_profile, storage_mapping
from batloc.schedulers.admission import Admission
from batloc.schedulers.boundary import PREFIX, BatlocScheduler, options_or_exit, with_forced
from batloc.schedulers.core.job_queue import JobQueue, QueuedJob
from batloc.schedulers.core.options import OptionsError, SchedulerOptions
from batloc.schedulers.core.state import ClusterState

log = logging.getLogger("batloc.schedulers")


class PlanningScheduler(BatlocScheduler):
    policy_name = "?"         # FCFS, EFT, LEA, LEO or LEM (schedulers/core/policies.py)
    forced_options = {}

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        self.opts = options_or_exit(self.parse_options, options, OptionsError)
        super().__init__(dict(options or {}))
        self.label = self.policy_name + ("-BF" if self.opts.backfilling else "")
        self.queue = JobQueue()
        self.jobs = {}
        self.dirty = False
        self.finished_registration = False
        self.kill_at = {}             # deadline -> [job id]
        self.kill_times = []          # heap of the deadlines in kill_at
        self.calls_requested = set()
        self.pass_times = []          # (queue length, seconds)
        self.events = 0
        self.born = _time.perf_counter()
        self.first_pass_seconds = None

    @classmethod
    def parse_options(cls, raw):
        """The options of `raw` (a dict), with the class's forced ones; OptionsError names the first bad one."""
        raw = with_forced(raw, cls.forced_options, cls.__name__, OptionsError)
        try:
            return SchedulerOptions.from_dict(raw)
        except OptionsError as exc:
            raise OptionsError(f"{cls.policy_name}: {exc}") from None

    def onSimulationBegins(self):
        try:
            self.platform = PlatformView.from_resources(
                self.bs.machines["compute"], self.bs.machines["storage"], self.opts.bandwidth)
        except PlatformError as exc:
            self.stop_after_answer(f"{PREFIX}: {exc}")
            return
        self.admission = Admission(self.platform, self.opts.ignore_files)
        self.state = self.make_state()
        self.planner = self.make_planner()
        self.decision_log = DecisionLog(self.opts.decisions_path)

    def make_state(self):
        return ClusterState(self.platform, self.opts)

    def make_planner(self):
        # Imported here: the planner compiles the policies' formulas, whose
        # modules import this one.
        from batloc.schedulers.core.planner import Planner
        return Planner(self.state, self.policy_name)

    # ---- events -------------------------------------------------------------
    def onJobSubmission(self, job):
        self.events += 1
        if is_staging_job(job.id) or self.fatal is not None:
            return
        sub = self.admission.admit(job, self.bs)
        if sub is None:
            return
        self.jobs[job.id] = job
        self.queue.append(QueuedJob(job.id, sub.cores, sub.walltime, sub.file, sub.size, float(job.submit_time)),
                          self.state.file_id(sub.file))
        self.dirty = True

    def onJobCompletion(self, job):
        self.events += 1
        now = self.bs.time()
        if is_staging_job(job.id):
            for held in self.state.staging_done(job.id, now):
                self._execute(held, now)
        else:
            self.state.finish(job.id, now)
        self.dirty = True

    def onJobsKilled(self, jobs):
        now = self.bs.time()
        for job in jobs:
            self.state.finish(job.id, now)
        self.dirty = True

    def onRequestedCall(self):
        now = self.bs.time()
        self.calls_requested.discard(now)
        while self.kill_times and self.kill_times[0] <= now:
            deadline = heapq.heappop(self.kill_times)
            victims = [self.jobs[j] for j in self.kill_at.pop(deadline)
                       if j in self.state.held and self.state.held[j].computing]
            if victims:
                self.bs.kill_jobs(victims)

    def onNoMoreEvents(self):
        if not hasattr(self, "state"):
            return
        if self.dirty and self._may_plan():
            self._plan()
        if (not self.finished_registration and self.bs.no_more_static_jobs and not self.queue):
            self.finished_registration = True
            self.bs.notify_registration_finished()

    def onSimulationEnds(self):
        self.decision_log.close()
        overflows = sum(len(c.overflows) for c in self.state.caches)
        if overflows:
            log.warning("%d loads did not fit in node memory (cache %s)", overflows, self.opts.cache)
        if self.opts.stats:
            self._write_stats()

    # ---- planning -------------------------------------------------------------
    def _may_plan(self):
        period = self.opts.scheduling_period
        if not period:
            return True
        now = self.bs.time()
        k = round(now / period)
        if abs(now - k * period) <= 1e-9 * max(1.0, abs(now)):
            return True
        nxt = math.ceil(now / period) * period
        if nxt not in self.calls_requested:
            self.calls_requested.add(nxt)
            self.bs.wake_me_up_at(nxt)
        return False

    def _plan(self):
        now = self.bs.time()
        self.dirty = False
        t0 = _time.perf_counter()
        decisions = self.planner.plan(now, self.queue)
        for d in decisions:
            case, held, new_staging = self.state.start(d.job, d.node, d.positions, now, d.t_file)
            node = self.platform.nodes[d.node]
            alloc = ProcSet(*(node.core_ids[p] for p in d.positions))
            held.alloc = alloc
            self.decision_log.write(now, d.job.id, self.label, node.name, str(alloc), d.job.cores,
                                    self.state.windows[d.node][d.job.id].avail,
                                    d.job.file, d.job.size, case, held.staging, d.score)
            if new_staging is not None:
                self._stage(new_staging, node)
            if held.computing:
                self._execute(held, now)
        self.queue.remove([d.index for d in decisions])
        done = _time.perf_counter()
        self.pass_times.append((len(self.queue) + len(decisions), done - t0))
        if self.first_pass_seconds is None:
            self.first_pass_seconds = done - self.born

    def _stage(self, st, node):
        profile = st.id.split("!", 1)[1]
        self.bs.register_profiles(STAGE_WORKLOAD, {profile: staging_profile(st.size)})
        job = self.bs.register_job(st.id, 2, -1, profile)
        job.allocation = ProcSet(self.platform.lustre_id, node.mem_id)
        job.storage_mapping = storage_mapping(self.platform.lustre_id, node.mem_id)
        self.bs.execute_job(job)

    def _execute(self, held, now):
        job = self.jobs[held.job.id]
        node = self.platform.nodes[held.node]
        job.allocation = ProcSet(*(node.core_ids[p] for p in held.positions))
        self.bs.execute_job(job)
        # The reservation window ends at t_k + walltime; the engine's own walltime
        # kill counts from the execution, so a job that waited must be cut here.
        if now + held.job.walltime > held.deadline and math.isfinite(held.deadline):
            if held.deadline not in self.kill_at:
                self.kill_at[held.deadline] = []
                heapq.heappush(self.kill_times, held.deadline)
            self.kill_at[held.deadline].append(held.job.id)
            if held.deadline not in self.calls_requested:
                self.calls_requested.add(held.deadline)
                self.bs.wake_me_up_at(held.deadline)

    def _write_stats(self):
        q = np.array([p[0] for p in self.pass_times], dtype=float)
        dt = np.array([p[1] for p in self.pass_times], dtype=float)
        buckets = {}
        if q.size:
            edges = [0, 1, 10, 100, 1000, 10000, 100000, 10**9]
            for lo, hi in zip(edges, edges[1:]):
                m = (q >= lo) & (q < hi)
                if m.any():
                    buckets[f"{lo}-{hi - 1}"] = {"passes": int(m.sum()), "mean_s": float(dt[m].mean()),
                                                 "mean_queue": float(q[m].mean())}
        out = {"policy": self.label, "events": self.events, "passes": int(q.size),
               "decision_seconds": float(dt.sum()), "max_queue": float(q.max()) if q.size else 0.0,
               "mean_pass_s": float(dt.mean()) if q.size else 0.0,
               "jobs_scanned": self.planner.stats_jobs_scanned, "first_pass_seconds": self.first_pass_seconds,
               "nodes_scored": self.planner.stats_nodes_scored,
               "jobs_walked": getattr(self.planner, "stats_jobs_walked", 0), "by_queue_length": buckets}
        with open(self.opts.stats, "w") as fh:
            json.dump(out, fh, indent=1)
