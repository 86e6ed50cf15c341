"""Standard Workload Format (Parallel Workloads Archive), plain or .swf.gz.

18 whitespace-separated fields per job, -1 meaning "unknown"; header comments
`; Key: value`. Honoured header fields: UnixStartTime (becomes the table's
epoch, so windows can be given as dates), MaxProcs (a job asking for more is
corrupt), MaxNodes (recorded). Everything in the header is kept in provenance.
"""

import math

from batloc.engine.timers import MICROSECOND_EXACT
from batloc.reading import clipped, excerpt

from .errors import IssueLog
from .source import is_number, read_lines
from .table import build

FIELDS = 18
# 0-based positions in the 18 SWF fields.
JOB, SUBMIT, RUN, ALLOC_PROCS, REQ_PROCS, REQ_TIME, STATUS, USER = 0, 1, 3, 4, 7, 8, 10, 11
CANCELLED = 5
_NAMES = {SUBMIT: "submit time", RUN: "run time", ALLOC_PROCS: "allocated processors",
          REQ_PROCS: "requested processors", REQ_TIME: "requested time", STATUS: "status", USER: "user id"}


def _header(text, header):
    key, sep, value = text.lstrip(";").partition(":")
    if sep and key.strip() and " " not in key.strip():
        header[key.strip()] = value.strip()


def read_swf(path, strict=False, default_walltime=None):
    """Read an SWF trace into a job table; returns (table, IssueLog).

    Dropped: cancelled before start (status 5 without run time), zero or unknown
    run time, missing user or processors, malformed lines. Repaired: unknown
    requested time → `default_walltime`, or the run time when None.
    """
    log = IssueLog(path, strict)
    header = {}
    cols = {k: [] for k in ("source_id", "line", "user", "submit", "cores", "walltime", "run_time")}
    max_procs = None
    for number, text in read_lines(path):
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            _header(stripped, header)
            if max_procs is None and header.get("MaxProcs", "").lstrip("-").isdigit():
                max_procs = int(header["MaxProcs"]) if int(header["MaxProcs"]) > 0 else None
            continue
        fields = stripped.split()
        if len(fields) != FIELDS:
            log.drop(number, "malformed", f"expected {FIELDS} fields, found {len(fields)}")
            continue
        try:
            values = {i: float(fields[i]) for i in _NAMES}
        except ValueError:
            bad = next(i for i in _NAMES if not is_number(fields[i]))
            log.drop(number, "malformed", f"{_NAMES[bad]} is not a number: {excerpt(fields[bad])}")
            continue
        bad = next((i for i, v in values.items() if not math.isfinite(v)), None)
        if bad is not None:
            log.drop(number, "malformed", f"{_NAMES[bad]} is not a number: {excerpt(fields[bad])}")
            continue
        bad = next((i for i in (SUBMIT, RUN, REQ_TIME) if values[i] > MICROSECOND_EXACT), None)
        if bad is not None:   # a trace's time past 136 years is corrupt (and no output tells it to the µs)
            log.drop(number, "malformed", f"{_NAMES[bad]} {clipped(fields[bad])} beyond 2^32 s (about 136 years)")
            continue
        bad = next((i for i, v in values.items() if v < 0 and v != -1), None)
        if bad is not None:
            log.drop(number, "malformed", f"negative {_NAMES[bad]}: {clipped(fields[bad])}")
            continue
        run = values[RUN]
        if values[STATUS] == CANCELLED and run <= 0:
            log.drop(number, "cancelled before start")
            continue
        if run < 0:
            log.drop(number, "missing run time")
            continue
        if run == 0:
            log.drop(number, "zero-length")
            continue
        if values[SUBMIT] < 0:
            log.drop(number, "missing submit time")
            continue
        if values[USER] < 0:
            log.drop(number, "missing user")
            continue
        procs = values[ALLOC_PROCS] if values[ALLOC_PROCS] > 0 else values[REQ_PROCS]
        if procs <= 0 or not procs.is_integer():
            log.drop(number, "missing processors" if procs <= 0 else "malformed",
                     "" if procs <= 0 else f"fractional processor count {procs:g}")
            continue
        if max_procs is not None and procs > max_procs:
            log.drop(number, "wider than MaxProcs", f"{procs:g} processors > MaxProcs {max_procs}")
            continue
        walltime = values[REQ_TIME]
        if walltime <= 0:  # -1 is "unknown"; 0 cannot be a request (Batsim wants walltime > 0)
            walltime = run if default_walltime is None else max(default_walltime, run)
            log.repair(number, "missing walltime", f"set to {walltime:g} s")
        cols["source_id"].append(fields[JOB])
        cols["line"].append(number)
        cols["user"].append(fields[USER])
        cols["submit"].append(values[SUBMIT])
        cols["cores"].append(int(procs))
        cols["walltime"].append(walltime)
        cols["run_time"].append(run)
    epoch = _int_or_none(header.get("UnixStartTime"))
    provenance = {"source": {"path": str(path), "format": "swf",
                             "header": {k: header[k] for k in sorted(header)}}}
    if not cols["line"]:
        raise log.no_jobs("a Standard Workload Format file")
    return build(cols, provenance, epoch), log


def _int_or_none(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None
