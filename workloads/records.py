"""Jobs given as Python records (dicts, or a DataFrame's rows) → the job table the pipeline writes.

The records use the contract's field names (docs/contract.md §2): `subtime`,
`res`, `walltime`, `input_file`, `input_size`, and optionally `id` (default 1…n
in the given order), `user`, `evaluated` (default true), `session`,
`source_id`; a job's computation is its `delay` (its Batsim delay profile,
contract §2). Each record is checked as the engine and the schedulers would
read it, and the first one at fault is named in one line (WorkloadError): a
typo in a field name is refused, not dropped.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from batloc.reading import PLATFORM_HOSTS, excerpt

from .errors import WorkloadError

REQUIRED = ("subtime", "res", "walltime", "delay", "input_file", "input_size")
OPTIONAL = ("id", "user", "evaluated", "session", "source_id")
# contract name → the pipeline table's column (workloads.export.write_batsim)
COLUMNS = {"id": "id", "subtime": "submit", "res": "cores", "walltime": "walltime", "delay": "run_time",
           "user": "user", "input_file": "input_file", "input_size": "input_size", "evaluated": "evaluated",
           "session": "session", "source_id": "source_id"}


def from_records(records) -> pd.DataFrame:
    """The job table of `records` (an iterable of dicts, or a DataFrame), checked; WorkloadError names the job."""
    if isinstance(records, pd.DataFrame):
        records = records.to_dict("records")
    elif isinstance(records, dict) or isinstance(records, (str, bytes)):
        raise WorkloadError("jobs are a list of dicts (one per job) or a DataFrame (one row per job)")
    rows = []
    for number, record in enumerate(records):
        rows.append(_job(number, record))
    if not rows:
        raise WorkloadError("a workload needs at least one job")
    ids = [r["id"] for r in rows]
    if all(i is None for i in ids):
        ids = list(range(1, len(rows) + 1))
    elif any(i is None for i in ids):
        first = next(n for n, i in enumerate(ids) if i is None)
        raise WorkloadError(f"job #{first}: no id, where other jobs have one (give every job an id, or none)")
    seen = {}
    for number, job_id in enumerate(ids):
        if job_id in seen:
            raise WorkloadError(f"job #{number}: id {job_id} is job #{seen[job_id]}'s too (ids are unique)")
        seen[job_id] = number
    table = pd.DataFrame({COLUMNS[k]: [r[k] for r in rows] for k in REQUIRED + ("user", "evaluated")})
    table.insert(0, "id", ids)
    for key in ("session", "source_id"):
        if any(r[key] is not None for r in rows):
            table[COLUMNS[key]] = pd.Series([r[key] for r in rows], dtype=object)
    table.attrs = {"epoch": None, "provenance": {"source": {"format": "python records"}}}
    return table


def _job(number, record) -> dict:
    if not isinstance(record, dict):
        raise WorkloadError(f"job #{number}: a job is a dict of the contract's fields, not {type(record).__name__}")
    name = f"job #{number}" + (f" (id {record['id']})" if _given(record.get("id")) else "")
    unknown = sorted(str(k) for k in record if k not in REQUIRED + OPTIONAL)
    if unknown:
        raise WorkloadError(f"{name}: unknown field(s) {', '.join(unknown)} (a job has {', '.join(REQUIRED)}, and "
                            f"optionally {', '.join(OPTIONAL)})")
    missing = [k for k in REQUIRED if not _given(record.get(k))]
    if missing:
        raise WorkloadError(f"{name}: no {', '.join(missing)}")
    job = {"subtime": _number(name, record, "subtime", low=0.0),
           "res": _integer(name, record, "res", low=1, high=PLATFORM_HOSTS),   # no platform batloc reads has more
           "walltime": _walltime(name, record),
           "delay": _delay(name, record),
           "input_size": _number(name, record, "input_size", low=0.0),
           "input_file": _text(name, record, "input_file"),
           "user": str(record["user"]) if _given(record.get("user")) else "",
           "evaluated": _flag(name, record),
           "session": str(record["session"]) if _given(record.get("session")) else None,
           "source_id": str(record["source_id"]) if _given(record.get("source_id")) else None,
           "id": _integer(name, record, "id", low=0) if _given(record.get("id")) else None}
    return job


def _given(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _number(name, record, key, low) -> float:
    value = record[key]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)) or float(value) < low:
        raise WorkloadError(f"{name}: {key} must be a finite number >= {low:g}, not {value!r}")
    return float(value)


def _delay(name, record) -> float:
    value = record["delay"]
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and value == 0:
        # Batsim 4.2.1 refuses a delay profile of 0 s, and so does the engine
        raise WorkloadError(f"{name}: delay must be > 0 s (Batsim refuses a job of no duration), not 0")
    return _number(name, record, "delay", low=0.0)


def _integer(name, record, key, low, high=None) -> int:
    value = record[key]
    if isinstance(value, str) and value.strip().isdigit():   # the contract's integer-like string ids
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or float(value) != int(value) or int(value) < low or (high is not None and int(value) > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise WorkloadError(f"{name}: {key} must be an integer {bound}, not {excerpt(value)}")
    return int(value)


def _walltime(name, record) -> float:
    value = record["walltime"]
    if not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real) and float(value) == -1:
        return -1.0   # Batsim's "no walltime"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise WorkloadError(f"{name}: walltime must be a number of seconds > 0 (or -1: none), not {value!r}")
    return float(value)


def _text(name, record, key) -> str:
    value = record[key]
    if not isinstance(value, str) or not value:
        raise WorkloadError(f"{name}: {key} must be a non-empty string (the file's id), not {value!r}")
    return value


def _flag(name, record) -> bool:
    value = record.get("evaluated", True)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    if not isinstance(value, (bool, int, np.bool_, np.integer)) or value not in (True, False, 0, 1):
        raise WorkloadError(f"{name}: evaluated must be true or false, not {value!r}")
    return bool(value)
