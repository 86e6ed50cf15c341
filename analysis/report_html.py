"""Render report.html: tables, figures (relative links), run metadata, provenance."""

from __future__ import annotations

import hashlib
import html
import json
import platform as _platform
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from . import headline, inputs, predictions, proxy_cost, tables
from .checks import validated
from .compare import EQUAL_BAND, group_label
from .khanna import html_section as khanna_section
from .style import FIGURE_DPI
from .tables import HOUR, TB, Column

_STYLE = """
body{font-family:sans-serif;margin:2em;max-width:1300px;line-height:1.35}
table{border-collapse:collapse;margin:0.3em 0 1.2em;max-width:100%}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right;font-size:90%;vertical-align:top}
td{overflow-wrap:anywhere} th{background:#eee;font-weight:600} td.key,th.key{text-align:left;overflow-wrap:normal}
.better{color:#0a7d32;font-size:85%} .worse{color:#b30000;font-size:85%} .same{color:#666;font-size:85%}
figure{margin:1em 0 1.8em} img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{max-width:60em;font-size:90%;color:#333}
pre{background:#f6f6f6;padding:0.5em;white-space:pre-wrap;overflow-wrap:anywhere;font-size:85%}
.fail{color:#b30000} p.note{max-width:60em;font-size:90%;color:#333}
"""
_SHOWN_DPI = 100  # figures are drawn at style.FIGURE_DPI and shown at this size on a plain screen


def _png_size(path: Path) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _img(path: Path, root: Path, caption: str) -> str:
    rel = path.relative_to(root).as_posix()
    svg = path.with_suffix(".svg")
    size = _png_size(path)
    dims = f' width="{size[0] * _SHOWN_DPI // FIGURE_DPI}"' if size else ""
    link = f' <a href="{html.escape(svg.relative_to(root).as_posix())}">SVG</a>' if svg.exists() else ""
    return (f'<figure><img src="{html.escape(rel)}" alt="{html.escape(caption)}"{dims}>'
            f"<figcaption>{html.escape(caption)}{link}</figcaption></figure>")


def _sha256(path) -> str:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()[:16]
    except OSError:
        return "unreadable"


def _git_commit(root: Path | None = None) -> str:
    """The checkout's commit when batloc runs from one (its root is the package's folder); an installed
    wheel has no commit of its own, and must not report that of a repository it happens to sit in."""
    here = root or Path(__file__).resolve().parents[1]
    if not (here / ".git").exists():
        return "unknown"
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "--no-optional-locks", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "") if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _versions() -> dict:
    import evalys
    import matplotlib
    import numpy

    import batloc
    return {"batloc": batloc.__version__, "batloc git": _git_commit(), "python": _platform.python_version(),
            "pandas": pd.__version__, "numpy": numpy.__version__, "matplotlib": matplotlib.__version__,
            "evalys": getattr(evalys, "__version__", "?"), "command": " ".join(sys.argv)}


def _metadata_rows(results, per_job: dict, root: Path) -> pd.DataFrame:
    rows = []
    for r in results:
        m = r.meta or {}
        sched = m.get("scheduler") or {}
        job_csv = per_job.get(r.name)
        rows.append({
            "run": html.escape(r.name), "group": html.escape(group_label(r.group)),
            "scheduler": html.escape(r.scheduler),
            "options": html.escape(json.dumps(sched.get("options", {}))) if sched else "",
            "load counts against walltime": {True: "yes", False: "no", None: "–"}[r.walltime_includes_load],
            "status": html.escape(str(m.get("status", "?"))), "validated": validated(m),
            "wall time (s)": tables.number(m.get("wall_seconds", float("nan"))),
            "CPU (s)": tables.number(_cpu(m)),
            "decision log": "yes" if r.summary.get("has_decision_log") else "no",
            "per-job table": (f'<a href="{html.escape(job_csv.relative_to(root).as_posix())}">CSV</a>'
                              if job_csv else ""),
            "platform sha256": _sha256(m["platform"]) if m.get("platform") else "",
            "workload sha256": _sha256(m["workload"]) if m.get("workload") else "",
        })
    return pd.DataFrame(rows)


