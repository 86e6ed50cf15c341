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
(``boundary``). Under the authors' clock (``ticks.py``) the clock decides
when a pass runs and what it plans, and starts reservations between passes.
"""

import math

import numpy as np

from batloc.locality.staging import is_staging_job, is_writeback
from batloc.schedulers.admission import Admission
from batloc.schedulers.base import SchedulerBase, procset_of
from batloc.schedulers.dispatch import alloc_text
from batloc.schedulers.boundary import OptionsError, note, warn, with_forced
from batloc.schedulers.planning.file_outlook import load_time
from batloc.schedulers.planning.job_queue import JobQueue, QueuedJob
from batloc.schedulers.planning.options import SchedulerOptions
from batloc.schedulers.planning.planner import Planner, load_kernel
from batloc.schedulers.planning.predictions import PredictionLog
from batloc.schedulers.planning.state import ClusterState
from batloc.schedulers.planning.ticks import Clock
from batloc.schedulers.workflows import WorkflowSubmissions


class PlanningScheduler(WorkflowSubmissions, SchedulerBase):
    policy_name = "?"         # a key of formulas.CODES: FCFS, EFT, LEA, LEO or LEM
    forced_options = {}

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        super().__init__(options)
        gradual = self.opts.ramp is not None          # LEM's ramp: the gradual LEM
        self.label = self.policy_name + ("G" if gradual else "") + ("-BF" if self.opts.backfilling else "")
        self.queue = JobQueue()
        self.events = 0
        self.clock = None
        self.plan_cpu = 0.0       # CPU seconds in the planner (the rest of a pass commits its decisions)

    @classmethod
    def parse_options(cls, raw):
        """The options of `raw` (a dict), with the class's forced ones; OptionsError names the first bad one."""
        raw = with_forced(raw, cls.forced_options, cls.__name__, OptionsError)
        try:
            opts = SchedulerOptions.from_dict(raw)
        except OptionsError as exc:
            raise OptionsError(f"{cls.policy_name}: {exc}") from None
        if opts.ramp is not None and cls.policy_name != "LEM":
            raise OptionsError(f"{cls.policy_name}: option 'ramp' is the gradual LEM's: only LEM takes it")
        return opts

    def onSimulationBegins(self):
        self.platform = self.read_platform()
        if self.platform is None:
            return
        # Loaded from numba's cache in a second or so; compiled (and said) after an
        # install or a change of its sources. `batloc scheduler` starts it earlier,
        # beside the wait for the engine: then this waits for it to end.
        load_kernel(note)
        self.admission = Admission(self.platform, self.opts.ignore_files)
        self.state = self.make_state()
        self.planner = self.make_planner()
        self.open_decision_log()
        prefix = self.opts.export_prefix
        self.predictions = PredictionLog(f"{prefix}_predictions.csv" if prefix else None)
        self.clock = Clock(self) if self.opts.ticks else None
        if not self.read_workflows():
            return
        self.ready = True

    def make_state(self):
        return ClusterState(self.platform, self.opts)

    def make_planner(self):
        return Planner(self.state, self.policy_name)

    # ---- events -------------------------------------------------------------
    def onJobSubmission(self, job):
        self.events += 1
        if job.id in self.jobs and self.is_registered_dependent(job.id):
            return              # the engine's acknowledgement of a dependent job we registered and queued
        sub = self.admitted(job)
        if sub is None:
            if not is_staging_job(job.id) and self.fatal is None:
                self.parent_ended(job.id, False)      # rejected: its dependents cannot run
            return
        if sub.files and self.opts.ticks:
            self.stop_deciding(f"{self.label}: job {job.id} reads several files, which the authors' clock "
                              "(profile authors) does not plan: run workflows without it")
            return
        queued = QueuedJob(job.id, sub.cores, sub.walltime, sub.file, sub.size, float(job.submit_time),
                           sub.files, sub.outputs)
        if self.clock is not None:
            self.clock.submitted(queued, self.state.file_id(sub.file), self.history_node(job))
        else:
            self.queue.append(queued, self.state.file_id(sub.file))

    def submit_dependent(self, job):
        """A dependent job whose parents completed, registered now: a submission of this instant."""
        job.submit_time = self.bs.time()
        self.onJobSubmission(job)

    def history_node(self, job):
        """The node index a job ran on before t0 (workload field ``history_node``), or None."""
        node = (job.json_dict or {}).get("history_node")
        if node is None:
            return None
        if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < len(self.platform.nodes):
            warn(f"job {job.id}: history_node must be a node index in 0..{len(self.platform.nodes) - 1}, "
                 f"got {node!r}: scheduled as any other job")
            return None
        return node

    def onJobCompletion(self, job):
        self.events += 1
        now = self.bs.time()
        if is_writeback(job.id):
            node = self.state.written_back(job.id, now)
            self.admit_waiting(node, now)
        elif is_staging_job(job.id):
            for held in self.state.staging_done(job.id, now):
                self.execute(held)
            if self.clock is not None:
                self.clock.other_event(now)
        else:
            self.ended(job, job.job_state == job.State.COMPLETED_SUCCESSFULLY, now)
            if self.clock is not None:
                self.clock.ended(now)
        self.dirty = True

    def onJobsKilled(self, jobs):
        now = self.bs.time()
        for job in jobs:
            self.ended(job, False, now)
        if self.clock is not None:
            self.clock.ended(now)
        self.dirty = True

    def ended(self, job, succeeded, now):
        """A job of a workload ended: its cores and files freed, its outputs (if it completed) in its
        node's memory, its dependents due submitted."""
        held = self.state.finish(job.id, now)
        if succeeded and held is not None and held.job.outputs:
            writeback = self.state.place_outputs(held, now, self.opts.write_back == "staged")
            if writeback is not None:
                self.issue_staging(writeback)
        if held is not None:
            self.admit_waiting(held.node, now)
        self.parent_ended(job.id, succeeded)

    def onNoMoreEvents(self):
        if self.clock is not None and self.fatal is None and self.ready:
            self.end_windows()      # before the clock's pass, as without the clock
            self.clock.step(self.bs.time())
            self.dirty = False
        super().onNoMoreEvents()

    # ---- passes ---------------------------------------------------------------
    def unstarted(self):
        # dependent jobs whose parents still run count: registration must stay open for them
        return (len(self.queue) + (self.clock.waiting() if self.clock is not None else 0)
                + self.dependents_waiting())

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
        self.commit_all(self.planned(lambda: self.planner.plan(now, self.queue)), now)

    def load_time(self, size, node):
        """Seconds a load of ``size`` bytes lasts on node (option ``load_time_rounding``, R6)."""
        return load_time(size, self.platform.bandwidth[node], self.opts.load_time_rounding == "float32_floor")

    def planned(self, run):
        """``run()``'s decisions, its CPU time counted as the planner's."""
        c0 = self.cpu_clock()
        decisions = run()
        self.plan_cpu += self.cpu_clock() - c0
        return decisions

    def commit_all(self, decisions, now):
        """Start the decided jobs (queue positions ``d.index``) and take them out of the queue."""
        for d in decisions:
            self.commit(d, now)
        self.queue.remove([d.index for d in decisions])

    def commit(self, d, now):
        """Start ``d.job`` on its node and cores now: its load or wait, its execution, its window's end;
        or, where its files do not fit in the node's memory yet, its wait for room."""
        node = self.platform.nodes[d.node]
        if self.state.lacks_room(d.job, d.node, now):
            held = self.state.wait_for_room(d.job, d.node, d.positions, now)
            held.alloc = procset_of([node.core_ids[p] for p in d.positions.tolist()])
            files = d.job.reads
            self.decision_log.write(now, d.job.id, self.label, node.name, alloc_text(held.alloc), d.job.cores, d.t_file,
                                    ";".join(f for f, _ in files), sum(s for _, s in files), "full", None,
                                    d.score)
        else:
            held = self.claim(d.job, d.node, d.positions, now, d.t_file, d.score)
        self.predictions.write(d.job.id, d.job.subtime, d.predicted, now)
        self.watch_window(held)
        if self.clock is not None:
            self.clock.started(held)

    def claim(self, job, k, positions, now, t_file, score, since=None):
        """``job`` takes its files on node k now (its cores held from ``since``, default now): its
        load or wait, its execution once every file is there, its decision-log row. Its Held."""
        node = self.platform.nodes[k]
        if job.files:
            # several files: one decision-log entry per file, ';'-separated (contract §2b)
            cases, stagings, held, new = self.state.start_files(job, k, positions, now, since)
            held.alloc = procset_of([node.core_ids[p] for p in positions.tolist()])
            self.decision_log.write(now, job.id, self.label, node.name, alloc_text(held.alloc), job.cores,
                                    self.state.windows[k][job.id].avail,
                                    ";".join(f for f, _ in job.files), sum(s for _, s in job.files),
                                    ";".join(cases), ";".join(s or "" for s in stagings), score)
        else:
            case, held, staging = self.state.start(job, k, positions, now, t_file, since)
            new = [staging] if staging is not None else []
            held.alloc = procset_of([node.core_ids[p] for p in positions.tolist()])
            self.decision_log.write(now, job.id, self.label, node.name, alloc_text(held.alloc), job.cores,
                                    self.state.windows[k][job.id].avail,
                                    job.file, job.size, case, held.staging, score)
        for new_staging in new:
            self.issue_staging(new_staging)
        if held.computing:
            self.execute(held)
        return held

    def admit_waiting(self, k, now):
        """Room freed on node k (a write-back or a job ended): the jobs waiting for it claim their files."""
        for waiting in self.state.admit_waiting(k, now):
            job = waiting.job
            t_file = now + (self.load_time(self.state.missing_bytes(job, k, now), k))
            self.claim(job, k, waiting.positions, now, t_file, None, since=waiting.start)

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
                "jobs_moved": getattr(self.planner, "stats_jobs_moved", 0), "by_queue_length": buckets,
                **(self.planner.stats_walk() if hasattr(self.planner, "stats_walk") else {})}
