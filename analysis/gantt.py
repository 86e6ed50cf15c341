"""Gantt chart of a time range of one run, drawn by evalys.

evalys draws one rectangle per job and resource interval, which is fine for
hundreds of jobs and far too slow for a week; so only the jobs overlapping
the chosen range are drawn, and by default the range is the start of the
evaluation window, widened until it holds about DEFAULT_MAX_JOBS jobs.
Staging jobs are drawn too (on the storage resources), which shows loads.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from evalys.jobset import JobSet  # noqa: E402
from evalys.visu import core as evalys_core  # noqa: E402
from evalys.visu.gantt import NOLABEL, GanttVisualization  # noqa: E402
from procset import ProcSet  # noqa: E402

DEFAULT_MAX_JOBS = 300


def default_range(jobs_csv: pd.DataFrame, start: float, max_jobs: int = DEFAULT_MAX_JOBS) -> tuple[float, float]:
    done = jobs_csv.dropna(subset=["starting_time", "finish_time"])
    if done.empty:
        return (start, start + 1.0)
    starts = np.sort(done["starting_time"].to_numpy(dtype=float))
    later = starts[starts >= start]
    if len(later) == 0:
        later = starts
        start = float(starts[0])
    end = float(later[min(max_jobs, len(later)) - 1])
    return (start, max(end, start + 1.0))


def gantt(jobs_csv: pd.DataFrame, path, time_range: tuple[float, float], title: str) -> Path:
    lo, hi = time_range
    sel = jobs_csv.dropna(subset=["starting_time", "finish_time"])
    sel = sel[(sel["finish_time"] > lo) & (sel["starting_time"] < hi) & (sel["allocated_resources"].str.len() > 0)]
    fig_title = f"{title} [{lo:g}, {hi:g}] s"
    if sel.empty:
        fig, ax = plt.subplots(figsize=(8, 3))
        ax.set_title(fig_title + " — no job in range")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return Path(path)
    df = sel[["job_id", "workload_name", "submission_time", "starting_time", "execution_time",
              "finish_time", "allocated_resources"]].copy()
    df["allocated_resources"] = df["allocated_resources"].map(ProcSet.from_str)
    df["waiting_time"] = df["starting_time"] - df["submission_time"]
    df = df.rename(columns={"job_id": "jobID"})  # evalys' own column name (it would rename in place)
    js = JobSet(df)
    layout = evalys_core.SimpleLayout(wtitle=fig_title)
    plot = layout.inject(GanttVisualization, spskey="all", title=fig_title)
    plot.labeler = NOLABEL if len(df) > 60 else (lambda job: str(job["jobID"]))
    plot.build(js)
    ax = layout.fig.axes[0]
    ax.set_xlim(lo, hi)
    ax.set_ylabel("resource id")
    ax.set_xlabel("time (s)")
    layout.fig.set_size_inches(10, 5)
    layout.fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(layout.fig)
    return Path(path)
