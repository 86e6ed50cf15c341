"""One run from files to tables: jobs.csv + decisions.csv + workload + platform → RunResult."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import load, metrics, sessions
from .compare import RunResult


@dataclass
class Inputs:
    """Overrides for runs that carry no robin run.json (or to force a bandwidth)."""

    workload: Path | None = None
    platform: Path | None = None
    bandwidth: float | None = None


def analyse_run(run: load.RunFiles, inputs: Inputs | None = None, workload_cache: dict | None = None) -> tuple[RunResult, pd.DataFrame]:
    """Return the run's RunResult and its raw jobs.csv frame (for Gantt charts)."""
    inputs = inputs or Inputs()
    workload_path = run.input_path("workload") or inputs.workload
    platform_path = run.input_path("platform") or inputs.platform
    if workload_path is None:
        raise ValueError(f"run {run.name}: no workload known (robin's run.json or --workload)")
    cache = workload_cache if workload_cache is not None else {}
    key = str(Path(workload_path).resolve())
    if key not in cache:
        # runs of one sweep share workloads: parse each JSON and its sessions once
        wl = load.read_workload(workload_path)
        cache[key] = (wl, sessions.assign_sessions(wl.jobs))
    wl, session_of = cache[key]
    bandwidth = load.reference_bandwidth(platform_path, inputs.bandwidth)
    jobs_csv = load.read_jobs(run.jobs_csv)
    decisions = load.read_decisions(run.decisions_csv)
    table = metrics.per_job(jobs_csv, wl, decisions, bandwidth)
    summary = metrics.per_run(table, jobs_csv)
    sess = sessions.session_table(table, session_of)
    summary["sessions"] = int(len(sess))
    summary["mean_session_stretch"] = float(sess["stretch"].mean()) if len(sess) else float("nan")
    summary["reference_bandwidth"] = bandwidth
    summary["has_decision_log"] = decisions is not None
    group = (Path(platform_path).stem if platform_path else "-", Path(workload_path).stem)
    meta = dict(run.meta)
    meta.setdefault("workload", str(workload_path))
    if platform_path:
        meta.setdefault("platform", str(platform_path))
    meta["workload_provenance"] = wl.provenance
    meta["platform_cores"] = load.read_platform_cores(platform_path) if platform_path else wl.nb_res
    result = RunResult(name=run.name, scheduler=run.scheduler, group=group, summary=summary,
                       sessions=sess, jobs=table, meta=meta, policy=run.policy, options=run.options)
    return result, jobs_csv
