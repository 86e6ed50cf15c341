"""Workflows on the Batsim side (contract §2b): dependent jobs submitted when their parents complete.

The engine knows nothing of workflows (as Batsim): it runs the workload's
``jobs``, and the jobs and profiles a scheduler registers. This part of a
scheduler reads the workload's ``dependent_jobs`` from the file
SIMULATION_BEGINS names, and when a job's last parent completes it
registers the job's profile under a name of its own (Batsim 4.2.1 keeps no
profile that no static job uses, and deletes a dynamic one after its first
job without profile reuse) and the job (REGISTER_PROFILE, REGISTER_JOB, into
the parent's workload), then schedules it as a submission of that instant.
A job whose parent failed, was killed or rejected is registered and rejected
at once, and so are its descendants: every job of the workload ends in
jobs.csv with a final state.
"""

from batloc.locality.workflow import DependencyBook, WorkflowError, dependent_profile_name, read_dependents
from batloc.schedulers.boundary import PREFIX


class WorkflowSubmissions:
    """Mixed into a scheduler family's class: ``read_workflows`` at SIMULATION_BEGINS,
    ``parent_ended`` at each end of a job of a workload. A family whose submission is one call,
    ``submit(job)``, takes ``onJobSubmission`` and ``submit_dependent`` from here; the planning
    family has its own."""

    dependencies = None

    def onJobSubmission(self, job):
        if not self.is_registered_dependent(job.id):     # else the engine's acknowledgement of one we queued
            self.submit(job)

    def submit_dependent(self, job):
        """A dependent job whose parents completed, registered now: a submission of this instant."""
        job.submit_time = self.bs.time()
        self.submit(job)

    def read_workflows(self):
        """The dependent jobs of every workload; False (the run stopping, one line) when one is unreadable.

        None without dynamic jobs: the scheduler cannot register them, and behind the staging proxy
        (which shows it no dynamic jobs) the proxy does."""
        self.dependencies = DependencyBook()
        self.dependent_profiles = {}
        self.registered_dependents = set()
        if not getattr(self.bs, "dynamic_job_registration_enabled", True):
            return True
        for name, source in sorted((getattr(self.bs, "workloads", None) or {}).items()):
            try:
                jobs, profiles = read_dependents(source, f"workload {name}")
            except WorkflowError as exc:
                self.stop_deciding(f"{PREFIX}: {exc}")
                return False
            for j in jobs:
                self.dependent_profiles[f"{name}!{j['id']}"] = profiles[j["profile"]]
            self.dependencies.add_workload(name, jobs)
        return True

    def dependents_waiting(self):
        return len(self.dependencies) if self.dependencies is not None else 0

    def parent_ended(self, job_id, succeeded):
        """A job of a workload ended (or was rejected): its dependents now due are registered,
        and scheduled (``submit_dependent``) or rejected."""
        if not self.dependencies:
            return
        ready, doomed = self.dependencies.ended(job_id, succeeded)
        for d in ready:
            self.submit_dependent(self.register_dependent(d))
        if doomed:
            self.bs.reject_jobs([self.register_dependent(d) for d in doomed])

    def register_dependent(self, d):
        """REGISTER_PROFILE and REGISTER_JOB of dependent `d` now; its pybatsim Job, carrying its fields."""
        desc = d.description
        pname = dependent_profile_name(desc["profile"], d.id)
        self.bs.register_profiles(d.workload, {pname: self.dependent_profiles.pop(d.id)})
        walltime = desc.get("walltime", -1)
        job = self.bs.register_job(d.id, int(desc["res"]), walltime if walltime is not None else -1, pname)
        job.json_dict = {**desc, "id": d.id, "subtime": self.bs.time(), "profile": pname}
        self.registered_dependents.add(d.id)
        return job

    def is_registered_dependent(self, job_id):
        """A JOB_SUBMITTED the engine sends back for a job we registered (``--acknowledge-dynamic-jobs``)."""
        return self.dependencies is not None and job_id in self.registered_dependents
