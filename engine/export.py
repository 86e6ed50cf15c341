"""Output files in Batsim 4's formats: <prefix>_jobs.csv, _schedule.csv, _machine_states.csv.

All three are written under temporary names and renamed over the final ones
only by `close`, so a run that fails before it simulated anything (`discard`)
or is killed leaves the outputs of an earlier run with the same prefix intact.
"""

import os

from .errors import EngineError


JOBS_HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
    "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
    "stretch,allocated_resources,consumed_energy,metadata"
)
MACHINE_STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"


def f6(x):
    """Batsim prints every float as C++'s std::to_string does: six decimals."""
    return "%.6f" % x


def walltime_text(walltime):
    """Batsim 4.2.1 writes a missing walltime as a bare -1 (contract §5), any other with six decimals."""
    return "-1" if walltime == -1.0 else f6(walltime)


def _ratio(num, den):
    if den == 0:
        return float("nan") if num == 0 else float("inf")
    return num / den


SUFFIXES = ("_jobs.csv", "_machine_states.csv", "_schedule.csv")


class Exporter:
    """Writes rows as jobs end (completion order, like Batsim) and the summaries at the end."""

    def __init__(self, prefix, nb_compute, version, record_wallclock=False):
        self.prefix = prefix
        self.temp = {s: f"{prefix}{s}.{os.getpid()}.tmp" for s in SUFFIXES}
        parent = os.path.dirname(prefix)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            self.jobs_file = open(self.temp["_jobs.csv"], "w", buffering=1 << 20)
        except OSError as e:
            raise EngineError(f"cannot write outputs with prefix {prefix!r}: {e.strerror}") from None
        self.jobs_file.write(JOBS_HEADER + "\n")
        self.nb_compute = nb_compute
        self.version = version
        self.record_wallclock = record_wallclock
        self.states = []  # (time, nb_computing), one entry per distinct time
        self.counts = dict(nb_jobs=0, finished=0, success=0, killed=0, rejected=0)
        self.sums = dict(wait=0.0, turnaround=0.0, slowdown=0.0)
        self.maxs = dict(wait=0.0, turnaround=0.0, slowdown=0.0, makespan=0.0)
        self.machine_state(0.0, 0)

    def job(self, job):
        """Append one finished (or rejected) job's row."""
        c = self.counts
        c["nb_jobs"] += 1
        rejected = job.state == "REJECTED"
        success = 1 if job.state == "COMPLETED_SUCCESSFULLY" else 0
        if rejected:
            c["rejected"] += 1
            times = ",,,,,"
        else:
            c["finished"] += 1
            if success:
                c["success"] += 1
            else:
                c["killed"] += 1
            run = job.finish - job.start
            wait = job.start - job.subtime
            turnaround = job.finish - job.subtime
            slowdown = _ratio(turnaround, run)
            self.sums["wait"] += wait
            self.sums["turnaround"] += turnaround
            self.sums["slowdown"] += slowdown
            m = self.maxs
            m["wait"] = max(m["wait"], wait)
            m["turnaround"] = max(m["turnaround"], turnaround)
            m["slowdown"] = max(m["slowdown"], slowdown)
            m["makespan"] = max(m["makespan"], job.finish)
            times = "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f" % (job.start, run, job.finish, wait, turnaround, slowdown)
        self.jobs_file.write("%s,%s,%s,%.6f,%d,%s,%d,%s,%s,%s,%s,\"%s\"\n" % (
            job.local_id, job.workload, job.profile, job.subtime, job.res, walltime_text(job.walltime),
            success, job.state, times, job.alloc_str, "" if rejected else "0.000000",
            job.metadata.replace('"', '""')))

    def unfinished(self, job):
        """A job the simulation could not finish (deadlock): still written, so none is lost."""
        self.counts["nb_jobs"] += 1
        start = f6(job.start) if job.start is not None else ""
        row = [
            job.local_id, job.workload, job.profile, f6(job.subtime), str(job.res), walltime_text(job.walltime),
            "0", job.state, start, "", "", "", "", "", job.alloc_str, "", '"%s"' % job.metadata.replace('"', '""'),
        ]
        self.jobs_file.write(",".join(row) + "\n")

    def machine_state(self, time, nb_computing):
        if self.states and self.states[-1][0] == time:
            self.states[-1] = (time, nb_computing)
        else:
            self.states.append((time, nb_computing))

    def close(self, end_time, scheduling_time=0.0, simulation_time=0.0):
        """Write the summaries, then put the three files in place."""
        try:
            self._close(end_time, scheduling_time, simulation_time)
        except OSError as e:
            raise EngineError(f"cannot write outputs with prefix {self.prefix!r}: {e.strerror}") from None

    def _close(self, end_time, scheduling_time, simulation_time):
        self.jobs_file.close()
        with open(self.temp["_machine_states.csv"], "w") as f:
            f.write(MACHINE_STATES_HEADER + "\n")
            last = None
            for time, busy in self.states:
                if busy == last:
                    continue
                last = busy
                f.write(f"{f6(time)},0,0,0,{self.nb_compute - busy},{busy}\n")
        self._write_schedule(end_time, scheduling_time, simulation_time)
        for suffix, temp in self.temp.items():
            os.replace(temp, self.prefix + suffix)

    def discard(self):
        """Nothing was simulated: remove the temporary files, keep whatever the prefix held."""
        self.jobs_file.close()
        for temp in self.temp.values():
            try:
                os.remove(temp)
            except FileNotFoundError:
                pass

    def _write_schedule(self, end_time, scheduling_time, simulation_time):
        computing = 0.0
        for (t0, busy), (t1, _) in zip(self.states, self.states[1:] + [(end_time, 0)]):
            computing += busy * max(0.0, t1 - t0)
        total = self.nb_compute * end_time
        c, n = self.counts, max(self.counts["nb_jobs"], 1)
        if not self.record_wallclock:
            # wall-clock figures would make two runs of the same inputs differ
            scheduling_time = simulation_time = 0.0
        values = {
            "batsim_version": self.version,
            "consumed_joules": f6(0.0),
            "makespan": f6(self.maxs["makespan"]),
            "max_slowdown": f6(self.maxs["slowdown"]),
            "max_turnaround_time": f6(self.maxs["turnaround"]),
            "max_waiting_time": f6(self.maxs["wait"]),
            "mean_slowdown": f6(self.sums["slowdown"] / n),
            "mean_turnaround_time": f6(self.sums["turnaround"] / n),
            "mean_waiting_time": f6(self.sums["wait"] / n),
            "nb_computing_machines": str(self.nb_compute),
            "nb_grouped_switches": "0",
            "nb_jobs": str(c["nb_jobs"]),
            "nb_jobs_finished": str(c["finished"]),
            "nb_jobs_killed": str(c["killed"]),
            "nb_jobs_rejected": str(c["rejected"]),
            "nb_jobs_success": str(c["success"]),
            "nb_machine_switches": "0",
            "scheduling_time": f6(scheduling_time),
            "simulation_time": f6(simulation_time),
            "success_rate": f6(c["success"] / n),
            "time_computing": f6(computing),
            "time_idle": f6(max(0.0, total - computing)),
            "time_sleeping": f6(0.0),
            "time_switching_off": f6(0.0),
            "time_switching_on": f6(0.0),
            "time_unavailable": f6(0.0),
        }
        with open(self.temp["_schedule.csv"], "w") as f:
            f.write(",".join(values) + "\n")
            f.write(",".join(values.values()) + "\n")
