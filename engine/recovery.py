"""`batloc-batsim --recover PREFIX` (and every start with that prefix): a killed run's outputs, from its journal.

A run whose engine was killed (-9, the OOM killer, a scheduler in its process
that took it down, its supervisor ending a hung call) leaves
``<prefix>_journal.<pid>.tmp`` (``journal``). Its events are replayed here on
the run's workloads, read again, through the engine's own exporter: the files
come out exactly as the engine would have written them had it been stopped at
the journal's last checkpoint — every job that had ended with the row it has
in a run left to finish, every other job with its last state (``RUNNING``
with its start and allocation, ``SUBMITTED``, ``NOT_SUBMITTED``), the machine
states and the summary.
"""

import os
from dataclasses import dataclass

from .errors import EngineError
from .export import SUFFIXES, Exporter
from .journal import Unreadable, left_behind, read
from .workload import Job, load_workload, submission_order


@dataclass
class Recovered:
    pid: int
    path: str
    written: bool          # the outputs were rebuilt
    now: float = 0.0       # the last checkpoint's simulated time
    unfinished: int = 0
    why_not: str = ""      # when not written
    damage: str = ""       # a journal damaged in the middle: what was left out (journal.read)

    def line(self, prefix):
        if self.written:
            damaged = f"; warning: its journal was {self.damage}" if self.damage else ""
            return (f"recovered the run of pid {self.pid}, killed after t={self.now:.6f}, from its journal: outputs "
                    f"written to {prefix}_*.csv, {self.unfinished} job(s) unfinished{damaged}")
        return f"the run of pid {self.pid} left a journal ({self.path}) {self.why_not}"


def recover(prefix):
    """Rebuild the outputs of every dead run with `prefix`; one line per journal (what became of it)."""
    return [recover_one(prefix, path).line(prefix) for path in left_behind(prefix)]


def recover_one(prefix, path, force=False):
    """Replay the journal at `path`; `force`: even over outputs newer than it (its own engine's, cut short)."""
    header, records, checkpoints, damage = read(path)
    pid = header.get("pid")
    if checkpoints == 0:
        _clean(prefix, path, pid)
        return Recovered(pid, path, False, why_not="but had simulated nothing: removed, no output written")
    newer = [prefix + s for s in SUFFIXES if os.path.exists(prefix + s) and
             os.path.getmtime(prefix + s) > os.path.getmtime(path)]
    if newer and not force:
        _clean(prefix, path, pid)
        return Recovered(pid, path, False, why_not=f"older than {newer[0]}: removed, the outputs kept")
    try:
        exporter, now, left = _replay(prefix, header, records)
    except EngineError as e:   # the outputs cannot be written there (a read-only folder)
        raise Unreadable(str(e)) from None
    try:
        exporter.close(now, scheduling_time=0.0, simulation_time=os.path.getmtime(path) - header["started"])
    except EngineError as e:
        raise Unreadable(f"{path}: {e}") from None
    _clean(prefix, path, pid)
    return Recovered(pid, path, True, now, left, damage=damage or "")


def _replay(prefix, header, records):
    """The engine's state at the journal's last checkpoint, written as its `write_unfinished` and `close` would."""
    static = _static_jobs(header)
    known = {job.id: job for job in static}   # and the registered ones, as they come
    exporter = Exporter(prefix, header["nb_compute"], header["version"], header["record_wallclock"])
    jobs = {}            # as the engine's Simulation.jobs: every job submitted or registered, in that order
    now = 0.0
    try:
        for record in records:
            kind = record[0]
            if kind == "@":
                now = record[1]
            elif kind == "j":
                job = known[record[1]]
                job.state = "SUBMITTED"
                jobs[job.id] = job
            elif kind == "s":
                _, job_id, start, alloc, busy = record
                job = jobs[job_id]
                job.state, job.start, job.alloc_str = "RUNNING", start, alloc
                exporter.machine_state(start, busy)
            elif kind == "f":
                _, job_id, state, finish, busy = record
                job = jobs[job_id]
                job.state, job.finish = state, finish
                exporter.machine_state(finish, busy)
            elif kind == "e":
                _, job_id, state, finish = record
                job = jobs[job_id]
                job.state, job.finish = state, finish
                exporter.job(job)
                job.written = True
            elif kind == "m":
                jobs[record[1]].metadata = record[2]
            elif kind == "d":
                _, workload, local_id, profile, subtime, res, walltime = record
                job = Job(workload, local_id, None, subtime, res, walltime, profile)
                known[job.id] = job
            else:
                raise KeyError(kind)
        # as jobs.write_unfinished: ended jobs whose end the server had not heard of yet, then the others
        for job in jobs.values():
            if job.finish is not None and not job.written and job.state != "REJECTED":
                exporter.job(job)
        left = [job for job in jobs.values() if job.state in ("SUBMITTED", "RUNNING")]
        left += [job for job in static if job.state == "NOT_SUBMITTED"]
        for job in left:
            exporter.unfinished(job)
    except (KeyError, ValueError, TypeError) as e:
        exporter.discard()
        raise Unreadable(f"the journal does not fit the workloads it names ({type(e).__name__}: {e})") from None
    except BaseException:
        exporter.discard()
        raise
    return exporter, now, len(left)


def _static_jobs(header):
    """The run's workload jobs in the order the engine submits them (Simulation.static)."""
    workloads = []
    for i, (path, stamp) in enumerate(zip(header["workloads"], header["stamps"])):
        try:
            st = os.stat(path)
        except OSError as e:
            raise Unreadable(f"cannot read the run's workload {path}: {e.strerror}") from None
        if [st.st_size, st.st_mtime_ns] != stamp:
            raise Unreadable(f"the run's workload {path} changed since the run started")
        try:
            workloads.append(load_workload(path, f"w{i}", None, traces=False))
        except EngineError as e:
            raise Unreadable(str(e)) from None
    return submission_order(workloads)


def _clean(prefix, path, pid):
    """The dead run's journal and temporary files go."""
    for leftover in [path] + [f"{prefix}{s}.{pid}.tmp" for s in SUFFIXES]:
        try:
            os.remove(leftover)
        except OSError:
            pass
