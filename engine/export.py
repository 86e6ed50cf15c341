"""Output files in Batsim 4's formats: <prefix>_jobs.csv, _schedule.csv, _machine_states.csv.

All three are written under temporary names and renamed over the final ones
only by `close`, so a run that fails before it simulated anything (`discard`)
or is killed leaves the outputs of an earlier run with the same prefix intact;
a run whose outputs cannot be written (a full disk) leaves no temporary file.
Columns and quoting: ``batloc.outputs``.

Meanwhile every event that shapes a row goes to the run's journal
(``journal``), so that a killed run's outputs can be rebuilt (``recovery``):
the simulation tells the exporter of each start, end, registration and
metadata change, and checkpoints before each message to its scheduler.
"""

import os

from batloc.outputs import JOBS_HEADER, MACHINE_STATES_HEADER, open_for_writing, quoted, text

from .errors import EngineError
from .journal import Journal, path_of


def f6(x):
    """Batsim prints every float as C++'s std::to_string does: six decimals."""
    return "%.6f" % x


def walltime_text(walltime):
    """Batsim 4.2.1 writes a missing walltime as a bare -1 (contract §5), any other with six decimals."""
    return "-1" if walltime == -1.0 else f6(walltime)


# Batsim 4.2.1 records a job that ran in no time as having run this long (jobs_execution.cpp: "computed in null
# time. Putting epsilon instead"): its finish_time is its start + 1e-5 s, and its stretch finite.
NULL_RUNTIME = 1e-5


def run_times(start, finish):
    """(execution time, finish time) as Batsim 4.2.1 writes them: the job's run, or 1e-5 s for none."""
    run = finish - start
    if run == 0:
        return NULL_RUNTIME, start + NULL_RUNTIME
    return run, finish


SUFFIXES = ("_jobs.csv", "_machine_states.csv", "_schedule.csv")


def absolute(prefix):
    """`prefix` from the root, its last part kept as is (`out/` names files in out/, not beside it)."""
    folder, name = os.path.split(prefix)
    return os.path.join(os.path.abspath(folder or "."), name)


