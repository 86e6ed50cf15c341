"""One run from files to tables: jobs.csv + decisions.csv + workload + platform → RunResult.

The run is checked first (analysis.checks): a run that cannot be trusted
raises RunLeftOut, one line naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import load, metrics, run_folder, sessions
from .checks import RunLeftOut, check_rows, check_text, check_validation
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
    if run.problem:
        raise RunLeftOut(run.problem)
    check_validation(run.meta, run.directory / "run.json", run.prefix)
    if workload_path is None:
        raise RunLeftOut(f"run {run.name}: no workload known (robin's run.json or --workload)")
    cache = workload_cache if workload_cache is not None else {}
    key = str(Path(workload_path).resolve())
    if key not in cache:
        # runs of one sweep share workloads: parse each JSON and its sessions once
        try:
            wl = load.read_workload(workload_path)
        except (OSError, ValueError) as exc:
            raise RunLeftOut(f"{workload_path}: cannot read the workload: {_first_line(exc)}") from None
        cache[key] = (wl, sessions.assign_sessions(wl.jobs))
    wl, session_of = cache[key]
    try:    # the platform as the run's engine read it: its -m/-r, from run.json
        roles = run_folder.platform_roles(run.meta) if run.input_path("platform") else None
    except run_folder.FolderError as exc:
        raise RunLeftOut(f"{run.directory}/{exc}") from None
    bandwidth, cores, core_nodes = _platform(platform_path, inputs.bandwidth, wl.nb_res, cache, roles)
    check_text(run.jobs_csv)
    try:
        jobs_csv = load.read_jobs(run.jobs_csv)
    except (ValueError, KeyError) as exc:   # pandas' parser errors are ValueErrors
        raise RunLeftOut(f"{run.jobs_csv}: cannot read: {_first_line(exc)}") from None
    check_rows(run.jobs_csv, jobs_csv, wl.jobs["job_id"])
    try:
        load.require_platform(wl, jobs_csv, platform_path, inputs.bandwidth, str(run.jobs_csv))
    except load.NoPlatform as exc:
        raise RunLeftOut(f"{exc} (--platform, or --bandwidth)") from None
    if run.decisions_csv.exists():
        check_text(run.decisions_csv)
    try:
        decisions = load.read_decisions(run.decisions_csv)
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        raise RunLeftOut(f"{run.decisions_csv}: cannot read: {_first_line(exc)}") from None
    table = metrics.per_job(jobs_csv, wl, decisions, bandwidth, core_nodes)
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
    meta["platform_cores"] = cores
    meta["core_nodes"] = core_nodes
    result = RunResult(name=run.name, scheduler=run.scheduler, group=group, summary=summary,
                       sessions=sess, jobs=table, meta=meta, policy=run.policy, options=run.options,
                       against=run.against, uses_backfilling=run.backfilling,
                       walltime_includes_load=run.walltime_includes_load, staged=run.staged)
    return result, jobs_csv


def _platform(path, bandwidth, nb_res, cache: dict, roles=None):
    """(reference bandwidth, compute cores, core id → node) of a platform, read once per report and -m/-r."""
    key = ("platform", str(Path(path).resolve()) if path else None, bandwidth, nb_res, repr(roles))
    if key not in cache:
        try:
            cache[key] = (load.reference_bandwidth(path, bandwidth, roles),
                          load.read_platform_cores(path, roles) if path else nb_res,
                          load.read_compute_nodes(path, roles) if path else {})
        except (OSError, ValueError) as exc:   # PlatformError names the file
            raise RunLeftOut(_first_line(exc)) from None
    return cache[key]


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
