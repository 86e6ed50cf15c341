"""Comparisons against a baseline run (paper §V-D to V-F).

Runs are compared only within their own group (same platform and
workload), each with the run its sweep declared (`against:` in robin's
description) or, by default, with a baseline of its own kind: a run without
backfilling with the baseline, a run with backfilling (a policy's option, or
a stock scheduler robin knows to backfill, staged or not) with the
backfilling baseline — the baseline's policy run with backfilling (FCFS-BF),
as in the paper's Fig. 10; the backfilling baseline itself with the plain
baseline. Without a backfilling baseline a backfilling run is compared with
nothing rather than silently with a plain one; `crosses` tells the report
where a pair (declared, or the backfilling baseline's) spans that line.
Whether a run backfills, and its policy, come from its run.json, never from
its name.

- improvement of a session = Stretch_base / Stretch_X (> 1: X is faster);
- faster / slower / equal: improvement above 1 + EQUAL_BAND, below
  1 − EQUAL_BAND, or within (Figs. 2, 7); of the equal, `unchanged` kept
  exactly the same stretch, and `at_once` had stretch 1 under both (every job
  started at its submission and loaded its file, under either). When the
  unchanged hold the middle of the ranking the median improvement is exactly 1:
  what the schedules are (on a lightly loaded platform, most sessions), not a
  flaw of the measure;
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
    against: str | None = None   # robin's run.json: the run its sweep pairs it with
    uses_backfilling: bool | None = None   # robin's run.json (None: read the options)
    walltime_includes_load: bool | None = None   # the walltime rule it ran under (load.RunFiles)
    staged: bool = False

    @property
    def backfilling(self) -> bool:
        if self.uses_backfilling is not None:
            return self.uses_backfilling
        return bool(self.options.get("backfilling"))


def group_label(group: tuple[str, str]) -> str:
    return f"{group[0]} / {group[1]}"


def backfilling_baseline(runs: dict[str, RunResult], baseline: str) -> RunResult | None:
    """The baseline's policy (FCFS for a command baseline) run with backfilling, if the group has one."""
    base = runs.get(baseline)
    policy = base.policy if base is not None and base.policy else ("fcfs" if base is not None else baseline)
    bf = [r for _, r in sorted(runs.items()) if r.backfilling and r.policy == policy]
    return bf[0] if bf else None


def baseline_of(run: RunResult, runs: dict[str, RunResult], baseline: str) -> RunResult | None:
    """The run `run` is compared with, among its group's `runs` (by scheduler name); None for none."""
    if run.against:
        base = runs.get(run.against)
        return None if base is run else base
    base = runs.get(baseline)
    if run.backfilling:
        bf = backfilling_baseline(runs, baseline)
        if bf is not None and bf is not run:
            return bf
        if bf is None:
            return None       # never against a plain baseline by default: declare it with against:
    if base is None or base is run:
        return None
    return base


def crosses(run: RunResult, base: RunResult | None) -> bool:
    """The pair spans the backfilling line (one backfills, the other not)."""
    return base is not None and run.backfilling != base.backfilling


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
        "unchanged": int((imp == 1.0).sum()),
    }


def at_once(both: pd.DataFrame) -> int:
    """Sessions (session_improvements' rows) whose stretch is 1 under both runs: every job started at its
    submission, its load included, in each."""
    one = np.isclose(both["stretch_x"], 1.0, rtol=1e-9, atol=0) & np.isclose(both["stretch_base"], 1.0, rtol=1e-9,
                                                                              atol=0)
    return int(one.sum())


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
            **count_faster(imp["improvement"]), "at_once": at_once(imp),
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