class Exporter:
    """Writes rows as jobs end (completion order, like Batsim) and the summaries at the end."""

    def __init__(self, prefix, nb_compute, version, record_wallclock=False, journal=None):
        """`journal`: what the run's journal records of its inputs (a dict), or None for no journal."""
        self.prefix = prefix                  # as the user gave it, for messages
        self.path = absolute(prefix)          # taken whole before a scheduler in this process can change directory
        self.temp = {s: f"{self.path}{s}.{os.getpid()}.tmp" for s in SUFFIXES}
        self.broken = None  # why the outputs cannot be written, once a write failed
        self.journal = None
        parent = os.path.dirname(self.path)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            self.jobs_file = open_for_writing(self.temp["_jobs.csv"], buffering=1 << 20)
        except OSError as e:
            raise EngineError(f"cannot write outputs with prefix {prefix!r}: {e.strerror}") from None
        if journal is not None:
            try:
                self.journal = Journal(path_of(self.path, os.getpid()), dict(journal, nb_compute=nb_compute,
                                       version=version, record_wallclock=record_wallclock))
            except EngineError:
                self.discard()
                raise
        self._write(JOBS_HEADER + "\n")
        self.nb_compute = nb_compute
        self.version = version
        self.record_wallclock = record_wallclock
        self.states = []  # (time, nb_computing), one entry per distinct time
        self.counts = dict(nb_jobs=0, finished=0, success=0, killed=0, rejected=0)
        self.sums = dict(wait=0.0, turnaround=0.0, slowdown=0.0)
        self.maxs = dict(wait=0.0, turnaround=0.0, slowdown=0.0, makespan=0.0)
        self.machine_state(0.0, 0)

    def _write(self, line):
        """Append to jobs.csv; the first failure (a full disk) ends the run, later rows are dropped."""
        if self.broken is not None:
            return
        try:
            self.jobs_file.write(line)
        except OSError as e:
            self.broken = f"cannot write outputs with prefix {self.prefix!r}: {e.strerror or e}"
            raise EngineError(self.broken) from None

    # ---- what the journal records (each hook costs a tuple when it is kept, a test when not) ------------
    def submitted(self, job):
        """`job` is submitted: a workload's, or one the scheduler registered (`registered` first)."""
        if self.journal is not None:
            self.journal.pending.append(("j", job.id))

    def registered(self, job):
        if self.journal is not None:
            self.journal.pending.append(("d", job.workload, job.local_id, job.profile, job.subtime, job.res,
                                         job.walltime))

    def started(self, job, time, nb_computing):
        """`job` started at `time`, `nb_computing` compute resources now busy."""
        self.machine_state(time, nb_computing)
        if self.journal is not None:
            self.journal.pending.append(("s", job.id, job.start, job.alloc_str, nb_computing))

    def ended(self, job, time, nb_computing):
        """`job` ended where it ran (its row comes when the server hears of it: at once, or by its message)."""
        self.machine_state(time, nb_computing)
        if self.journal is not None:
            self.journal.pending.append(("f", job.id, job.state, job.finish, nb_computing))

    def metadata_set(self, job):
        if self.journal is not None:
            self.journal.pending.append(("m", job.id, job.metadata))

    def checkpoint(self, now):
        """Before a message to the scheduler: the journal holds everything up to here."""
        if self.journal is not None and self.broken is None:
            try:
                self.journal.checkpoint(now)
            except OSError as e:
                self.broken = f"cannot write the run's journal {self.journal.path}: {e.strerror or e}"
                raise EngineError(self.broken) from None

    def job(self, job):
        """Append one finished (or rejected) job's row."""
        if self.journal is not None:
            self.journal.pending.append(("e", job.id, job.state, job.finish))
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
            run, finish = run_times(job.start, job.finish)
            wait = job.start - job.subtime
            turnaround = finish - job.subtime
            slowdown = turnaround / run
            self.sums["wait"] += wait
            self.sums["turnaround"] += turnaround
            self.sums["slowdown"] += slowdown
            m = self.maxs
            m["wait"] = max(m["wait"], wait)
            m["turnaround"] = max(m["turnaround"], turnaround)
            m["slowdown"] = max(m["slowdown"], slowdown)
            m["makespan"] = max(m["makespan"], finish)
            times = "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f" % (job.start, run, finish, wait, turnaround, slowdown)
        self._write("%s,%s,%s,%.6f,%d,%s,%d,%s,%s,%s,%s,%s\n" % (
            text(job.local_id), text(job.workload), text(job.profile), job.subtime, job.res,
            walltime_text(job.walltime), success, job.state, times, job.alloc_str, "" if rejected else "0.000000",
            quoted(job.metadata)))

    def unfinished(self, job):
        """A job the simulation could not finish (deadlock): still written, so none is lost."""
        self.counts["nb_jobs"] += 1
        start = f6(job.start) if job.start is not None else ""
        row = [
            text(job.local_id), text(job.workload), text(job.profile), f6(job.subtime), str(job.res),
            walltime_text(job.walltime), "0", job.state, start, "", "", "", "", "", job.alloc_str, "",
            quoted(job.metadata),
        ]
        self._write(",".join(row) + "\n")

    def machine_state(self, time, nb_computing):
        # one row per printed instant: Batsim's messages (1e-12 s to 1e-10 s on batloc's platforms) part a job's
        # end from the next start on its cores by less than the six decimals show
        if self.states and round(self.states[-1][0], 6) == round(time, 6):
            self.states[-1] = (self.states[-1][0], nb_computing)
        else:
            self.states.append((time, nb_computing))

    def close(self, end_time, scheduling_time=0.0, simulation_time=0.0):
        """Write the summaries, then put the three files in place; on failure none is left behind."""
        try:
            if self.broken is None:
                self._close(end_time, scheduling_time, simulation_time)
        except OSError as e:
            self.broken = f"cannot write outputs with prefix {self.prefix!r}: {e.strerror or e}"
        if self.broken is not None:
            self.discard()
            raise EngineError(self.broken)

    def _close(self, end_time, scheduling_time, simulation_time):
        self.jobs_file.close()
        with open_for_writing(self.temp["_machine_states.csv"]) as f:
            f.write(MACHINE_STATES_HEADER + "\n")
            last = None
            for time, busy in self.states:
                if busy == last:
                    continue
                last = busy
                f.write(f"{f6(time)},0,0,0,{self.nb_compute - busy},{busy}\n")
        self._write_schedule(end_time, scheduling_time, simulation_time)
        for suffix, temp in self.temp.items():
            os.replace(temp, self.path + suffix)
        if self.journal is not None:
            self.journal.close(remove=True)

    def discard(self):
        """Remove the temporary files, keep whatever the prefix held (nothing simulated, or a failed write)."""
        try:
            self.jobs_file.close()
        except OSError:
            pass   # its buffer could not be flushed: the file goes anyway
        for temp in self.temp.values():
            try:
                os.remove(temp)
            except OSError:
                pass   # never created
        if self.journal is not None:
            self.journal.close(remove=True)

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
        with open_for_writing(self.temp["_schedule.csv"]) as f:
            f.write(",".join(values) + "\n")
            f.write(",".join(values.values()) + "\n")
