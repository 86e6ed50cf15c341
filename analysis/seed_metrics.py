"""The seed schedulers' metrics in the report: NUWT fairness, idle ratio, Jeannot's stretch and α.

Adds columns to every run's summary (killed, idle_ratio, steady_utilisation, users, nuwt_mean, nuwt_std,
nuwt_max; alpha, io_max_stretch, io_mean_stretch, io_mean_flow_stretch when
the workload carries I/O truths) and, per platform/workload group, two
figures: utilisation over time and NUWT per user sorted, one line per run.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .compare import group_label  # noqa: E402
from .fairness import nuwt_per_user, nuwt_summary  # noqa: E402
from batloc.locality.staging import STAGE_WORKLOAD as STAGING_WORKLOAD  # noqa: E402
from .io_stretch import io_truths, stretch_summary, stretches  # noqa: E402
from .utilisation import idle_ratio, steady_utilisation, utilisation_over_time  # noqa: E402

COLUMNS = ["killed", "idle_ratio", "steady_utilisation", "users", "nuwt_mean", "nuwt_std", "nuwt_max",
           "alpha", "io_max_stretch", "io_mean_stretch", "io_mean_flow_stretch"]


def extend_summary(result, workload_path, jobs_csv) -> None:
    jobs, meta = result.jobs, result.meta or {}
    # cut at their walltime (I/O workloads: walltime = 2 x run time alone, contention may exceed it)
    own = jobs_csv[jobs_csv["workload_name"] != STAGING_WORKLOAD]
    result.summary["killed"] = int(own["final_state"].isin(["COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"]).sum())
    result.summary.update(nuwt_summary(nuwt_per_user(jobs)))
    cores = meta.get("platform_cores")
    if cores:
        result.summary["idle_ratio"] = idle_ratio(jobs, cores)
        result.summary["steady_utilisation"] = steady_utilisation(jobs, cores)
    io = io_truths(workload_path) if workload_path else None
    if io is not None:
        result.summary.update(stretch_summary(io, stretches(jobs, io)))


def figures(results, fig_dir: Path) -> dict[str, Path]:
    groups = {}
    for r in results:
        groups.setdefault(r.group, []).append(r)
    figs = {}
    for group, runs in groups.items():
        label = group_label(group)
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{group[0]}_{group[1]}")
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for r in runs:
            cores = (r.meta or {}).get("platform_cores")
            if cores:
                u = utilisation_over_time(r.jobs, cores)
                ax.step(u["begin"], u["utilisation"], where="post", label=r.scheduler)
        ax.set(xlabel="time (s)", ylabel="allocated cores / P", ylim=(0, 1.05), title=f"Utilisation — {label}")
        ax.legend(fontsize=8)
        figs[f"utilisation:{label}"] = _save(fig, fig_dir / f"utilisation_{slug}.png")
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for r in runs:
            per = nuwt_per_user(r.jobs)
            ax.plot(range(1, len(per) + 1), per["nuwt"], marker=".", label=r.scheduler)
        ax.set(xlabel="users, sorted by NUWT", ylabel="NUWT (s waited per s of CPU)", title=f"NUWT per user — {label}")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.legend(fontsize=8)
        figs[f"nuwt:{label}"] = _save(fig, fig_dir / f"nuwt_{slug}.png")
    return figs


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
