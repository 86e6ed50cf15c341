"""Gantt chart of a time range of one run: which core ran which job, and when it held cores for a file.

Only the jobs overlapping the chosen range are drawn; by default the range
is the evaluation window (its first to its last evaluated submission, of the
group's first run), `batloc report --gantt-window` chooses another (`all`,
or FROM:TO from the window's start, e.g. 0:6h), and every run of a group is
drawn on that same range so that their charts compare. Only compute resources are drawn: a staging
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

from batloc.platforms.units import parse_duration

from .style import NAMED, TimeAxis, plt, save

EDGES_UP_TO_CORES = 128
NODE_LINES_UP_TO = 64
# What a rectangle's colour says (the legend's order).
# What a rectangle's colour says (the legend's order): a colour name of style.NAMED, the legend's text.
PARTS = {
    "evaluated": ("blue", "computing (evaluated job)"),
    "context": ("light blue", "computing (context job, not evaluated)"),
    "killed": ("vermilion", "computing, then killed at its walltime"),
    "loading": ("orange", "holding cores: loading or waiting for its file"),
}
WINDOWS = ("evaluation", "all")


def parse_window(text: str) -> str | tuple[float, float]:
    """`evaluation`, `all`, or FROM:TO (durations from the evaluation window's start: 0:6h, 1d:36h) in seconds."""
    if text in WINDOWS:
        return text
    lo, sep, hi = text.partition(":")
    try:
        start, end = parse_duration(lo), parse_duration(hi)
    except ValueError:
        start = end = None
    if start is None or not start < end < float("inf"):   # 5h:2h drew an empty chart in silence
        raise ValueError(f"a Gantt window is evaluation, all or FROM:TO from the evaluation window's start, FROM "
                         f"before TO (e.g. 0:6h), not {text!r}")
    return start, end


def default_range(jobs_csv: pd.DataFrame, table: pd.DataFrame, window="evaluation") -> tuple[float, float]:
    """The simulated-time range a group's Gantt charts show (from its first run's jobs)."""
    done = jobs_csv[jobs_csv["workload_name"] != STAGE_WORKLOAD].dropna(subset=["starting_time", "finish_time"])
    ev = table.loc[table["evaluated"], "submission_time"].dropna()
    origin = float(ev.min()) if len(ev) else float(table["submission_time"].min())
    if isinstance(window, tuple):
        lo, hi = origin + window[0], origin + window[1]
    elif window == "all" or not len(ev) or done.empty:
        lo = float(table["submission_time"].min())
        hi = float(done["finish_time"].max()) if not done.empty else lo
    else:
        lo, hi = origin, float(ev.max())
    return (lo, max(hi, lo + 1.0))


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
    for part, (name, _) in PARTS.items():
        colour = NAMED[name]
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
    handles = [Patch(facecolor=NAMED[name], label=label) for part, (name, label) in PARTS.items() if pieces[part]]
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize="small",
                  frameon=False)
    return save(fig, path)
