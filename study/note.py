"""The closing note of a study, `study.md`: batloc's Tables I–III and session counts beside the paper's.

Every figure comes from the report's comparison (analysis.compare): only
evaluated jobs count, reductions are against FCFS (or FCFS-BF for the
backfilling variants), "all" sums the weeks as the paper sums its 12. Each
paper table gets a verdict by a stated rule (``verdicts``), the jobs killed
at their walltime a table of their own, and the note links
docs/reproduction.md, which says why the numbers differ.
"""

from __future__ import annotations

import math

import pandas as pd

from batloc.analysis import compare

from . import paper
from .prepare import Prepared


def _pct(value, digits=1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value:.{digits}f}"
    return ("0." + "0" * digits if float(text) == 0 else text.replace("-", "−")) + " %"   # never −0.0 %


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


def kills_table(results) -> tuple[str, dict]:
    """Per variant over every week: evaluated jobs, killed at walltime (share), killed by their load (share)."""
    per = {}
    for r in results:
        t = per.setdefault(r.scheduler, {"evaluated": 0, "killed": 0, "by_load": 0, "rule": set()})
        t["evaluated"] += r.summary.get("jobs_evaluated", 0)
        t["killed"] += r.summary.get("jobs_killed", 0)
        t["by_load"] += r.summary.get("jobs_killed_by_load", 0)
        t["rule"].add(r.walltime_includes_load)
    order = {name: i for i, name in enumerate(("fcfs",) + paper.VARIANTS)}
    names = sorted(per, key=lambda n: (n.endswith("-bf"), order.get(n.removesuffix("-bf"), len(order)), n))
    rows = []
    for n in names:
        t = per[n]
        ev = max(1, t["evaluated"])
        rule = ("load counted" if t["rule"] == {True} else "from the execution" if t["rule"] == {False}
                else "mixed")
        rows.append([n.upper(), t["evaluated"], f"{t['killed']} ({100 * t['killed'] / ev:.1f} %)",
                     f"{t['by_load']} ({100 * t['by_load'] / ev:.1f} %)",
                     f"{100 * t['by_load'] / t['killed']:.0f} %" if t["killed"] else "–", rule])
    return _markdown(["variant", "evaluated jobs", "killed at walltime", "of them, by their load",
                      "share of the kills due to the load", "walltime"], rows), per


def kills_text(per: dict) -> str:
    """What the kills do to the comparison, from the figures."""
    if not per:
        return ""
    worst = max(per, key=lambda n: per[n]["killed"] / max(1, per[n]["evaluated"]))
    rules = set().union(*(t["rule"] for t in per.values()))
    killed = sum(t["killed"] for t in per.values())
    by_load = sum(t["by_load"] for t in per.values())
    text = []
    if rules == {True}:
        text.append(
            f"Under the paper's rule a job's load counts against its walltime (it is killed at its reservation "
            f"start + its walltime); {100 * by_load / max(1, killed):.0f} % of the kills above come from it. "
            "A killed job counts in the means and totals with its time up to the kill, and its file wait with it, "
            f"so a variant that kills more (here {worst.upper()}, "
            f"{100 * per[worst]['killed'] / max(1, per[worst]['evaluated']):.1f} % of its jobs) looks shorter "
            "than the work it did not finish: the reductions and session ratios compare schedules that completed "
            "different sets of jobs. The same study with `--options '{\"walltime_includes_load\": false}'` "
            "(the walltime counted from the execution, as Batsim does) has no load-caused kills; "
            "docs/reproduction.md gives both.")
    elif rules == {False}:
        text.append("The walltime counts from each job's execution, after its load (option "
                    "`walltime_includes_load: false`): no kill above comes from a load, so every variant runs "
                    "the same jobs to completion but those whose own run outgrows their walltime.")
    else:
        text.append("The runs do not follow one walltime rule: their kills and means do not compare.")
    return " ".join(text)


REPRODUCTION = "docs/reproduction.md"

# The verdict rules, stated in the note: a table "reproduces" when batloc orders the policies as the paper does
# and each reduction is within a factor of 2 of the paper's (both ways); "order only" when the order holds
# but not the magnitudes; "does not reproduce" otherwise.
FACTOR = 2.0


def _ordered(values: dict) -> bool:
    """The paper's order of the file-wait reductions: LEA > LEM > EFT and LEO."""
    v = {k: values.get(k) for k in paper.VARIANTS}
    if any(x is None or (isinstance(x, float) and math.isnan(x)) for x in v.values()):
        return False
    return v["lea"] > v["lem"] > max(v["eft"], v["leo"])


def _close(values: dict, ref: dict, keys) -> bool:
    for k in keys:
        a, b = values.get(k), ref.get(k)
        if a is None or b is None or b <= 0 or a <= 0 or max(a / b, b / a) > FACTOR:
            return False
    return True


