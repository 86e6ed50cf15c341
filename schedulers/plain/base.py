"""A pybatsim scheduler for jobs without input files: queue, cores, starts, errors.

Shared by the seed schedulers that plan with walltimes and never stage files
(Jeannot et al.'s I/O-aware list and pack scheduling, Klusáček & Rudová's
CONS + Tabu search). A policy subclasses ``PlainScheduler``, reads its own job
fields in ``admit`` and decides in ``schedule(now)``, called once per engine
message when something changed.

Bad input, as one line on stderr: a job the policy cannot run (wider than
the machine, no walltime) is rejected and named; input that makes the whole
run meaningless (a workload without the fields the policy needs, a platform
without what it needs) stops the scheduler deciding: it rejects every job
from then on, so that the simulation ends on both engines, and exits with
status 2 after it (``boundary.stop_deciding``). Passes, wake-ups and the end of
registration are the shared ``batloc.schedulers.base``; a workflow's dependent
jobs are registered when their parents complete (``batloc.schedulers.workflows``,
contract §2b), and queued as submissions of that instant.
"""

import math
import sys
from dataclasses import dataclass, field

from batloc.schedulers.base import SchedulerBase, procset_of
from batloc.schedulers.boundary import OptionsError, with_forced
from batloc.schedulers.plain.options import parse_options
from batloc.schedulers.workflows import WorkflowSubmissions


class InputError(ValueError):
    """Input that makes the run meaningless: the scheduler stops."""


class Rejected(ValueError):
    """A job this policy cannot run: it is rejected, the run goes on."""


@dataclass(eq=False)
class Waiting:
    id: str
    job: object          # pybatsim's Job
    cores: int
    walltime: float
    subtime: float
    order: int           # submission order (ties)
    user: str
    fields: dict = field(repr=False)


@dataclass(eq=False)
class Running:
    item: Waiting
    start: float
    core_ids: tuple

    @property
    def end(self):
        return self.start + self.item.walltime


def planned_end(running, now):
    """When a running job's cores are free for planning: its walltime end, or just after
    `now` if it is still running past it (its completion is on its way)."""
    end = running.end
    return end if end > now else math.nextafter(now, math.inf)


class PlainScheduler(WorkflowSubmissions, SchedulerBase):
    policy = "?"
    options_spec = {}
    forced_options = {}

    def __init__(self, options=None):
        super().__init__(options)
        self.queue = []      # Waiting, in submission order
        self.running = {}    # job id -> Running
        self.free = set()    # free compute resource ids
        self.submitted = 0

    @classmethod
    def parse_options(cls, raw):
        raw = with_forced(raw, cls.forced_options, cls.policy, OptionsError)
        return parse_options(raw, cls.options_spec, cls.policy)

    # ---- what a policy defines -------------------------------------------
    def setup(self):
        """After SIMULATION_BEGINS; raise InputError if the platform does not fit the policy."""

    def admit(self, item):
        """Read the policy's own job fields into `item`; raise Rejected or InputError."""

    def schedule(self, now):
        raise NotImplementedError

    def completed(self, running, now):
        """A running job ended (completed, failed or killed)."""

    # ---- platform ---------------------------------------------------------
    def onSimulationBegins(self):
        compute = self.bs.machines["compute"]
        self.core_ids = sorted(int(r["id"]) for r in compute)
        self.node_of = {int(r["id"]): str((r.get("properties") or {}).get("node", r["name"])) for r in compute}
        self.storages = {r["name"]: r for r in self.bs.machines["storage"]}
        self.lustre_id = int(self.storages["lustre"]["id"]) if "lustre" in self.storages else None
        self.free = set(self.core_ids)
        try:
            self.setup()
        except InputError as e:
            self.fail(str(e))
            return
        if not self.read_workflows():
            return
        self.ready = True

    def lustre_property(self, name):
        props = (self.storages.get("lustre") or {}).get("properties") or {}
        return props.get(name)

    # ---- events -------------------------------------------------------------
    def submit(self, job):
        if self.fatal is not None:
            return
        data = job.json_dict or {}
        walltime = float(job.requested_time) if job.requested_time is not None else -1.0
        item = Waiting(job.id, job, int(job.requested_resources), walltime, float(job.submit_time),
                       self.submitted, str(data.get("user", "")), data)
        self.submitted += 1
        try:
            if not walltime > 0 or not math.isfinite(walltime):
                raise Rejected(f"job {job.id} has no walltime ({job.requested_time!r}); {self.policy} plans with walltimes")
            if item.cores > len(self.core_ids):
                raise Rejected(f"job {job.id} requests {item.cores} cores but the platform has {len(self.core_ids)}")
            self.admit(item)
        except Rejected as e:
            print(f"batloc {self.policy}: {e}: rejected", file=sys.stderr)
            self.bs.reject_jobs([job])
            self.parent_ended(job.id, False)          # its dependents cannot run
            return
        except InputError as e:
            self.fail(str(e))
            return
        self.queue.append(item)
        self.dirty = True

    def onJobCompletion(self, job):
        self._ended(job, job.job_state == job.State.COMPLETED_SUCCESSFULLY)

    def onJobsKilled(self, jobs):
        for job in jobs:
            self._ended(job, False)

    def _ended(self, job, succeeded):
        running = self.running.pop(job.id, None)
        if running is None:
            return
        self.free.update(running.core_ids)
        self.completed(running, self.bs.time())
        self.dirty = True
        self.parent_ended(job.id, succeeded)

    def onRequestedCall(self):
        super().onRequestedCall()
        self.dirty = True

    def unstarted(self):
        return len(self.queue)

    # ---- actions ------------------------------------------------------------
    def start(self, item, core_ids, now):
        job = item.job
        job.allocation = procset_of(core_ids)
        if self.lustre_id is not None:
            job.storage_mapping = {"pfs": self.lustre_id}
        self.bs.execute_job(job)
        self.running[item.id] = Running(item, now, tuple(core_ids))
        self.free.difference_update(core_ids)

    def lowest_free(self, count):
        return sorted(self.free)[:count]

    def fail(self, message):
        self.stop_deciding(f"batloc {self.policy}: error: {message}")