def _cpu(meta) -> float:
    """Engine + scheduler CPU seconds robin recorded (NaN for a run it did not measure)."""
    seconds = meta.get("cpu_seconds")
    if not isinstance(seconds, dict) or not seconds:
        return float("nan")
    return float(sum(v for v in seconds.values() if isinstance(v, (int, float))))


# The per-run details, one theme a table so that each fits the page.
_DETAILS = {
    "Jobs (evaluated jobs only)": [
        Column("jobs_evaluated", "evaluated", integer=True), Column("jobs_completed", "completed", integer=True),
        Column("jobs_killed", "killed at walltime", integer=True), Column("killed_pct", "killed (% of evaluated)"),
        Column("jobs_killed_by_load", "of them, would have finished without their load", integer=True),
        Column("killed_by_load_pct", "killed by their load (% of evaluated)"),
        Column("jobs_rejected", "rejected", integer=True), Column("jobs_not_completed", "not completed", integer=True)],
    "Times": [
        Column("mean_wait", "mean wait (h)", 1 / HOUR), Column("mean_flow", "mean turnaround (h)", 1 / HOUR),
        Column("mean_stretch", "mean stretch"), Column("max_stretch", "max stretch"),
        Column("mean_session_stretch", "mean session stretch"), Column("sessions", "sessions", integer=True),
        Column("mean_bsld", "mean bounded slowdown"), Column("makespan", "makespan (h)", 1 / HOUR)],
    "Files": [
        Column("loads", "file loads, evaluated jobs", integer=True),
        Column("remote_transfers", "file loads, all jobs (replications included)", integer=True),
        Column("hits", "hits", integer=True),
        Column("reuses", "reuses (hits and shared loads)", integer=True),
        Column("total_transfer_time", "transfer time, total (h)", 1 / HOUR),
        Column("total_file_wait", "wait for others' loads or for room, total (h)", 1 / HOUR),
        Column("total_load_time", "time waiting for files, total (h)", 1 / HOUR),
        Column("bytes_staged", "data moved from the file system (TB)", 1 / TB)],
    "Cluster and fairness": [
        Column("total_core_time", "core-hours", 1 / HOUR), Column("idle_ratio", "idle (%)", 100),
        Column("steady_utilisation", "steady utilisation (%)", 100), Column("users", "users", integer=True),
        Column("nuwt_mean", "NUWT mean"), Column("nuwt_std", "NUWT spread (std)"), Column("nuwt_max", "NUWT max")],
    "I/O (Jeannot et al.)": [
        Column("alpha", "α"), Column("io_max_stretch", "max stretch"), Column("io_mean_stretch", "mean stretch"),
        Column("io_mean_flow_stretch", "mean flow stretch")],
}


def _details(summary: pd.DataFrame) -> list[str]:
    out = []
    rows = summary.to_dict("records")
    for title, columns in _DETAILS.items():
        shown = [c for c in columns if c.key in summary.columns and summary[c.key].notna().any()]
        if shown:
            out.append(f"<h3>{html.escape(title)}</h3>")
            out.append(tables.to_html(tables.frame(rows, shown, [("run", "run")])))
    return out


def _pct_table(df: pd.DataFrame, digits: int) -> str:
    """A reduction table (groups × schedulers, %) with its numbers as text."""
    if df is None or df.empty:
        return "<p><em>nothing to compare (no baseline run in any group)</em></p>"
    shown = df.apply(lambda col: col.map(lambda v: tables.fixed(v, digits)))
    shown.insert(0, "platform / workload", [str(i) for i in df.index])
    return tables.to_html(shown.reset_index(drop=True))


_SESSION_COLUMNS = [
    Column("sessions_compared", "sessions compared", integer=True), Column("faster", "faster", integer=True),
    Column("equal", "equal", integer=True), Column("unchanged", "of which unchanged", integer=True),
    Column("at_once", "of which at once in both", integer=True), Column("slower", "slower", integer=True),
    Column("mean_improvement_faster", "mean improvement of the faster"),
    Column("mean_improvement_slower", "mean improvement of the slower"),
    Column("median_improvement", "median improvement"), Column("mean_improvement", "mean improvement")]


