"""The seed schedulers' metrics in the report: NUWT fairness, idle ratio, Jeannot's stretch and α.

Adds columns to every run's summary (idle_ratio, steady_utilisation, users, nuwt_mean, nuwt_std,
nuwt_max; alpha, io_max_stretch, io_mean_stretch, io_mean_flow_stretch when
the workload carries I/O truths) and, per platform/workload group, two
figures: utilisation over time and NUWT per user sorted, one line per run
(small multiples, each run against the others in grey, past a few runs).
"""

from __future__ import annotations

import re
from pathlib import Path

from .compare import group_label
from .fairness import nuwt_per_user, nuwt_summary
from .io_stretch import io_truths, stretch_summary, stretches
from .style import Palette, TimeAxis, lines, save
from .utilisation import idle_ratio, steady_utilisation, utilisation_over_time

COLUMNS = ["idle_ratio", "steady_utilisation", "users", "nuwt_mean", "nuwt_std", "nuwt_max",
           "alpha", "io_max_stretch", "io_mean_stretch", "io_mean_flow_stretch"]


def extend_summary(result, workload_path, jobs_csv) -> None:
    jobs, meta = result.jobs, result.meta or {}
    result.summary.update(nuwt_summary(nuwt_per_user(jobs)))
    cores = meta.get("platform_cores")
    if cores:
        result.summary["idle_ratio"] = idle_ratio(jobs, cores)
        result.summary["steady_utilisation"] = steady_utilisation(jobs, cores)
    io = io_truths(workload_path) if workload_path else None
    if io is not None:
        result.summary.update(stretch_summary(io, stretches(jobs, io)))


def _lines(runs, palette: Palette, draw, title: str, xlabel: str, ylabel: str, path: Path, steps=True,
           log_y=False, ylim=None):
    series = {r.scheduler: draw(r) for r in runs}
    fig, axes = lines({s: xy for s, xy in series.items() if xy is not None}, palette, title, xlabel, ylabel, steps)
    for ax in axes:
        if log_y:
            ax.set_yscale("symlog", linthresh=1e-3)
        if ylim is not None:
            ax.set_ylim(*ylim)
    return save(fig, path)


def figures(results, fig_dir: Path, palette: Palette, axes: dict) -> dict[str, Path]:
    """axes: group → TimeAxis (the report's, shared with the cluster-usage figures)."""
    groups = {}
    for r in results:
        groups.setdefault(r.group, []).append(r)
    figs = {}
    for group, runs in groups.items():
        label = group_label(group)
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{group[0]}_{group[1]}")
        axis: TimeAxis = axes[group]

        def utilisation(r):
            cores = (r.meta or {}).get("platform_cores")
            if not cores:
                return None
            u = utilisation_over_time(r.jobs, cores)
            return axis(u["begin"]), u["utilisation"]

        figs[f"utilisation:{label}"] = _lines(
            runs, palette, utilisation, f"Utilisation — {label}", axis.label, "allocated cores / P",
            fig_dir / f"utilisation_{slug}.png", ylim=(0, 1.05))

        def nuwt(r):
            per = nuwt_per_user(r.jobs)
            return range(1, len(per) + 1), per["nuwt"]

        figs[f"nuwt:{label}"] = _lines(
            runs, palette, nuwt, f"NUWT per user — {label}", "users, sorted by NUWT",
            "NUWT (s waited per s of CPU)", fig_dir / f"nuwt_{slug}.png", steps=False, log_y=True)
    return figs
