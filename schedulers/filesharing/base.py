"""The pybatsim class of the file-sharing policies: events, starts, replications, decision log.

A policy subclasses ``FileSharingScheduler`` and says when and where jobs
start (``submitted``, ``schedule``); the actual state is ``state.py``, the
Batsim-side plumbing shared with the other families ``batloc.schedulers.base``.
It follows the contract like the planning family: a start holds the job's
cores (lowest free ids of the node); on a miss a ``data_staging`` job loads
the file into the node's memory, in the slot the transfer Gantt chart gives
it (issued at the slot's start, through CALL_ME_LATER when later), and the
job is executed when it completes; a job needing a file that is loading there
waits for that staging. The reservation window of a job is [t, t + walltime)
from its transfer slot's start (or its start without a transfer, or the
slot's start of the load it waits for if later); a job still loading or
computing at its end is killed there (contract §6). Replications (DLL) are
staging jobs that hold no cores.
"""

import numpy as np

from batloc.locality.staging import is_staging_job
from batloc.schedulers.admission import Admission
from batloc.schedulers.base import SchedulerBase
from batloc.schedulers.filesharing.options import FileSharingOptions
from batloc.schedulers.filesharing.state import FileSharingState, Job
from batloc.schedulers.workflows import WorkflowSubmissions


class FileSharingScheduler(WorkflowSubmissions, SchedulerBase):
    policy_name = "?"
    accepted_options = ()          # beyond options.COMMON
    default_options = {}

    # ---- what a policy defines ------------------------------------------
    def submitted(self, job, now):
        """A job arrived (already validated)."""
        raise NotImplementedError

    def setup(self):
        """After SIMULATION_BEGINS, the platform read (``self.platform``, ``self.state``)."""

    def node_changed(self, node):
        """Something real happened on `node` (a start or an end)."""

    def load_ended(self, node):
        """A load into `node`'s memory completed (a replica's end frees room there)."""

    # ---- setup ------------------------------------------------------------
    def __init__(self, options=None):
        super().__init__(options)
        self.seq = 0
        self.label = self.policy_name

    @classmethod
    def parse_options(cls, raw):
        return FileSharingOptions.parse(raw, cls.accepted_options, cls.policy_name, **cls.default_options)

    def onSimulationBegins(self):
        self.platform = self.read_platform()
        if self.platform is None:
            return
        self.admission = Admission(self.platform, no_walltime_note=f"{self.policy_name} estimates its run "
                                                                   "time as 0 and never kills it")
        self.state = FileSharingState(self.platform, self.opts)
        self.open_decision_log()
        self.setup()
        if not self.read_workflows():
            return
        self.ready = True

    # ---- events -------------------------------------------------------------
    def submit(self, job):
        sub = self.admitted(job)
        if sub is None:
            if not is_staging_job(job.id) and self.fatal is None:
                self.parent_ended(job.id, False)      # rejected: its dependents cannot run
            return
        self.seq += 1
        self.submitted(Job(job.id, sub.cores, sub.walltime, sub.file, sub.size, float(job.submit_time), self.seq,
                           sub.files, sub.outputs), self.bs.time())

    def onJobCompletion(self, job):
        now = self.bs.time()
        if is_staging_job(job.id):
            node, ready = self.state.staging_done(job.id, now)
            for held in ready:
                self.execute(held)
            self.load_ended(node)
        else:
            self._finish(job.id, now, job.job_state == job.State.COMPLETED_SUCCESSFULLY)
        self.dirty = True

    def onJobsKilled(self, jobs):
        now = self.bs.time()
        for job in jobs:
            self._finish(job.id, now, False)
        self.dirty = True

    def _finish(self, job_id, now, succeeded):
        """A job ended: its cores and files freed, its outputs (if it completed) in its node's memory,
        its dependents due submitted."""
        held = self.state.finish(job_id, now)
        if held is not None:
            if succeeded and held.job.outputs:
                self.state.place_outputs(held, now)
            self.node_changed(held.node)
        self.parent_ended(job_id, succeeded)

    # ---- what policies read -----------------------------------------------
    def file_state(self, file, node):
        """('loaded' | 'loading' | 'absent', load end) of `file` in `node`'s memory now."""
        return self.state.file_state(file, node, self.bs.time())

    def free_cores(self, node):
        return self.state.n_free[node]

    # ---- actions ------------------------------------------------------------
    def start(self, job, node, now, score=None):
        """Hold `job`'s cores on `node` now; load its file or wait for it; log the decision."""
        case, held, new_staging, planned, staging = self.state.start(job, node, now)
        if new_staging is not None:
            self.issue_staging_at(new_staging, now)
        files = job.reads
        self.decision_log.write(now, job.id, self.label, self.platform.nodes[node].name, str(held.alloc),
                                job.cores, planned, ";".join(f for f, _ in files) if job.files else job.file,
                                sum(s for _, s in files) if job.files else job.size, case, staging, score)
        if held.computing:
            self.execute(held)
        self.watch_window(held)
        self.node_changed(node)
        return case

    def replicate(self, file, size, node, now):
        """DLL: load `file` into `node`'s memory, holding no cores (§3 of the paper)."""
        st = self.state.replicate(file, size, node, now)
        self.issue_staging_at(st, now)
        return st.id

    # ---- the end ----------------------------------------------------------------
    def memories(self):
        return self.state.memories

    def stats(self):
        dt = np.array([p[1] for p in self.pass_times], dtype=float)
        q = np.array([p[0] for p in self.pass_times], dtype=float)
        return {"policy": self.label, "passes": int(dt.size), "decision_seconds": float(dt.sum()),
                "max_pass_s": float(dt.max()) if dt.size else 0.0,
                "max_waiting": float(q.max()) if q.size else 0.0, "replications": self.state.n_replicas}