def _unchanged_note(rows: list[dict]) -> str:
    """What the equal sessions are, and why a median improvement may be exactly 1 (HTML)."""
    text = (f"Equal: within ±{EQUAL_BAND:.0%}; unchanged: exactly the same stretch under both; at once in both: "
            "stretch 1 under both: every job of the session started at its submission and loaded its file, under "
            "either scheduler.")
    ones = [r for r in rows if r.get("median_improvement") == 1.0 and r.get("sessions_compared")]
    if ones:
        worst = max(ones, key=lambda r: r.get("at_once", 0) / r["sessions_compared"])
        text += (f" A median improvement of exactly 1 ({', '.join(html.escape(str(r['scheduler'])) for r in ones)}) "
                 "comes from the unchanged sessions, which hold the middle of the ranking: for "
                 f"{html.escape(str(worst['scheduler']))}, {worst.get('unchanged', 0)} of "
                 f"{worst['sessions_compared']} sessions are unchanged, {worst.get('at_once', 0)} of them at once "
                 "in both (the queue held them under neither scheduler, and neither found their file in memory).")
    return text


def _order(results, palette) -> list[str]:
    """The schedulers in the order every table and figure shows them."""
    return palette.order([r.scheduler for r in results]) if palette is not None else sorted({r.scheduler for r in results})


