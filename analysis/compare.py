"""Comparisons against a baseline run (paper §V-D to V-F).

Runs are compared only with the baseline of their own group (same platform
and workload). A run with backfilling is compared with the backfilling
baseline (the baseline's policy run with backfilling) when that run exists,
as in the paper's Fig. 10; otherwise with the plain baseline. Whether a run
used backfilling, and its policy, come from the scheduler options robin
recorded in its run.json, never from its name.

- improvement of a session = Stretch_base / Stretch_X (> 1: X is faster);
- faster / slower / equal: improvement above 1 + EQUAL_BAND, below
  1 − EQUAL_BAND, or within (Figs. 2, 7);
- reduction (%) of transfer time (transfer + file wait, Tables I, II) and of
  core time (Table III) = 100 × (base − X) / base, per group and summed over
  every group ("all", as the paper sums its weeks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

EQUAL_BAND = 0.01


@dataclass
class RunResult:
    name: str
    scheduler: str
    group: tuple[str, str]
    summary: dict
    sessions: pd.DataFrame  # analysis.sessions.session_table
    jobs: pd.DataFrame | None = None  # analysis.metrics.per_job
    meta: dict | None = None
    policy: str | None = None  # robin's run.json: the batloc policy, None for a command
    options: dict = field(default_factory=dict)  # robin's run.json: the scheduler's options

    @property
    def backfilling(self) -> bool:
        return bool(self.options.get("backfilling"))


def group_label(group: tuple[str, str]) -> str:
    return f"{group[0]} / {group[1]}"


def baseline_of(run: RunResult, runs: dict[str, RunResult], baseline: str) -> RunResult | None:
    """The run `run` is compared with, among its group's `runs` (by scheduler name); None for none."""
    base = runs.get(baseline)
    if run.backfilling:
        policy = base.policy if base is not None else baseline
        bf = [r for _, r in sorted(runs.items()) if r.backfilling and r.policy == policy]
        # the backfilling baseline itself is compared with the plain one
        if bf and not any(r is run for r in bf):
            return bf[0]
    if base is None or base is run:
        return None
    return base


def pairs(results: list[RunResult], baseline: str):
    """(run, its baseline run) for every comparable run."""
    by_group: dict[tuple, dict[str, RunResult]] = {}
    for r in results:
        by_group.setdefault(r.group, {})[r.scheduler] = r
    for group in sorted(by_group):
        runs = by_group[group]
        for sched in sorted(runs):
            base = baseline_of(runs[sched], runs, baseline)
            if base is not None:
                yield runs[sched], base


def session_improvements(run: RunResult, base: RunResult) -> pd.DataFrame:
    both = base.sessions[["stretch", "duration"]].rename(columns={"stretch": "stretch_base"}).join(
        run.sessions[["stretch"]].rename(columns={"stretch": "stretch_x"}), how="inner")
    both = both[(both["stretch_x"] > 0) & both["stretch_base"].notna()]
    both["improvement"] = both["stretch_base"] / both["stretch_x"]
    return both


def count_faster(improvements: pd.Series) -> dict:
    imp = improvements.to_numpy(dtype=float)
    faster = imp > 1 + EQUAL_BAND
    slower = imp < 1 - EQUAL_BAND
    return {
        "sessions_compared": int(len(imp)),
        "faster": int(faster.sum()),
        "slower": int(slower.sum()),
        "equal": int(len(imp) - faster.sum() - slower.sum()),
        "mean_improvement_faster": float(imp[faster].mean()) if faster.any() else float("nan"),
        "mean_improvement_slower": float(imp[slower].mean()) if slower.any() else float("nan"),
        "median_improvement": float(np.median(imp)) if len(imp) else float("nan"),
        "mean_improvement": float(imp.mean()) if len(imp) else float("nan"),
    }


def reduction_pct(base: float, value: float) -> float:
    return 100.0 * (base - value) / base if base else float("nan")


@dataclass
class Comparison:
    improvements: pd.DataFrame  # group, scheduler, baseline, session, improvement, duration, backfilling
    per_run: pd.DataFrame       # one row per compared run
    transfer_table: pd.DataFrame  # rows: group labels + "all"; columns: schedulers (Tables I, II)
    core_time_table: pd.DataFrame  # same layout (Table III)


def compare(results: list[RunResult], baseline: str = "fcfs") -> Comparison:
    imp_frames, rows = [], []
    for run, base in pairs(results, baseline):
        imp = session_improvements(run, base)
        label = group_label(run.group)
        imp_frames.append(pd.DataFrame({
            "group": label, "scheduler": run.scheduler, "baseline": base.scheduler,
            "session": imp.index, "improvement": imp["improvement"].values, "duration": imp["duration"].values,
            "backfilling": run.backfilling and base.backfilling,
        }))
        rows.append({
            "group": label, "run": run.name, "scheduler": run.scheduler, "baseline": base.scheduler,
            "load_time": run.summary["total_load_time"], "load_time_base": base.summary["total_load_time"],
            "core_time": run.summary["total_core_time"], "core_time_base": base.summary["total_core_time"],
            "transfer_reduction_pct": reduction_pct(base.summary["total_load_time"], run.summary["total_load_time"]),
            "core_time_reduction_pct": reduction_pct(base.summary["total_core_time"], run.summary["total_core_time"]),
            **count_faster(imp["improvement"]),
        })
    improvements = pd.concat(imp_frames, ignore_index=True) if imp_frames else pd.DataFrame(
        columns=["group", "scheduler", "baseline", "session", "improvement", "duration", "backfilling"])
    per_run = pd.DataFrame(rows)
    return Comparison(
        improvements=improvements,
        per_run=per_run,
        transfer_table=_reduction_table(per_run, "load_time"),
        core_time_table=_reduction_table(per_run, "core_time"),
    )


def _reduction_table(per_run: pd.DataFrame, metric: str) -> pd.DataFrame:
    if per_run.empty:
        return pd.DataFrame()
    base = per_run.pivot_table(index="group", columns="scheduler", values=f"{metric}_base", aggfunc="sum")
    value = per_run.pivot_table(index="group", columns="scheduler", values=metric, aggfunc="sum")
    table = 100.0 * (base - value) / base.where(base != 0)
    totals = per_run.groupby("scheduler")[[f"{metric}_base", metric]].sum()
    all_row = 100.0 * (totals[f"{metric}_base"] - totals[metric]) / totals[f"{metric}_base"].where(totals[f"{metric}_base"] != 0)
    table.loc["all"] = all_row
    table.columns.name = None
    return table
