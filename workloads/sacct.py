"""Slurm accounting: `sacct --parsable2` output (`|`-separated, header line first).

    sacct -a -X --parsable2 -S 2022-01-01 -E 2023-01-01 \\
          -o JobID,User,Submit,Start,End,Elapsed,Timelimit,AllocCPUS,NNodes,State

Job steps (`123.batch`, `123.0`) are not jobs and are ignored; use `-X` to
leave them out. Dates are read as UTC (see slurmtime.parse_date); t = 0 is
midnight before the first submission.
"""

import math

from batloc.reading import excerpt

from .errors import IssueLog, WorkloadError
from .slurmtime import parse_date, parse_duration
from .source import read_lines
from .table import build

REQUIRED = ("JobID", "User", "Submit", "Timelimit", "State")
UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED", "REVOKED")


def read_sacct(path, strict=False, default_walltime=None):
    """Read sacct output into a job table; returns (table, IssueLog).

    Run time is `Elapsed` (or End − Start); cores are `AllocCPUS` (or `NCPUS`).
    Dropped: unfinished jobs, cancelled before start, zero run time, malformed
    lines. Repaired: `UNLIMITED`/`Partition_Limit` time limits → `default_walltime`,
    or the run time when None.
    """
    log = IssueLog(path, strict)
    lines = read_lines(path)
    header = None
    for number, text in lines:
        if text.strip():
            header = [name.strip() for name in text.split("|")]
            break
    if header is None:
        raise WorkloadError(f"{path}: empty file (expected sacct --parsable2 output)")
    col = {name.lower(): i for i, name in enumerate(header)}
    missing = [name for name in REQUIRED if name.lower() not in col]
    cores_col = col.get("alloccpus", col.get("ncpus"))
    if cores_col is None:
        missing.append("AllocCPUS or NCPUS")
    if "elapsed" not in col and not ("start" in col and "end" in col):
        missing.append("Elapsed (or Start and End)")
    if missing:
        raise WorkloadError(f"{path}:{number}: not sacct --parsable2 output: missing column(s) "
                            f"{', '.join(missing)} in header {excerpt('|'.join(header))}")
    fallback_cores = col.get("ncpus") if cores_col != col.get("ncpus") else None
    cols = {k: [] for k in ("source_id", "line", "user", "submit", "cores", "walltime", "run_time")}
    steps = 0
    for number, text in lines:
        if not text.strip():
            continue
        fields = text.split("|")
        if len(fields) != len(header):
            log.drop(number, "malformed", f"expected {len(header)} columns, found {len(fields)}")
            continue
        get = lambda name: fields[col[name]].strip() if name in col else ""  # noqa: E731
        job_id = get("jobid")
        if "." in job_id:
            steps += 1
            continue
        state = get("state").split(" ")[0].upper()
        if state in UNFINISHED:
            log.drop(number, "not finished", state)
            continue
        try:
            submit = parse_date(get("submit"))
            start = parse_date(get("start")) if "start" in col else None
            end = parse_date(get("end")) if "end" in col else None
        except ValueError as exc:
            log.drop(number, "malformed", f"unparseable date: {exc}")
            continue
        if state == "CANCELLED" and start is None:
            log.drop(number, "cancelled before start")
            continue
        try:
            if "elapsed" in col:
                run = parse_duration(get("elapsed"))
            else:
                run = None if start is None or end is None else end - start
            limit_text = get("timelimit")
            walltime = parse_duration(limit_text)
        except ValueError as exc:
            log.drop(number, "malformed", str(exc))
            continue
        if submit is None:
            log.drop(number, "missing submit time")
            continue
        if run is None or run < 0:
            log.drop(number, "missing run time")
            continue
        if run == 0:
            log.drop(number, "cancelled before start" if state == "CANCELLED" else "zero-length")
            continue
        user = get("user")
        if not user:
            log.drop(number, "missing user")
            continue
        try:
            cores = int(fields[cores_col])
            if cores <= 0 and fallback_cores is not None:
                cores = int(fields[fallback_cores])
        except ValueError:
            log.drop(number, "malformed", f"cores is not an integer: {excerpt(fields[cores_col])}")
            continue
        if cores <= 0:
            log.drop(number, "missing processors")
            continue
        if walltime is None or walltime <= 0:  # Batsim wants walltime > 0
            walltime = run if default_walltime is None else max(default_walltime, run)
            log.repair(number, "missing walltime", f"time limit {excerpt(limit_text)} set to {walltime:g} s")
        cols["source_id"].append(job_id)
        cols["line"].append(number)
        cols["user"].append(user)
        cols["submit"].append(submit)
        cols["cores"].append(cores)
        cols["walltime"].append(walltime)
        cols["run_time"].append(run)
    if not cols["line"]:
        raise log.no_jobs("sacct --parsable2 output")
    # t = 0 at midnight before the first submission keeps times of day readable.
    epoch = int(math.floor(min(cols["submit"]) / 86400) * 86400)
    cols["submit"] = [t - epoch for t in cols["submit"]]
    provenance = {"source": {"path": str(path), "format": "sacct", "columns": header,
                             "steps_ignored": steps}}
    return build(cols, provenance, epoch), log