def render(output_dir: Path, results, comp, summary: pd.DataFrame, figs: dict, failed: dict, baseline: str,
           captions: dict | None = None, palette=None, per_job: dict | None = None, workflows_html: str = "",
           shown_as: Path | None = None) -> str:
    """The page, its links relative to `output_dir`, where it is written; `shown_as`: the folder it names (the
    report is written aside, then moved there: analysis/swap.py)."""
    captions = captions or {}
    per_job = per_job or {}

    def figure(key):
        return _img(figs[key], output_dir, captions.get(key, key.replace("_", " ")))

    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>batloc report</title><style>{_STYLE}</style></head><body>"]
    out.append(f"<h1>batloc report — {html.escape(str(shown_as or output_dir))}</h1>")
    out.append(f"<p class='note'>{len(results)} run(s) compared; each against the run its sweep declares "
               f"(<code>against:</code>), or by default: a run without backfilling against the baseline "
               f"<code>{html.escape(baseline)}</code>, a run with backfilling (staged or not) against "
               f"<code>{html.escape(baseline)}</code> with backfilling, and none when the group has no such run; "
               "a pair that spans the backfilling line says so in red. "
               "Only evaluated jobs count. Stretch = flow / (input size / bandwidth + run time); "
               "session stretch = sum over a user's jobs submitted within 5 minutes; "
               "improvement = baseline session stretch / scheduler session stretch. "
               "summary.csv holds the same numbers in seconds and bytes.</p>")
    if failed:
        out.append("<h2 class='fail'>Runs left out of every comparison</h2>")
        out.append("<p class='note'>These runs are in no table or figure below: their outputs cannot be read, "
                   "are incomplete, or the validator found their schedule impossible.</p>")
        rows = pd.DataFrame({"run": list(failed), "why": list(failed.values())})
        out.append(tables.to_html(rows))

    grouped = headline.rows(results, baseline, _order(results, palette))
    compared = any(row.base is not None for group_rows in grouped.values() for row in group_rows)
    out.append("<h2>Headline: each variant against its baseline</h2>" if compared else
               "<h2>Headline: no run is compared with another (no baseline run)</h2>")
    out.append("<p class='note'>Over the evaluated jobs that ran (a killed job's turnaround ends at its kill): "
               "wait and turnaround are means; time waiting for files (own loads, waits for others' loads and, "
               "under the staging proxy, for room in memory), data moved and core-hours are totals. Wait = "
               "computing start − submission, loading included; core-hours include the time cores are held for a "
               "load; data moved counts every load of the run, context jobs' and replications included. Jobs "
               "killed at their walltime: their number, in brackets those that would have finished had their "
               "load not counted against their walltime, and their share of the evaluated jobs. Under each "
               "value, its change from the run in <em>against</em> "
               "(<span class='better'>better</span>, <span class='worse'>worse</span>).</p>")
    order = _order(results, palette)
    for group, group_rows in grouped.items():
        evaluated = group_rows[0].run.summary.get("jobs_evaluated", 0)
        out.append(f"<h3>{html.escape(group_label(group))} — {tables.number(evaluated, integer=True)} evaluated jobs</h3>")
        out.append(inputs.group_html([row.run for row in group_rows]))
        out.append(f"<p class='note'>{headline.walltime_rule(group_rows)}</p>")
        if all(row.base is None for row in group_rows):
            out.append(f"<p class='worse'>{headline.nothing_compared(group_rows, baseline)}</p>")
        out.append(tables.to_html(headline.table(group_rows, baseline), keep=2, raw=True))
    out.append(proxy_cost.html_section(results))

    out.append("<h2>Reduction of the total time spent waiting for files (transfer + file wait) against each "
               "run's baseline, % (Tables I, II)</h2>")
    out.append(_pct_table(comp.transfer_table, 2))
    out.append("<h2>Reduction of the total core time against each run's baseline, % (Table III)</h2>")
    out.append(_pct_table(comp.core_time_table, 3))   # core time moves by fractions of a percent

    out.append(f"<h2>User sessions faster / slower / equal (±{EQUAL_BAND:.0%}) than the baseline (Figs. 2, 7)</h2>")
    if not comp.per_run.empty:
        rows = comp.per_run.assign(group=comp.per_run["group"].astype(str)).to_dict("records")
        out.append(tables.to_html(tables.frame(rows, _SESSION_COLUMNS,
                                               [("group", "platform / workload"), ("scheduler", "scheduler"),
                                                ("baseline", "against")]), keep=2))
        out.append(f"<p class='note'>{_unchanged_note(rows)}</p>")
    else:
        out.append("<p><em>nothing to compare (no baseline run in any group)</em></p>")
    for key in ("sessions_faster_slower", "improvement_boxplot", "improvement_boxplot_bf", "improvement_ecdf"):
        if key in figs:
            out.append(figure(key))

    out.append(predictions.html_section(
        results, order, {r.group: figure(f"predictions:{group_label(r.group)}") for r in results
                         if f"predictions:{group_label(r.group)}" in figs}))

    if workflows_html:       # analysis.workflows: runs whose workloads hold workflows (contract §2b)
        out.append(workflows_html)

    out.append("<h2>Per-run details</h2>")
    out += _details(summary)
    out.append(khanna_section(summary))

    out.append("<h2>Utilisation over time and NUWT per user</h2>")
    out += [figure(key) for key in figs if key.split(":")[0] in ("utilisation", "nuwt")]

    out.append("<h2>Cluster usage (Figs. 3, 6) and Gantt charts</h2>")
    for r in results:
        out.append(f"<h3>{html.escape(r.name)}</h3>")
        for kind in ("usage", "gantt"):
            key = f"{kind}:{r.name}"
            if key in figs:
                out.append(figure(key))

    out.append("<h2>Runs</h2>")
    out.append(tables.to_html(_metadata_rows(results, per_job, output_dir), raw=True))
    for r in results:
        m = r.meta or {}
        details = {k: m.get(k) for k in ("batcmd", "schedcmd", "platform", "workload", "status", "reason",
                                         "started_at", "ended_at", "batsim_returncode", "sched_returncode",
                                         "validation")
                   if m.get(k) is not None}
        details["workload provenance"] = m.get("workload_provenance", {})
        out.append(f"<details><summary>{html.escape(r.name)}</summary><pre>{html.escape(json.dumps(details, indent=2, default=str))}</pre></details>")

    out.append("<h2>Provenance</h2><pre>")
    prov = _versions()
    prov["generated"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    out.append(html.escape("\n".join(f"{k}: {v}" for k, v in prov.items())))
    out.append("</pre></body></html>")
    return "\n".join(out)
