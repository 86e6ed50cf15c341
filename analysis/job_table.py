"""The per-job table of a run as CSV, for joins with the original trace (`source_id`).

One row per workload job (staging jobs left out), in the workload's order.
Times in seconds of simulated time, as in jobs.csv; empty when the job
never got that far (rejected, unfinished). `wait` is Batsim's (computing
start − submission, loading included), `turnaround` = finish − submission,
`stretch` the paper's (turnaround / (input size / bandwidth + run time));
`transfer_time` is the load the job triggered, `file_wait` its wait for a
load started for another job, `load_time` their sum (the paper's time
waiting for a file); `node` is where it ran (from the decision log, else
from its first allocated core); `killed` = cut at its walltime,
`killed_by_load` = killed although its own run fits in its walltime.
`predicted_at`, `predicted_start`, `last_predicted_start` come from the
run's predictions file (contract §6; empty for a run without one): when a
pass first placed the job, the start it planned then, and the start planned
just before the pass that started it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from procset import ProcSet

from batloc.locality.staging import STAGE_WORKLOAD

COLUMNS = ["job_id", "source_id", "user", "evaluated", "cores", "submission_time", "reservation_start",
           "starting_time", "finish_time", "wait", "turnaround", "stretch", "transfer_time", "file_wait",
           "load_time", "input_file", "input_size", "cache", "node", "final_state", "killed", "killed_by_load",
           "predicted_at", "predicted_start", "last_predicted_start"]
_FLAGS = ["evaluated", "killed", "killed_by_load"]


def _nodes_from_allocation(jobs_csv: pd.DataFrame, core_nodes: dict) -> pd.Series:
    """job_id → node of its first allocated core (jobs that ran only)."""
    own = jobs_csv[(jobs_csv["workload_name"] != STAGE_WORKLOAD) & (jobs_csv["allocated_resources"].str.len() > 0)]
    own = own.drop_duplicates("job_id", keep="last")
    first = own["allocated_resources"].map(lambda a: min(ProcSet.from_str(a)) if a.strip() else None)
    return pd.Series(first.map(core_nodes).fillna("").to_numpy(), index=own["job_id"].to_numpy())


def frame(table: pd.DataFrame, jobs_csv: pd.DataFrame, core_nodes: dict | None = None) -> pd.DataFrame:
    """table: metrics.per_job; jobs_csv: the run's jobs.csv (load.read_jobs)."""
    out = table.rename(columns={"flow": "turnaround"}).copy()
    if "source_id" not in out.columns:
        out["source_id"] = ""
    out["source_id"] = out["source_id"].fillna("").astype(str)
    node = out["node"].fillna("").astype(str)
    if core_nodes and (node == "").any():
        by_alloc = _nodes_from_allocation(jobs_csv, core_nodes)
        node = node.where(node != "", out["job_id"].map(by_alloc).fillna(""))
    out["node"] = node
    for col in _FLAGS:
        out[col] = out[col].astype(bool).astype(int)
    out["cores"] = out["cores"].round().astype("Int64")
    return out.reindex(columns=COLUMNS)   # a run without predictions has empty prediction columns


def write(table: pd.DataFrame, jobs_csv: pd.DataFrame, path, core_nodes: dict | None = None) -> Path:
    """The CSV (RFC 4180 quoting, floats with 6 decimals as in jobs.csv, empty when missing).

    Written column by column rather than by pandas' to_csv, which formats each
    float through Python calls of its own and takes ~5 s for a week's 150 000 jobs."""
    path = Path(path)
    df = frame(table, jobs_csv, core_nodes)
    columns = [_cells(df[c]) for c in df.columns]
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(",".join(_quote(c) for c in df.columns) + "\n")
        f.writelines(",".join(row) + "\n" for row in zip(*columns))
    return path


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if _NEEDS_QUOTES.search(text) else text


def _cells(col: pd.Series) -> list[str]:
    if pd.api.types.is_float_dtype(col.dtype):
        return ["" if v != v else "%.6f" % v for v in col.to_numpy(dtype=float).tolist()]
    if pd.api.types.is_bool_dtype(col.dtype) or pd.api.types.is_integer_dtype(col.dtype):
        return ["" if v is pd.NA else str(int(v)) for v in col.tolist()]
    return ["" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else _quote(str(v)) for v in col.tolist()]
