"""The report's first table: per platform/workload, each variant against its baseline, in human units.

It answers the question the lab is for — how much queue time and data
transfer a scheduler saves — so it holds the means and totals a user asks
about first, each beside its change from the run it is compared with
(compare.baseline_of: the declared run, or the baseline of its kind).
Counts change by a difference, the rest by a percentage; every metric here
is better lower but the completed jobs. The jobs killed at their walltime
are a share of the evaluated jobs, with how many of them their load pushed
over (those that would have finished had it not counted: walltime_rule).
A group where no run is compared with another (no baseline run: Batsim's
stock schedulers under the default baseline fcfs, say) still shows its
table, under a line that says so and how to pick one (nothing_compared).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from . import compare
from .tables import HOUR, TB, Column, change, fixed, number


@dataclass(frozen=True)
class Metric:
    column: Column
    lower_is_better: bool = True
    counts: bool = False


METRICS = [
    Metric(Column("jobs_completed", "jobs completed", integer=True), lower_is_better=False, counts=True),
    Metric(Column("mean_wait", "mean wait (h)", 1 / HOUR)),
    Metric(Column("mean_flow", "mean turnaround (h)", 1 / HOUR)),
    Metric(Column("total_load_time", "time waiting for files, total (h)", 1 / HOUR)),
    Metric(Column("bytes_staged", "data moved from the file system (TB)", 1 / TB)),
    Metric(Column("total_core_time", "core-hours", 1 / HOUR)),
    Metric(Column("jobs_killed", "killed at walltime: jobs (by their load), share", integer=True), counts=True),
    Metric(Column("jobs_rejected", "jobs rejected", integer=True), counts=True),
]


@dataclass
class Row:
    run: compare.RunResult
    base: compare.RunResult | None


def rows(results, baseline: str, order) -> dict[tuple, list[Row]]:
    """group → its runs in `order` (a list of scheduler names), each with the run it is compared with."""
    groups: dict[tuple, dict[str, compare.RunResult]] = {}
    for r in results:
        groups.setdefault(r.group, {})[r.scheduler] = r
    out = {}
    for group in sorted(groups):
        runs = groups[group]
        names = [s for s in order if s in runs] + sorted(set(runs) - set(order))
        out[group] = [Row(runs[s], compare.baseline_of(runs[s], runs, baseline)) for s in names]
    return out


def _cell(metric: Metric, run: compare.RunResult, base: compare.RunResult | None) -> str:
    key = metric.column.key
    value = run.summary.get(key)
    text = html.escape(metric.column.show(value))
    if key == "jobs_killed" and run.summary.get(key):
        text += (f" ({html.escape(number(run.summary.get('jobs_killed_by_load'), integer=True))})"
                 f"<br>{html.escape(fixed(run.summary.get('killed_pct'), 1))} %")
    if base is None:
        return text
    delta = change(value, base.summary.get(key), counts=metric.counts)
    if not delta:
        return text
    try:
        diff = float(value) - float(base.summary.get(key))
    except (TypeError, ValueError):
        diff = 0.0
    better = diff != 0 and ((diff < 0) == metric.lower_is_better)
    css = "same" if diff == 0 else ("better" if better else "worse")
    return f"{text}<br><span class='{css}'>{html.escape(delta)}</span>"


def table(group_rows: list[Row], baseline: str):
    """A DataFrame of HTML cells: variant, against, then one column per metric."""
    import pandas as pd

    records = []
    for row in group_rows:
        variant = html.escape(row.run.scheduler)
        if row.base is None and row.run.scheduler == baseline:
            variant += "<br><span class='same'>baseline</span>"
        against = html.escape(row.base.scheduler) if row.base is not None else "–"
        if row.base is not None and row.run.against:
            against += "<br><span class='same'>declared</span>"
        if compare.crosses(row.run, row.base):
            against += ("<br><span class='worse'>" + ("does not backfill" if row.run.backfilling else "backfills")
                        + "</span>")
        if row.base is None and row.run.backfilling and not row.run.against and row.run.scheduler != baseline:
            against = "–<br><span class='same'>no backfilling baseline</span>"
        rec = {"variant": variant, "against": against}
        for m in METRICS:
            rec[m.column.header] = _cell(m, row.run, row.base)
        records.append(rec)
    return pd.DataFrame(records, columns=["variant", "against"] + [m.column.header for m in METRICS])


def walltime_rule(group_rows: list[Row]) -> str:
    """One sentence: which walltime rule the runs of a group ran under (HTML)."""
    def names(rule):
        return [html.escape(r.run.scheduler) for r in group_rows if r.run.walltime_includes_load is rule]

    counted, not_counted = names(True), names(False)
    parts = []
    if counted:
        parts.append("the load counts against the walltime (the paper's rule: a job is killed at its reservation "
                     "start + its walltime, its load included) in " + _which(counted, len(group_rows)))
    if not_counted:
        parts.append("the walltime counts from the execution, after the load (the load pushes no job over) in "
                     + _which(not_counted, len(group_rows)))
    if not parts:
        return "No run loads files: the walltime rule does not apply."
    text = "Walltime rule: " + "; ".join(parts) + "."
    if counted and not_counted:
        text += " <span class='worse'>The runs do not follow one rule: their kills do not compare.</span>"
    return text


def _which(names: list[str], total: int) -> str:
    return "every run" if len(names) == total else ("runs " + ", ".join(names))


def nothing_compared(group_rows: list[Row], baseline: str) -> str:
    """One sentence (HTML) for a group whose runs are compared with none: why, and what would compare them."""
    names = [r.run.scheduler for r in group_rows]
    shown = ", ".join(f"<code>{html.escape(n)}</code>" for n in names)
    base = f"<code>{html.escape(baseline)}</code>"
    if baseline not in names:
        return (f"Nothing compared here: no run of the baseline {base} (runs: {shown}). The table shows each run's "
                "own figures, with no change under them; to compare, name one of them as the baseline: "
                "<code>batloc report --baseline NAME</code>, or <code>baseline: NAME</code> in robin's sweep.")
    if len(names) == 1:
        return f"Nothing compared here: only the baseline {base} ran."
    return (f"Nothing compared here: the runs besides the baseline {base} backfill, and no run of it with "
            "backfilling is there to compare them with (a sweep entry's <code>against: NAME</code> declares one).")
