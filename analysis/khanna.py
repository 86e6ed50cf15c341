"""Khanna et al.'s metrics (§2, Eq. 1-4; §6.4, Fig. 7) that the other tables lack.

- wait (Eq. 1) = Start - Arrival, Start = when the job's first transfer
  starts, or when it starts computing if its file is there: for a job that
  loaded its own file, the staging's start (= its compute start minus the
  transfer); otherwise the reservation start from the decision log;
- response (Eq. 2-3) = completion - arrival, averaged (Eq. 4);
- remote transfers = staging jobs, replications (DLL) included (Fig. 7),
  and the bytes they moved; makespan stays in the per-run table.
Waits and responses count evaluated jobs that ended (killed included), as the other run totals.
"""

from __future__ import annotations

import pandas as pd

from batloc.locality.staging import STAGE_WORKLOAD as STAGING_WORKLOAD

from . import replications
from .tables import HOUR, TB, Column, frame, to_html


def run_metrics(jobs_table: pd.DataFrame, jobs_csv: pd.DataFrame) -> dict:
    """jobs_table: metrics.per_job's table; jobs_csv: the run's raw jobs.csv (load.read_jobs)."""
    done = jobs_table[jobs_table["evaluated"] & jobs_table["ended"]]
    start = done["reservation_start"].where(done["cache"] != "miss", done["starting_time"] - done["transfer_time"])
    stagings = jobs_csv[jobs_csv["workload_name"] == STAGING_WORKLOAD]
    replicas = stagings[stagings["job_id"].str.startswith("rep-")]
    size_of = (jobs_table.drop_duplicates("input_file").set_index("input_file")["input_size"]
               if len(jobs_table) else pd.Series(dtype=float))
    own_loads = float(jobs_table.loc[jobs_table["cache"] == "miss", "input_size"].sum())
    known = set(size_of.index)
    replica_bytes = float(size_of.reindex([replications.file_of(j, known) for j in replicas["job_id"]])
                          .fillna(0.0).sum())
    return {
        "mean_response": float(done["flow"].mean()) if len(done) else float("nan"),
        "khanna_mean_wait": float((start - done["submission_time"]).mean()) if len(done) else float("nan"),
        "remote_transfers": int(len(stagings)),
        "replications": int(len(replicas)),
        "bytes_staged": own_loads + replica_bytes,
    }


def add_metrics(results, raw_jobs: dict) -> None:
    """Add run_metrics to every RunResult's summary (report.py's hook)."""
    for r in results:
        r.summary.update(run_metrics(r.jobs, raw_jobs[r.name]))


def html_section(summary: pd.DataFrame) -> str:
    if "remote_transfers" not in summary.columns:
        return ""
    rows = summary.to_dict("records")
    columns = [Column("jobs_completed", "jobs completed", integer=True),
               Column("jobs_killed", "jobs killed at walltime", integer=True),
               Column("mean_response", "mean response (h)", 1 / HOUR),
               Column("khanna_mean_wait", "mean wait from the first transfer (h)", 1 / HOUR),
               Column("remote_transfers", "remote transfers", integer=True),
               Column("replications", "of them replications", integer=True),
               Column("bytes_staged", "data staged (TB)", 1 / TB),
               Column("makespan", "makespan (h)", 1 / HOUR)]
    table = frame(rows, [c for c in columns if c.key in summary.columns], [("run", "run")])
    return ("<h2>Khanna et al.'s metrics: mean response, wait from the first transfer, remote transfers "
            "(replications included), data staged</h2>" + to_html(table))
