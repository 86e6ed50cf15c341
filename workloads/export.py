"""Batsim JSON in and out (docs/contract.md §2 and §6).

Jobs are written one per line (still one JSON document) so that a
million-job workload streams to disk instead of being built as one string,
and so that diffs of workloads stay readable.
"""

import json
import os
from contextlib import contextmanager

import numpy as np
import pandas as pd

from batloc.reading import WORKLOAD_BYTES, excerpt

from .errors import WorkloadError
from .source import read_json


@contextmanager
def written_whole(path):
    """A text file that appears at `path` only once written whole; on failure none is left, and one line names it.

    A workload cut short by a full disk would otherwise stay, as malformed JSON
    or as a shorter valid one. A device or pipe (/dev/stdout) is written as is.
    """
    path = os.fspath(path)
    direct = os.path.exists(path) and not os.path.isfile(path)
    temp = path if direct else f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8", newline="\n") as out:
            yield out
        if not direct:
            os.replace(temp, path)
    except BaseException as exc:
        if not direct:
            try:
                os.remove(temp)
            except OSError:
                pass   # never created
        if isinstance(exc, OSError):
            raise WorkloadError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise


def _number(value):
    value = float(value)
    return int(value) if value.is_integer() else value


def profile_name(delay) -> str:
    value = _number(delay)
    return f"d{value}"


def write_batsim(table, path, nb_res, provenance=None):
    """Write the table as a Batsim workload; returns the number of jobs written."""
    for column in ("input_file", "input_size"):
        if column not in table:
            raise WorkloadError(f"{path}: jobs have no {column}; annotate files before export")
    # the table's own order breaks ties: ids may be a trace's job numbers, not 1..n
    table = table.sort_values("submit", kind="stable")
    delays = table["run_time"].to_numpy(dtype=np.float64)
    names = [profile_name(d) for d in delays.tolist()]
    profiles = {name: {"type": "delay", "delay": _number(d)}
                for d, name in sorted(zip(delays.tolist(), names))}
    evaluated = table["evaluated"] if "evaluated" in table else pd.Series(True, index=table.index)
    columns = [table["id"].tolist(), table["submit"].tolist(), table["cores"].tolist(),
               table["walltime"].tolist(), names, table["user"].astype(str).tolist(),
               table["input_file"].astype(str).tolist(), table["input_size"].tolist(),
               evaluated.astype(bool).tolist()]
    sessions = table["session"].astype(str).tolist() if "session" in table else None
    sources = table["source_id"].tolist() if "source_id" in table and table["source_id"].notna().any() else None
    history = table["history_node"].tolist() if "history_node" in table else None
    # epoch: Unix time of t = 0 (null when the trace does not tell).
    meta = {**table.attrs.get("provenance", {}), **(provenance or {}), "epoch": table.attrs.get("epoch")}
    dumps = json.dumps
    with written_whole(path) as out:
        out.write('{"nb_res": %d,\n "jobs": [' % nb_res)
        for i, (jid, sub, res, wall, prof, user, fid, size, ev) in enumerate(zip(*columns)):
            job = {"id": int(jid), "subtime": _number(sub), "res": int(res), "walltime": _number(wall),
                   "profile": prof, "user": user, "input_file": fid, "input_size": float(size),
                   "evaluated": ev}
            if sessions is not None:
                job["session"] = sessions[i]
            if sources is not None and sources[i] is not None:
                job["source_id"] = str(sources[i])
            if history is not None and not pd.isna(history[i]):
                job["history_node"] = int(history[i])
            out.write(("\n  " if i == 0 else ",\n  ") + dumps(job))
        out.write('\n ],\n "profiles": ')
        out.write(dumps(profiles, indent=None))
        out.write(',\n "batloc": ')
        out.write(dumps(meta, sort_keys=True, default=_jsonable))
        out.write("\n}\n")
    return len(table)


def _jsonable(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (tuple, set)):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in provenance")


def read_batsim(path):
    """Read a Batsim workload back into a job table (profiles must be delays)."""
    data = read_json(path, WORKLOAD_BYTES, "Batsim workload")
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise WorkloadError(f"{path}: not a Batsim workload (no 'jobs' list)")
    profiles = data.get("profiles", {})
    rows = []
    for number, job in enumerate(data["jobs"]):
        try:
            if job["profile"] not in profiles:
                raise WorkloadError(f"{path}: job #{number}: profile {excerpt(job['profile'])} is not defined")
            profile = profiles[job["profile"]]
            if profile.get("type") != "delay":
                raise WorkloadError(f"{path}: job {job['id']}: profile {job['profile']!r} is a {profile.get('type')!r}, "
                                    "not a delay: batloc's workload tools read delay profiles only (the engine "
                                    "runs every Batsim profile)")
            if isinstance(job["id"], bool) or not str(job["id"]).strip().lstrip("-").isdigit():
                raise WorkloadError(f"{path}: job #{number}: id {excerpt(job['id'])} is not an integer: batloc's "
                                    "workload tools read integer ids only (the engine reads any)")
            source = job.get("source_id")
            rows.append((int(job["id"]), None if source is None else str(source), number, str(job.get("user", "")),
                         float(job["subtime"]), int(job["res"]), float(job.get("walltime", -1)),
                         float(profile["delay"]), job.get("input_file"), job.get("input_size"),
                         bool(job.get("evaluated", True)), job.get("session")))
        except KeyError as exc:
            raise WorkloadError(f"{path}: job #{number}: no field {exc}") from None
        except (TypeError, ValueError) as exc:
            raise WorkloadError(f"{path}: job #{number}: a field holds what it cannot ({exc})") from None
    table = pd.DataFrame(rows, columns=["id", "source_id", "line", "user", "submit", "cores", "walltime",
                                        "run_time", "input_file", "input_size", "evaluated", "session"])
    table = table.astype({"user": object, "source_id": object, "input_file": object})
    if table["session"].isna().all():
        table = table.drop(columns="session")
    if table["input_size"].notna().all():
        table["input_size"] = table["input_size"].astype("float64")
    provenance = data.get("batloc", {}) if isinstance(data.get("batloc"), dict) else {}
    table.attrs = {"epoch": provenance.get("epoch"), "provenance": provenance, "nb_res": data.get("nb_res")}
    return table
