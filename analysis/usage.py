"""Cluster usage over time (paper Figs. 3, 6) as step functions of cores.

Each job counts its cores as *queued* from submission to reservation start,
*loading* from reservation start to computing start (loading its file or
waiting for one), and *running* from computing start to finish.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class Step:
    """value[i] holds on [times[i], times[i+1])."""

    times: np.ndarray
    values: np.ndarray


def step(begin, end, weight) -> Step:
    begin, end, weight = (np.asarray(a, dtype=float) for a in (begin, end, weight))
    keep = np.isfinite(begin) & np.isfinite(end) & (end > begin)
    begin, end, weight = begin[keep], end[keep], weight[keep]
    t = np.concatenate([begin, end])
    d = np.concatenate([weight, -weight])
    if len(t) == 0:
        return Step(np.array([0.0]), np.array([0.0]))
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    uniq = np.unique(t)
    # the level after every event at one instant is the level that holds from it
    last = np.searchsorted(t, uniq, side="right") - 1
    return Step(uniq, np.round(level[last], 9))


def value_at(s: Step, when: float) -> float:
    i = np.searchsorted(s.times, when, side="right") - 1
    return float(s.values[i]) if i >= 0 else 0.0


@dataclass
class Usage:
    running: Step
    queued: Step
    loading: Step
    running_evaluated: Step
    queued_evaluated: Step
    window: tuple[float, float]  # submission span of evaluated jobs = evaluation window


def cluster_usage(jobs_table: pd.DataFrame) -> Usage:
    t = jobs_table[jobs_table["ended"]]
    ev = t[t["evaluated"]]
    sub_ev = jobs_table.loc[jobs_table["evaluated"], "submission_time"]
    window = (float(sub_ev.min()), float(sub_ev.max())) if len(sub_ev) else (float("nan"), float("nan"))
    return Usage(
        running=step(t["starting_time"], t["finish_time"], t["cores"]),
        queued=step(t["submission_time"], t["reservation_start"], t["cores"]),
        loading=step(t["reservation_start"], t["starting_time"], t["cores"]),
        running_evaluated=step(ev["starting_time"], ev["finish_time"], ev["cores"]),
        queued_evaluated=step(ev["submission_time"], ev["reservation_start"], ev["cores"]),
        window=window,
    )
