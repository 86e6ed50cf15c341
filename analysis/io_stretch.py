"""Jeannot, Pallez & Vidal's stretch and I/O load, from the truths `batloc workload synth --io`
keeps in the workload's `batloc.io` (contract §7).

ρ_i = (C_i − S_i) / T_i(B): how much longer job i ran than alone on the
machine (1 = unslowed; the paper's text inverts the ratio, its "2 = twice as
long" fixes it). Flow stretch (C_i − r_i) / T_i(B) adds the wait.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd


def io_truths(workload_path) -> dict | None:
    """The workload's `batloc.io` object, or None for workloads without I/O phases."""
    with open(workload_path) as f:
        data = json.load(f)
    io = (data.get("batloc") or {}).get("io")
    return io if isinstance(io, dict) and "jobs" in io else None


def stretches(jobs: pd.DataFrame, io: dict) -> pd.DataFrame:
    """job_id, t_alone, stretch, flow_stretch for jobs that ended (killed ones at their kill) known to the truths."""
    truth = io["jobs"]
    done = jobs[jobs["ended"] & jobs["job_id"].astype(str).isin(truth.keys())]
    t_alone = np.array([truth[str(j)][3] for j in done["job_id"]], dtype=float)
    return pd.DataFrame({"job_id": done["job_id"].to_numpy(), "t_alone": t_alone,
                         "stretch": (done["finish_time"].to_numpy(float) - done["starting_time"].to_numpy(float)) / t_alone,
                         "flow_stretch": (done["finish_time"].to_numpy(float)
                                          - done["submission_time"].to_numpy(float)) / t_alone})


def stretch_summary(io: dict, table: pd.DataFrame) -> dict:
    s = table["stretch"]
    return {"alpha": float(io.get("alpha", float("nan"))),
            "io_max_stretch": float(s.max()) if len(s) else float("nan"),
            "io_mean_stretch": float(s.mean()) if len(s) else float("nan"),
            "io_mean_flow_stretch": float(table["flow_stretch"].mean()) if len(s) else float("nan")}
