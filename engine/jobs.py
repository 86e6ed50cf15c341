"""A job's life cycle: submitted, running through its profile's phases, ended and written out.

Delays are timers in the heap (``timers``); executions and transfers are
SimGrid activities, owned by their job until they complete or the job ends.
Every job that ends, is rejected, or is left unfinished by a fatal error gets
its jobs.csv row here.
"""

from .errors import EngineError
from .profiles import Delay
from .timers import INF, PHASE_END


class JobLifecycle:
    """The job methods of `Simulation` (``server``)."""

    def submit(self, job, announce=True):
        job.state = "SUBMITTED"
        self.jobs[job.id] = job
        self.unfinished += 1
        if announce:
            desc = job.description  # the engine's own copy of the input: sent as is, id rewritten
            desc["id"] = job.id
            data = {"job_id": job.id, "job": desc}
            if self.opt.forward_profiles:
                data["profile"] = self.workloads[job.workload].profiles[job.profile]
            self.emit("JOB_SUBMITTED", data)

    def next_phase(self, job):
        if self.io is not None:
            self.io.leave(job)
        try:
            phase = next(job.runner)
        except StopIteration:
            ret = job.pdata.get("ret", 0)
            self.end_job(job, "COMPLETED_SUCCESSFULLY" if ret == 0 else "COMPLETED_FAILED", ret)
            return
        except EngineError as e:
            raise EngineError(f"job {job.id!r}: {e}") from None
        job.phase_start = self.now
        if type(phase) is Delay:
            job.activities = None
            job.phase_end = self.now + phase.seconds
            self.push(job.phase_end, PHASE_END, job)
            return
        job.phase_end = None
        if self.io is not None and not self.io.admit(job, phase):
            return  # waits for exclusive file-system access; the gate resumes it
        self.sync_simgrid()
        acts = []
        now, earliest = self.now, []
        try:
            for host, flops in phase.execs:
                ex = self.sg.this_actor.exec_init(flops)
                ex.host = host
                acts.append(ex.start())
                earliest.append(now if self.platform.varies else now + flops / host.speed)
            for src, dst, size in phase.comms:
                acts.append(self.sg.Comm.sendto_async(src, dst, int(size)))
                earliest.append(now + int(size) / self.bottleneck(src, dst))
        except Exception as e:
            raise EngineError(f"job {job.id!r} (profile {job.profile!r}) cannot run on its allocation: {e}") from None
        if not acts:
            self.push(self.now, PHASE_END, job)
            return
        job.activities = acts
        for a, end in zip(acts, earliest):
            self.acts.push(a)
            self.act_owner[a] = job
            self.act_earliest[a] = end
        self.quiet_until = min(self.quiet_until, min(earliest))
        self.act_count += len(acts)

    def bottleneck(self, src, dst):
        """The fastest a transfer from `src` to `dst` can go: its route's slowest link (infinite when the
        platform's rates may change over time, or for a host to itself)."""
        key = (src, dst)
        rate = self.route_rates.get(key)
        if rate is None:
            links = src.route_to(dst)[0] if src is not dst and not self.platform.varies else ()
            rate = self.route_rates[key] = min((link.bandwidth for link in links), default=INF)
        return rate

    def _forget_activity(self, act):
        """`act` is no longer in flight: the earliest instant any other can end may be later."""
        if self.act_earliest.pop(act) <= self.quiet_until:
            self.quiet_until = min(self.act_earliest.values(), default=INF)

    def activity_done(self, act):
        self.act_count -= 1
        job = self.act_owner.pop(act)
        self._forget_activity(act)
        job.activities.remove(act)
        if not job.activities:
            job.activities = None
            self.next_phase(job)

    def progress_of(self, job):
        if job.phase_end is not None and job.phase_end > job.phase_start:
            return min(1.0, (self.now - job.phase_start) / (job.phase_end - job.phase_start))
        return 0.0

    def end_job(self, job, state, return_code, announce=True):
        if self.io is not None:
            self.io.forget(job)
        if job.activities:
            for a in job.activities:
                if self.act_owner.pop(a, None) is not None:
                    self._forget_activity(a)
                self.acts.erase(a)
                a.cancel()
                self.act_count -= 1
            job.activities = None
        job.token += 1
        job.runner = None
        job.state = state
        job.finish = self.now
        for r in job.alloc:
            if r.kind == "compute":
                del self.busy[r.id]
                self.nb_computing -= 1
        self.out.machine_state(self.now, self.nb_computing)
        self.finish_bookkeeping(job)
        if announce:
            self.emit("JOB_COMPLETED", {
                "job_id": job.id, "job_state": state, "return_code": return_code,
                "kill_reason": "", "alloc": job.alloc_str,
            })
        key = (job.workload, job.profile)
        if key in self.dynamic_profiles and not self.opt.profile_reuse:
            # Batsim 4.2 deletes a dynamic profile once its first job ends (contract §3)
            self.workloads[job.workload].profiles.pop(job.profile, None)
            self.dynamic_profiles.discard(key)

    def unstart(self, job):
        """Undo `job`'s start, refused as its first phase began (the run then stops): it never ran."""
        for r in job.alloc:
            if r.kind == "compute":
                del self.busy[r.id]
                self.nb_computing -= 1
        self.out.machine_state(self.now, self.nb_computing)
        job.token += 1
        job.state, job.start, job.alloc, job.alloc_str, job.runner = "SUBMITTED", None, None, "", None

    def finish_bookkeeping(self, job):
        self.unfinished -= 1
        self.out.job(job)
        if self.progress is not None and self.workloads[job.workload].path is not None:
            self.progress.job_done()

    def write_unfinished(self):
        """After a fatal error: write every job not yet written, so that none is silently lost; returns how many."""
        left = [job for job in self.jobs.values() if job.state in ("SUBMITTED", "RUNNING")]
        left += self.static[self.next_static:]
        for job in left:
            self.out.unfinished(job)
        return len(left)
