"""Gantt chart of a time range of one run: which core ran which job, and when it held cores for a file.

A week holds far too many jobs to draw, so only the jobs overlapping the
chosen range are drawn; by default the range starts at the evaluation
window's start and is widened until it holds about DEFAULT_MAX_JOBS jobs of
the group's first run, and every run of a group is drawn on that same range
so that their charts compare. Only compute resources are drawn: a staging
job's storage ids say nothing about the schedule, and its time shows as the
served job's loading part, from its reservation start (the scheduler took
its cores) to its computing start.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch
from procset import ProcSet

from batloc.locality.staging import STAGE_WORKLOAD

from .style import TimeAxis, plt, save

DEFAULT_MAX_JOBS = 300
EDGES_UP_TO_CORES = 128
NODE_LINES_UP_TO = 64
# What a rectangle's colour says (the legend's order).
PARTS = {
    "evaluated": ("#0072B2", "computing (evaluated job)"),
    "context": ("#9ecae1", "computing (context job, not evaluated)"),
    "killed": ("#D55E00", "computing, then killed at its walltime"),
    "loading": ("#E69F00", "holding cores: loading or waiting for its file"),
}


def default_range(jobs_csv: pd.DataFrame, start: float, max_jobs: int = DEFAULT_MAX_JOBS) -> tuple[float, float]:
    done = jobs_csv[jobs_csv["workload_name"] != STAGE_WORKLOAD].dropna(subset=["starting_time", "finish_time"])
    if done.empty:
        return (start, start + 1.0)
    starts = np.sort(done["starting_time"].to_numpy(dtype=float))
    later = starts[starts >= start]
    if len(later) == 0:
        later = starts
        start = float(starts[0])
    end = float(later[min(max_jobs, len(later)) - 1])
    return (start, max(end, start + 1.0))


def _rectangles(jobs_csv: pd.DataFrame, table: pd.DataFrame, lo: float, hi: float, cores: int | None):
    """(part, [left, right, first core, last core]) of every drawn piece in [lo, hi]."""
    own = jobs_csv[(jobs_csv["workload_name"] != STAGE_WORKLOAD) & (jobs_csv["allocated_resources"].str.len() > 0)]
    own = own.dropna(subset=["starting_time", "finish_time"]).drop_duplicates("job_id", keep="last")
    facts = table.set_index("job_id")[["reservation_start", "evaluated", "killed"]]
    own = own.join(facts, on="job_id")
    own["killed"] = own["killed"].fillna(False).astype(bool)
    own["evaluated"] = own["evaluated"].fillna(True).astype(bool)
    held = own["reservation_start"].fillna(own["starting_time"]).to_numpy(dtype=float)
    own = own[(own["finish_time"].to_numpy(dtype=float) > lo) & (held < hi)]
    pieces = {part: [] for part in PARTS}
    for row in own.itertuples(index=False):
        part = "killed" if row.killed else ("evaluated" if row.evaluated else "context")
        begin = row.reservation_start if pd.notna(row.reservation_start) else row.starting_time
        for interval in ProcSet.from_str(row.allocated_resources).intervals():
            first, last = interval.inf, interval.sup
            if cores is not None:
                if first >= cores:
                    continue  # a storage id: not a compute resource
                last = min(last, cores - 1)
            if begin < row.starting_time:
                pieces["loading"].append((begin, row.starting_time, first, last))
            pieces[part].append((row.starting_time, row.finish_time, first, last))
    return pieces, len(own)


def gantt(jobs_csv: pd.DataFrame, table: pd.DataFrame, path, time_range: tuple[float, float], title: str,
          axis: TimeAxis, cores: int | None = None, node_of: dict | None = None):
    """jobs_csv: the run's jobs.csv (load.read_jobs); table: metrics.per_job; cores: compute cores of the platform."""
    lo, hi = time_range
    pieces, drawn = _rectangles(jobs_csv, table, lo, hi, cores)
    axis = TimeAxis.for_span(axis.origin, lo, hi)   # hours unless the range spans days
    top = cores if cores else max([l + 1 for p in pieces.values() for _, _, _, l in p], default=1)
    # outlines tell jobs apart while a core is a few px high; past that they would hide the colours
    edges = {"edgecolors": "#00000055", "linewidths": 0.3} if top <= EDGES_UP_TO_CORES else {"linewidths": 0}
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for part, (colour, _) in PARTS.items():
        verts = [[(axis(a), f), (axis(a), l + 1), (axis(b), l + 1), (axis(b), f)] for a, b, f, l in pieces[part]]
        if verts:
            ax.add_collection(PolyCollection(verts, facecolors=colour, **edges))
    boundaries = []
    if node_of:
        names = [node_of.get(i) for i in range(top)]
        boundaries = [i for i in range(1, top) if names[i] != names[i - 1]]
        if len(boundaries) <= NODE_LINES_UP_TO:
            ax.hlines(boundaries, float(axis(lo)), float(axis(hi)), color="#dddddd", linewidth=0.5, zorder=0)
        else:
            boundaries = []  # hundreds of lines would only grey the chart
    ax.set_xlim(float(axis(lo)), float(axis(hi)))
    ax.set_ylim(0, top)
    ax.set_ylabel("core (resource id)" + ("; lines: node boundaries" if boundaries else ""))
    ax.set_xlabel(axis.label)
    ax.set_title(f"{title} — {drawn} jobs" if drawn else f"{title} — no job in range")
    handles = [Patch(facecolor=colour, label=label) for part, (colour, label) in PARTS.items() if pieces[part]]
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize="small",
                  frameon=False)
    return save(fig, path)