def verdicts(comp: compare.Comparison, prepared: Prepared) -> list[tuple[str, str]]:
    """(paper table, verdict sentence) for Tables I, II, III and the session figures."""
    out = []
    t2 = dict(zip(paper.VARIANTS, _row(comp.transfer_table, "all", paper.VARIANTS)))
    if _ordered(t2) and _close(t2, paper.TABLE_II, ("lea", "lem")):
        v = "reproduces"
    elif _ordered(t2):
        v = "the order reproduces, not the magnitudes"
    else:
        v = "does not reproduce"
    out.append(("Table II", f"{v}: LEA {_pct(t2['lea'])} (paper {_pct(paper.TABLE_II['lea'])}), LEM "
                f"{_pct(t2['lem'])} ({_pct(paper.TABLE_II['lem'])}), EFT {_pct(t2['eft'])}, LEO {_pct(t2['leo'])} "
                f"(paper {_pct(paper.TABLE_II['eft'])}, {_pct(paper.TABLE_II['leo'])})."))
    weeks = [i for i in comp.transfer_table.index if i != "all"] if not comp.transfer_table.empty else []
    good = [w for w in weeks if _ordered(dict(zip(paper.VARIANTS, _row(comp.transfer_table, w, paper.VARIANTS))))]
    v = ("reproduces" if weeks and len(good) == len(weeks) else "reproduces in part" if good
         else "does not reproduce")
    out.append(("Table I", f"{v}: the paper's order (LEA > LEM > EFT, LEO) holds in {len(good)} of {len(weeks)} "
                "week(s); the paper's week 40 is a low-utilisation week, this study's are "
                + ", ".join(f"{w.offered_load:.2f}" for w in prepared.weeks) + " loaded."))
    t3 = dict(zip(paper.VARIANTS, _row(comp.core_time_table, "all", paper.VARIANTS)))
    lea_first = all(t3.get("lea") is not None and t3["lea"] >= (t3.get(k) if t3.get(k) is not None else -math.inf)
                    for k in paper.VARIANTS)
    ratio = (t3["lea"] / paper.TABLE_III["lea"]) if t3.get("lea") else float("nan")
    v = "reproduces" if lea_first and _close(t3, paper.TABLE_III, ("lea",)) else (
        "the order reproduces, not the magnitudes" if lea_first else "does not reproduce")
    times = f", ×{ratio:.1f}" if math.isfinite(ratio) else ""
    out.append(("Table III", f"{v}: LEA saves {_pct(t3.get('lea'), 2)} of the core time (paper "
                f"{_pct(paper.TABLE_III['lea'], 2)}{times}), the largest saving "
                + ("as in the paper." if lea_first else "— not the largest, unlike the paper.")))
    sess = sessions_table(comp).set_index("scheduler") if not comp.improvements.empty else pd.DataFrame()
    claims = {"lea": 75.0, "leo": 87.5, "lem": 87.5}
    met = [k for k, share in claims.items() if k in sess.index and sess.loc[k, "faster %"] >= share]
    shown = ", ".join(f"{k.upper()} {sess.loc[k, 'faster %']:.0f} % (paper ≥ {claims[k]:g} %)"
                      for k in claims if k in sess.index)
    v = "reproduces" if len(met) == len(claims) else ("reproduces in part" if met else "does not reproduce")
    out.append(("Figs. 8–10 (sessions)", f"{v}: sessions faster than under FCFS: {shown}."))
    return out


def render(prepared: Prepared, comp: compare.Comparison, report_html, seconds: float | None = None,
           results=None, cost: str = "") -> str:
    """study.md; `cost` a paragraph on what the runs cost (``cost.describe``), or none."""
    study = prepared.study
    plain, bf = variants(comp)
    out = [f"# {prepared.title()}, {len(study.schedulers)} variants", ""]
    out.append(f"Gonthier et al. 2024, §V, redone by `batloc study` (`{study.source.name}`). "
               f"Full report with the boxplots and ECDF: `{report_html}`. Why the numbers differ from the paper's, "
               f"and what each known difference does to them: {_reproduction_link()}.")
    out += ["", "## Verdict", "", "Per paper table, by a stated rule: *reproduces* when batloc orders the "
            "policies as the paper does and each reduction is within a factor of "
            f"{FACTOR:g} of the paper's; *the order reproduces* when only the order holds.", ""]
    out += [f"- **{table}**: {text}" for table, text in verdicts(comp, prepared)]
    out += ["", "## Setup", ""]
    out += prepared.setup_lines()
    opts = ", ".join(f"{k}: {v}" for k, v in study.options.items()) or "none (the paper's rules: plan at every event)"
    out.append(f"- options added to every variant: {opts};")
    out.append("- walltime: " + ("the load counts against it (the paper's rule)"
                                 if study.options.get("walltime_includes_load", True) else
                                 "counted from the execution, after the load (`walltime_includes_load: false`)") + ".")
    if seconds is not None:
        out.append(f"- wall time of the study: {seconds / 60:.1f} min.")
    if cost:
        out += ["", "## What it cost", "", cost]
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

    if results:
        table, per = kills_table(results)
        out += ["", "## Jobs killed at their walltime, all weeks", "", table, "", kills_text(per)]

    out += ["", "## User sessions against the baseline (Figs. 8–10)", "",
            "Improvement = baseline session stretch / variant session stretch; equal within ±1 %.", ""]
    sess = sessions_table(comp)
    rows = [[r["scheduler"], r["baseline"], r["sessions"], f"{r['faster %']:.1f} %", f"{r['equal %']:.1f} %",
             f"{r['slower %']:.1f} %", f"{r['median']:.3f}", f"{r['mean']:.3f}",
             paper.SESSIONS.get(r["scheduler"], "")] for _, r in sess.iterrows()]
    out.append(_markdown(["variant", "against", "sessions", "faster", "equal", "slower", "median", "mean",
                          "the paper says"], rows))
    return "\n".join(out) + "\n"


def _reproduction_link() -> str:
    from batloc.shipped import package_root

    doc = package_root() / REPRODUCTION
    return f"[{REPRODUCTION}]({doc.as_uri()})" if doc.is_file() else f"`{REPRODUCTION}` in batloc's repository"
