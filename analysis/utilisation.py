"""Utilisation over time and idle ratio (Jeannot, Pallez & Vidal, Figs. 4-5 and 9).

Utilisation of a time window = allocated core-time in it / (P × its length),
allocated from a job's reservation start to its finish; the idle ratio =
idle core-time / (P × makespan), the run taken from the first submission to
the last finish.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _allocations(jobs: pd.DataFrame):
    done = jobs[jobs["ended"]]
    return (done["reservation_start"].to_numpy(float), done["finish_time"].to_numpy(float),
            done["cores"].to_numpy(float))


def span(jobs: pd.DataFrame) -> tuple[float, float]:
    done = jobs[jobs["ended"]]
    if done.empty:
        return (0.0, 0.0)
    return float(jobs["submission_time"].min()), float(done["finish_time"].max())


def utilisation_over_time(jobs: pd.DataFrame, total_cores: float, windows: int = 50) -> pd.DataFrame:
    """`windows` equal windows over the run's span: begin, end, utilisation (0..1)."""
    begin, end = span(jobs)
    edges = np.linspace(begin, end, windows + 1) if end > begin else np.array([begin, begin + 1.0])
    start, finish, cores = _allocations(jobs)
    lo, hi = edges[:-1, None], edges[1:, None]
    overlap = np.clip(np.minimum(finish[None, :], hi) - np.maximum(start[None, :], lo), 0.0, None)
    busy = (overlap * cores[None, :]).sum(axis=1)
    return pd.DataFrame({"begin": edges[:-1], "end": edges[1:],
                         "utilisation": busy / (total_cores * (edges[1:] - edges[:-1]))})


def idle_ratio(jobs: pd.DataFrame, total_cores: float) -> float:
    begin, end = span(jobs)
    if end <= begin:
        return float("nan")
    start, finish, cores = _allocations(jobs)
    return float(1.0 - (cores * (finish - start)).sum() / (total_cores * (end - begin)))


def steady_utilisation(jobs: pd.DataFrame, total_cores: float) -> float:
    """Utilisation from the first submission until half of the jobs have ended.

    A static workload (all jobs released together) has a start-up and an exhaustion;
    its first half is the closest it comes to the steady state of a dynamic one."""
    done = jobs[jobs["ended"]]
    if done.empty:
        return float("nan")
    begin = float(jobs["submission_time"].min())
    half = float(done["finish_time"].median())
    if half <= begin:
        return float("nan")
    start, finish, cores = _allocations(jobs)
    busy = (cores * np.clip(np.minimum(finish, half) - start, 0.0, None)).sum()
    return float(busy / (total_cores * (half - begin)))
