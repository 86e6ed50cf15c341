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

COLUMNS = ["run", "scheduler", "platform", "workload", "jobs_completed", "jobs_killed", "mean_response", "khanna_mean_wait",
           "remote_transfers", "replications", "bytes_staged", "makespan"]


def replica_file(job_id: str) -> str:
    """The file of a replication staging ``rep-<file>-<node>-<n>`` (node names have no '-')."""
    return job_id[len("rep-"):].rsplit("-", 2)[0]


def run_metrics(jobs_table: pd.DataFrame, jobs_csv: pd.DataFrame) -> dict:
    """jobs_table: metrics.per_job's table; jobs_csv: the run's raw jobs.csv (load.read_jobs)."""
    done = jobs_table[jobs_table["evaluated"] & jobs_table["ended"]]
    start = done["reservation_start"].where(done["cache"] != "miss", done["starting_time"] - done["transfer_time"])
    stagings = jobs_csv[jobs_csv["workload_name"] == STAGING_WORKLOAD]
    replicas = stagings[stagings["job_id"].str.startswith("rep-")]
    size_of = (jobs_table.drop_duplicates("input_file").set_index("input_file")["input_size"]
               if len(jobs_table) else pd.Series(dtype=float))
    own_loads = float(jobs_table.loc[jobs_table["cache"] == "miss", "input_size"].sum())
    replica_bytes = float(size_of.reindex([replica_file(j) for j in replicas["job_id"]]).fillna(0.0).sum())
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
    cols = [c for c in COLUMNS if c in summary.columns]
    if "remote_transfers" not in cols:
        return ""
    table = summary[cols].to_html(index=False, border=0, na_rep="–", float_format=lambda v: f"{v:.2f}")
    return ("<h2>Khanna et al.'s metrics: mean response, wait from the first transfer, remote transfers "
            "(replications included), bytes staged</h2>" + table)
