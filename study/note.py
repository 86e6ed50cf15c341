"""The closing note of a study, `study.md`: batloc's Tables I–III and session counts beside the paper's.

Every figure comes from the report's comparison (analysis.compare): only
evaluated jobs count, reductions are against FCFS (or FCFS-BF for the
backfilling variants), "all" sums the weeks as the paper sums its 12.
"""

from __future__ import annotations

import math

import pandas as pd

from batloc.analysis import compare

from . import paper
from .prepare import Prepared


def _pct(value, digits=1) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f} %"


def _row(table: pd.DataFrame, index, schedulers) -> list:
    if table is None or table.empty or index not in table.index:
        return [None] * len(schedulers)
    return [table.loc[index, s] if s in table.columns else None for s in schedulers]


def _markdown(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def variants(comp: compare.Comparison) -> tuple[list, list]:
    """(plain variants, backfilling variants) present in the comparison, in the paper's order."""
    names = list(comp.transfer_table.columns) if not comp.transfer_table.empty else []
    order = {name: i for i, name in enumerate(("fcfs",) + paper.VARIANTS)}

    def key(name):
        return (order.get(name.removesuffix("-bf"), len(order)), name)

    return (sorted((n for n in names if not n.endswith("-bf")), key=key),
            sorted((n for n in names if n.endswith("-bf")), key=key))


def table_ii(comp: compare.Comparison, digits=1) -> str:
    """Table II, batloc's row under the paper's (plain variants)."""
    plain, _ = variants(comp)
    cols = [v for v in paper.VARIANTS if v in plain]
    rows = [["paper (12 Rackham weeks)"] + [_pct(paper.TABLE_II[v], digits) for v in cols],
            ["batloc (this study)"] + [_pct(v, digits) for v in _row(comp.transfer_table, "all", cols)]]
    return _markdown(["file-wait reduction vs FCFS"] + [c.upper() for c in cols], rows)


def sessions_table(comp: compare.Comparison) -> pd.DataFrame:
    rows = []
    for sched, group in comp.improvements.groupby("scheduler", sort=False):
        counts = compare.count_faster(group["improvement"])
        n = max(1, counts["sessions_compared"])
        rows.append({"scheduler": sched, "baseline": group["baseline"].iloc[0], "sessions": counts["sessions_compared"],
                     "faster %": 100 * counts["faster"] / n, "equal %": 100 * counts["equal"] / n,
                     "slower %": 100 * counts["slower"] / n, "median": counts["median_improvement"],
                     "mean": counts["mean_improvement"]})
    return pd.DataFrame(rows)


def render(prepared: Prepared, comp: compare.Comparison, report_html, seconds: float | None = None) -> str:
    study = prepared.study
    plain, bf = variants(comp)
    out = [f"# The paper's study on {prepared.trace.name}: {len(prepared.weeks)} week(s), "
           f"{len(study.schedulers)} variants", ""]
    out.append(f"Gonthier et al. 2024, §V, redone by `batloc study paper` (`{study.source.name}`). "
               f"Full report with the boxplots and ECDF: `{report_html}`.")
    out += ["", "## Setup", ""]
    out.append(f"- trace: `{prepared.trace}`; files by the `{study.sharing}` rule (same user and core count within "
               f"{study.sharing_window:g} s share a file of cores/20 × 128 GB); user sessions of 5 min;")
    out.append(f"- platform: Rackham's node (20 cores, 128 GB, 0.1 GB/s FATPIPE link) × {prepared.nodes} nodes, "
               f"= ceil(trace's processors / 20) (`{prepared.platform.name}`);")
    out.append(f"- windows: {len(prepared.weeks)} week(s) drawn with seed {study.seed} among the trace's whole weeks, "
               f"each with {study.before / 86400:g} d of context before and {study.after / 86400:g} d after "
               "(simulated, not evaluated);")
    opts = ", ".join(f"{k}: {v}" for k, v in study.options.items()) or "none (the paper's rules: plan at every event)"
    out.append(f"- options added to every variant: {opts}.")
    if seconds is not None:
        out.append(f"- wall time of the study: {seconds / 60:.1f} min.")
    out += ["", _markdown(["week", "jobs simulated", "evaluated", "offered load"],
                          [[w.label, w.jobs, w.evaluated, f"{w.offered_load:.2f}"] for w in prepared.weeks])]

    out += ["", "## Table II — reduction of the time spent waiting for files, all weeks", "", table_ii(comp)]
    if bf:
        out += ["", "With backfilling, against FCFS-BF (FCFS-BF itself against FCFS; the paper gives no table "
                "for these):", "",
                _markdown(bf, [[_pct(v) for v in _row(comp.transfer_table, "all", bf)]])]

    out += ["", "## Table I — per week (the paper's Table I is its low-utilisation week 40)", ""]
    cols = plain + bf
    rows = [["paper, week 40 (low)", ""] + [_pct(paper.TABLE_I_WEEK40.get(c)) for c in cols],
            ["paper, week 43 (saturated)", ""] + [_pct(paper.WEEK43_TRANSFER.get(c), 0) for c in cols]]
    loads = {w.label: w.offered_load for w in prepared.weeks}
    for index in (i for i in comp.transfer_table.index if i != "all"):
        week = index.split(" / ")[-1].removeprefix("week-")
        rows.append([f"batloc, {week}", f"{loads.get(week, float('nan')):.2f}"]
                    + [_pct(v) for v in _row(comp.transfer_table, index, cols)])
    out.append(_markdown(["", "offered load"] + [c.upper() for c in cols], rows))

    out += ["", "## Table III — reduction of the total core time, all weeks", ""]
    rows = [["paper"] + [_pct(paper.TABLE_III.get(c), 2) for c in cols],
            ["batloc"] + [_pct(v, 2) for v in _row(comp.core_time_table, "all", cols)]]
    out.append(_markdown([""] + [c.upper() for c in cols], rows))

    out += ["", "## User sessions against the baseline (Figs. 8–10)", "",
            "Improvement = baseline session stretch / variant session stretch; equal within ±1 %.", ""]
    sess = sessions_table(comp)
    rows = [[r["scheduler"], r["baseline"], r["sessions"], f"{r['faster %']:.1f} %", f"{r['equal %']:.1f} %",
             f"{r['slower %']:.1f} %", f"{r['median']:.3f}", f"{r['mean']:.3f}",
             paper.SESSIONS.get(r["scheduler"], "")] for _, r in sess.iterrows()]
    out.append(_markdown(["variant", "against", "sessions", "faster", "equal", "slower", "median", "mean",
                          "the paper says"], rows))
    return "\n".join(out) + "\n"
