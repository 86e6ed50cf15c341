"""A job's life cycle: submitted, running through its profile's phases, ended and written out.

Delays are timers in the heap (``timers``); executions and transfers are
SimGrid activities, owned by their job until they complete or the job ends.
Every job that ends, is rejected, or is left unfinished by a fatal error gets
its jobs.csv row here.
"""

from .errors import EngineError
from .l07_clock import Transfer
from .mailbox import COMPLETED, Put
from .profiles import Delay
from .protocol import batsim_doubles
from .timers import INF, PHASE_END
from .usage_trace import Replay, UsageTrace

# Owner of a transfer or computation left running by a job that reached its walltime: Batsim 4.2.1 waits for
# its parallel task with a timeout, which does not cancel it; it goes on loading its hosts and links until
# Batsim deletes the job, once the message holding its end went out
ZOMBIE = object()


class JobLifecycle:
    """The job methods of `Simulation` (``server``)."""

    def submit(self, job, announce=True):
        job.state = "SUBMITTED"
        self.jobs[job.id] = job
        self.out.submitted(job)
        self.unfinished += 1
        if announce:
            desc = job.description  # the engine's own copy of the input: sent as is, id rewritten
            desc["id"] = job.id
            data = {"job_id": job.id, "job": batsim_doubles(desc)}
            if self.opt.forward_profiles:
                data["profile"] = batsim_doubles(self.workloads[job.workload].profiles[job.profile])
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
            if self.timed:
                self.timed_delay(job, phase.seconds)
                return
            # what is left of the walltime, as Batsim counts it (not start + walltime - now: past 2^32 s that sum
            # loses the walltime, and even below it may round a delay equal to the walltime to a success)
            if job.walltime > 0 and phase.seconds >= job.walltime - (self.now - job.start):
                return   # Batsim sleeps until the walltime instead (do_delay_task): its timer ends the job
            self.push(job.phase_end, PHASE_END, job)
            return
        job.phase_end = None
        if type(phase) is UsageTrace:
            self.sync_simgrid()
            job.replay = Replay(self, job, phase)
            job.replay.start()
            self.walltime_timeout(job)
            return
        if self.io is not None and not self.io.admit(job, phase):
            # waits for exclusive file-system access; the gate resumes it (``io_granted``). Its walltime runs on
            # meanwhile: the wait is part of the phase, whose timeout starts now
            self.walltime_timeout(job)
            return
        if not phase.execs and not phase.comms:
            if self.timed:   # an empty parallel task: SimGrid ends it at its next step, taking no time
                token = job.token
                self.clock.transfer((), lambda: self.slept(job, token))
            else:
                self.push(self.now, PHASE_END, job)
            return
        if self.clock_transfers and not phase.execs:
            # transfers only (a data staging, an I/O phase): one L07 task on the engine's own clock, worn down by
            # the same steps as Batsim's messages and sleeps
            token = job.token
            job.transfer = self.clock.transfer(self.phase_routes(phase), lambda: self.transferred(job, token))
            self.walltime_timeout(job)
            return
        self.sync_simgrid()
        try:
            if self.opt.ptasks:
                act, end = self.parallel_task(phase)
                acts, earliest = [act], [end]
            else:
                acts, earliest = self.separate_activities(phase)
        except Exception as e:
            raise EngineError(f"job {job.id!r} (profile {job.profile!r}) cannot run on its allocation: {e}") from None
        job.activities = acts
        job.moves_bytes = bool(phase.comms)
        self.comms_in_flight += job.moves_bytes
        for a, end in zip(acts, earliest):
            self.track_activity(job, a, end)
        self.walltime_timeout(job)

    def io_granted(self, job):
        """The exclusive file system is `job`'s now: its phase starts, with what its wait left of its walltime."""
        if job.sleep is not None:
            self.clock.cancel(job.sleep)
            job.sleep = None
            job.remaining -= self.now - job.phase_start
        self.next_phase(job)

    def track_activity(self, job, act, earliest):
        """`act` (a SimGrid activity of `job`) is in flight; it cannot end before `earliest`."""
        self.acts.push(act)
        self.act_owner[act] = job
        self.act_earliest[act] = earliest
        if earliest < self.quiet_until:
            self.quiet_until = earliest
        self.act_count += 1

    def walltime_timeout(self, job):
        if self.timed and job.remaining >= 0:   # Batsim waits for the phase with the walltime as timeout
            token = job.token
            job.sleep = self.clock.sleep(job.remaining, lambda: self.walltime_reached(job, token))

    def timed_delay(self, job, seconds):
        """Batsim's do_delay_task: sleep the delay if it is shorter than what is left of the walltime, else sleep
        until the walltime, which ends the job."""
        left, token = job.remaining, job.token
        if left < 0 or seconds < left:
            if left > 0:
                job.remaining = left - seconds
            job.sleep = self.clock.sleep(seconds, lambda: self.slept(job, token))
        else:
            job.remaining = 0.0
            job.sleep = self.clock.sleep(left, lambda: self.walltime_reached(job, token))

    def phase_routes(self, phase):
        """The phase's transfers as the clock takes them: [(links, latency, bytes)] in the task's matrix order."""
        return [self.route(src, dst) + (size,) for src, dst, size in phase.comms]

    def transferred(self, job, token):
        """The clock ended `job`'s transfers before its walltime: its timeout goes, its next phase starts."""
        if job.token != token:
            return   # a phase left running past its walltime, ended since
        job.transfer = None
        if job.sleep is not None:
            self.clock.cancel(job.sleep)
            job.sleep = None
            job.remaining -= self.now - job.phase_start
        self.next_phase(job)

    def slept(self, job, token):
        if job.token == token:
            job.sleep = None
            self.next_phase(job)

    def walltime_reached(self, job, token):
        if job.token == token:
            job.sleep = None
            self.end_job(job, "COMPLETED_WALLTIME_REACHED", -1)

    def separate_activities(self, phase):
        """The phase's computations and transfers as concurrent SimGrid activities (CM02 model: the engine's
        model when no workload holds Batsim's compute tasks, byte for byte the engine's results before L07)."""
        acts, earliest, now = [], [], self.now
        for host, flops in phase.execs:
            ex = self.sg.this_actor.exec_init(flops)
            ex.host = host
            acts.append(ex.start())
            earliest.append(now if self.platform.varies else now + flops / host.speed)
        for src, dst, size in phase.comms:
            acts.append(self.sg.Comm.sendto_async(src, dst, int(size)))
            earliest.append(now + int(size) / self.bottleneck(src, dst))
        return acts, earliest

    def parallel_task(self, phase):
        """One SimGrid L07 parallel task for the phase's computations and transfers, as Batsim 4.2.1 runs every
        profile but delays (task_execution.cpp); and the earliest it can end (its most loaded host or route)."""
        hosts, index = [], {}
        for host in [h for h, _ in phase.execs] + [h for c in phase.comms for h in c[:2]]:
            if host not in index:
                index[host] = len(hosts)
                hosts.append(host)
        n = len(hosts)
        flops, matrix = [0.0] * n, [0.0] * (n * n)
        for host, amount in phase.execs:
            flops[index[host]] += amount
        for src, dst, size in phase.comms:
            matrix[index[src] * n + index[dst]] += size
        now = self.now
        earliest = now
        if not self.platform.varies:
            earliest = max([now] + [now + f / (h.speed * h.core_count) for h, f in zip(hosts, flops) if f]
                           + [now + size / self.bottleneck(src, dst) for src, dst, size in phase.comms])
        act = self.sg.this_actor.exec_init(hosts, flops, matrix if any(matrix) else [])
        return act.start(), earliest

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
        if type(job) is Put:   # a Batsim message SimGrid timed (``mailbox``)
            self.transfer_done()
            return
        if job is ZOMBIE:
            return
        if job.replay is not None:   # a usage trace: a rank's next task, or the next end to cross
            if not job.replay.finished(act):
                return
            job.replay = None
        else:
            job.activities.remove(act)
            if job.activities:
                return
            self.comms_in_flight -= job.moves_bytes
            job.moves_bytes = False
        job.activities = None
        if self.timed and job.sleep is not None:   # done before its walltime: the timeout goes
            self.clock.cancel(job.sleep)
            job.sleep = None
            job.remaining -= self.now - job.phase_start
        self.next_phase(job)

    def progress_of(self, job):
        """A running job's progress as Batsim 4.2.1's JOB_KILLED gives it (protocol.cpp's generate_task_tree; the
        key is ``profile_name``, where its docs' example says ``profile``): each sequence level's profile, task
        index and current task, down to the phase's profile and the ratio it has done; a phase with no ratio (a
        usage trace, a phase not started) says task index -1 instead, as Batsim does."""
        tree = None
        for name, x in reversed(job.trail):
            if tree is not None:
                tree = {"profile_name": name, "current_task_index": x, "current_task": tree}
                continue
            ratio = self.ratio_done(job, x)
            if ratio is None:
                tree = {"profile_name": name, "current_task_index": -1}
            else:   # printed with six decimals, as Batsim prints every double
                tree = {"profile_name": name, "progress": batsim_doubles(ratio)}
        return tree

    def ratio_done(self, job, phase):
        """What the job's current phase has done (Batsim's compute_leaf_progress): a delay, the time it has run
        over its length; a parallel task, 1 - SimGrid's remaining ratio; None for a usage trace or a phase not
        started (waiting for the exclusive file system)."""
        if type(phase) is Delay:
            return (self.now - job.phase_start) / phase.seconds if phase.seconds else 1.0
        if type(phase) is UsageTrace:
            return None
        if not phase.execs and not phase.comms:
            return 1.0   # L07: a task on no resource has nothing left from its start
        if job.transfer is not None:
            return 1.0 - self.clock.remains(job.transfer)
        if not job.activities:
            return None
        self.sync_simgrid()
        if self.opt.ptasks:
            return 1.0 - job.activities[0].remaining_ratio
        # CM02's separate activities (not Batsim's model): the least any of them has done
        done = 1.0
        for act in job.activities:
            if isinstance(act, self.sg.Exec):
                done = min(done, 1.0 - act.remaining_ratio)
            elif act.dst_data_size > 0:
                done = min(done, 1.0 - act.remaining / act.dst_data_size)
        return done

    def end_job(self, job, state, return_code, announce=True):
        """`job` ends now where it runs: its resources are free. With `announce`, its end is told to the
        scheduler: at once (instant mode), or by its message from its first host to the master (timed mode)."""
        if self.io is not None:
            self.io.forget(job)
        if job.activities:
            if self.timed and state == "COMPLETED_WALLTIME_REACHED" and job.replay is None:
                for a in job.activities:   # left running until Batsim deletes the job (``forget_sent_jobs``)
                    self.act_owner[a] = ZOMBIE
                self.zombies[job] = job.activities
            else:
                self.cancel_activities(job.activities)
            job.activities = None
            self.comms_in_flight -= job.moves_bytes
            job.moves_bytes = False
        if job.transfer is not None:
            if state == "COMPLETED_WALLTIME_REACHED":   # left running until Batsim deletes the job
                self.zombies[job] = [job.transfer]
            else:
                self.clock.cancel(job.transfer)
            job.transfer = None
        job.replay = None   # a usage trace's ranks are killed with it (their tasks cancelled above)
        if job.sleep is not None:   # timed mode: a killed job's executor sleeps no more
            self.clock.cancel(job.sleep)
            job.sleep = None
        job.token += 1
        job.runner = None
        job.state = state
        job.finish = self.now
        job.return_code = return_code
        for r in job.alloc:
            if r.kind == "compute":
                del self.busy[r.id]
                self.nb_computing -= 1
        self.out.ended(job, self.now, self.nb_computing)
        if announce:
            if self.timed:
                first = min(job.alloc, key=lambda r: r.id).host
                self.put(first, COMPLETED, job, None)
            else:
                self.announce_end(job)
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

    def cancel_activities(self, activities):
        for a in activities:
            if type(a) is Transfer:   # on the L07 clock
                self.clock.cancel(a)
                continue
            if self.act_owner.pop(a, None) is not None:
                self._forget_activity(a)
                self.acts.erase(a)
                a.cancel()
                self.act_count -= 1

    def announce_end(self, job):
        """The server hears of `job`'s end: its jobs.csv row, and JOB_COMPLETED to the scheduler."""
        self.finish_bookkeeping(job)
        self.to_delete.append(job)
        self.emit("JOB_COMPLETED", {
            "job_id": job.id, "job_state": job.state, "return_code": job.return_code,
            "kill_reason": "", "alloc": job.alloc_str,
        })

    def finish_bookkeeping(self, job):
        job.written = True
        self.unfinished -= 1
        self.out.job(job)
        if self.progress is not None and self.workloads[job.workload].path is not None:
            self.progress.job_done()

    def write_unfinished(self):
        """After a fatal error: write every job not yet written, so that none is silently lost; returns how many."""
        for job in self.jobs.values():
            if job.finish is not None and not job.written and job.state != "REJECTED":
                self.out.job(job)   # ended, but its message had not reached the server (timed mode)
        left = [job for job in self.jobs.values() if job.state in ("SUBMITTED", "RUNNING")]
        left += [job for job in self.static[self.next_static:] if job.state == "NOT_SUBMITTED"]
        for job in left:
            self.out.unfinished(job)
        return len(left)
