"""The pybatsim class of the planning family: events, starts, decision log.

A policy subclasses ``PlanningScheduler``, names itself (``policy_name``, a
key of ``formulas.CODES``) and holds its score as a compiled formula in the
paper's terms (``formulas.py``): ``t_k`` (cores available), ``overhead`` =
t'_k - t_k (waiting for the file) and ``penalty`` (LEA's eviction penalty, in
seconds). Everything else — the planning pass, the memory model, stagings —
is shared: the pass and its state in this folder, the Batsim-side plumbing
in ``batloc.schedulers.base``, the memory model in ``batloc.locality``.

Protocol (contract §3, §4, §6): a start decision holds the job's cores; on a
miss a ``data_staging`` job loads the file into the node's memory and the job
is executed when that staging completes; jobs needing a file already loading
there wait for the same staging. A job that waited for its file is killed at
t_k + walltime, the end of its reservation window (paper §III), whether it
computes by then or still waits (``base``). A job no node
can run is rejected at submission (``admission``); bad options, a platform
off the contract and an engine that went away end the scheduler in one line
(``boundary``).
"""

import math
import time

import numpy as np

from batloc.locality.staging import is_staging_job
from batloc.schedulers.admission import Admission
from batloc.schedulers.base import SchedulerBase, procset_of
from batloc.schedulers.boundary import OptionsError, with_forced
from batloc.schedulers.planning.job_queue import JobQueue, QueuedJob
from batloc.schedulers.planning.options import SchedulerOptions
from batloc.schedulers.planning.planner import Planner
from batloc.schedulers.planning.predictions import PredictionLog
from batloc.schedulers.planning.state import ClusterState


class PlanningScheduler(SchedulerBase):
    policy_name = "?"         # a key of formulas.CODES: FCFS, EFT, LEA, LEO or LEM
    forced_options = {}

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        super().__init__(options)
        self.label = self.policy_name + ("-BF" if self.opts.backfilling else "")
        self.queue = JobQueue()
        self.events = 0
        self.plan_cpu = 0.0       # CPU seconds in the planner (the rest of a pass commits its decisions)

    @classmethod
    def parse_options(cls, raw):
        """The options of `raw` (a dict), with the class's forced ones; OptionsError names the first bad one."""
        raw = with_forced(raw, cls.forced_options, cls.__name__, OptionsError)
        try:
            return SchedulerOptions.from_dict(raw)
        except OptionsError as exc:
            raise OptionsError(f"{cls.policy_name}: {exc}") from None

    def onSimulationBegins(self):
        self.platform = self.read_platform()
        if self.platform is None:
            return
        self.admission = Admission(self.platform, self.opts.ignore_files)
        self.state = self.make_state()
        self.planner = self.make_planner()
        self.open_decision_log()
        prefix = self.opts.export_prefix
        self.predictions = PredictionLog(f"{prefix}_predictions.csv" if prefix else None)
        self.ready = True

    def make_state(self):
        return ClusterState(self.platform, self.opts)

    def make_planner(self):
        return Planner(self.state, self.policy_name)

    # ---- events -------------------------------------------------------------
    def onJobSubmission(self, job):
        self.events += 1
        sub = self.admitted(job)
        if sub is not None:
            self.queue.append(QueuedJob(job.id, sub.cores, sub.walltime, sub.file, sub.size,
                                        float(job.submit_time)), self.state.file_id(sub.file))

    def onJobCompletion(self, job):
        self.events += 1
        now = self.bs.time()
        if is_staging_job(job.id):
            for held in self.state.staging_done(job.id, now):
                self.execute(held)
        else:
            self.state.finish(job.id, now)
        self.dirty = True

    def onJobsKilled(self, jobs):
        now = self.bs.time()
        for job in jobs:
            self.state.finish(job.id, now)
        self.dirty = True

    # ---- passes ---------------------------------------------------------------
    def unstarted(self):
        return len(self.queue)

    def may_schedule(self):
        period = self.opts.scheduling_period
        if not period:
            return True
        now = self.bs.time()
        k = round(now / period)
        if abs(now - k * period) <= 1e-9 * max(1.0, abs(now)):
            return True
        self.call_at(math.ceil(now / period) * period)
        return False

    def schedule(self, now):
        c0 = time.thread_time()
        decisions = self.planner.plan(now, self.queue)
        self.plan_cpu += time.thread_time() - c0
        for d in decisions:
            case, held, new_staging = self.state.start(d.job, d.node, d.positions, now, d.t_file)
            node = self.platform.nodes[d.node]
            held.alloc = procset_of([node.core_ids[p] for p in d.positions.tolist()])
            self.decision_log.write(now, d.job.id, self.label, node.name, str(held.alloc), d.job.cores,
                                    self.state.windows[d.node][d.job.id].avail,
                                    d.job.file, d.job.size, case, held.staging, d.score)
            self.predictions.write(d.job.id, d.job.subtime, d.predicted, now)
            if new_staging is not None:
                self.issue_staging(new_staging)
            if held.computing:
                self.execute(held)
            self.watch_window(held)
        self.queue.remove([d.index for d in decisions])

    # ---- the end ----------------------------------------------------------------
    def onSimulationEnds(self):
        if getattr(self, "predictions", None) is not None:
            self.predictions.close()
        super().onSimulationEnds()

    def memories(self):
        return self.state.caches

    def stats(self):
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
        return {"policy": self.label, "events": self.events, "passes": int(q.size),
                "decision_seconds": float(dt.sum()), "max_queue": float(q.max()) if q.size else 0.0,
                "decision_cpu_seconds": self.pass_cpu, "plan_cpu_seconds": self.plan_cpu,
                "mean_pass_s": float(dt.mean()) if q.size else 0.0,
                "jobs_scanned": self.planner.stats_jobs_scanned, "first_pass_seconds": self.first_pass_seconds,
                "nodes_scored": self.planner.stats_nodes_scored,
                "jobs_walked": getattr(self.planner, "stats_jobs_walked", 0),
                "jobs_dropped": getattr(self.planner, "stats_jobs_dropped", 0),
                "jobs_moved": getattr(self.planner, "stats_jobs_moved", 0), "by_queue_length": buckets}
