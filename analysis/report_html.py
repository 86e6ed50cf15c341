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

from .compare import EQUAL_BAND, group_label
from .khanna import html_section as khanna_section
from .seed_metrics import COLUMNS as SEED_COLUMNS

_STYLE = """
body{font-family:sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right;font-size:90%}
th{background:#eee} img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}
pre{background:#f6f6f6;padding:0.5em;overflow-x:auto;font-size:85%}
.fail{color:#b00}
"""


def _table(df: pd.DataFrame, fmt="{:.2f}", index=True) -> str:
    if df is None or df.empty:
        return "<p><em>nothing to compare (no baseline run in any group)</em></p>"
    return df.to_html(float_format=lambda v: fmt.format(v), index=index, na_rep="–", border=0)


def _img(path: Path, root: Path, alt: str) -> str:
    rel = path.relative_to(root).as_posix()
    return f'<figure><img src="{html.escape(rel)}" alt="{html.escape(alt)}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def _sha256(path) -> str:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()[:16]
    except OSError:
        return "unreadable"


def _git_commit() -> str:
    here = Path(__file__).resolve().parent
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


def _metadata_rows(results) -> pd.DataFrame:
    rows = []
    for r in results:
        m = r.meta or {}
        sched = m.get("scheduler") or {}
        rows.append({
            "run": r.name, "group": group_label(r.group), "scheduler": r.scheduler,
            "options": json.dumps(sched.get("options", {})) if sched else "",
            "status": m.get("status", "?"), "wall time (s)": m.get("wall_seconds", float("nan")),
            "decision log": "yes" if r.summary.get("has_decision_log") else "no",
            "platform sha256": _sha256(m["platform"]) if m.get("platform") else "",
            "workload sha256": _sha256(m["workload"]) if m.get("workload") else "",
        })
    return pd.DataFrame(rows)


_SUMMARY_COLS = ["run", "scheduler", "platform", "workload", "jobs_evaluated", "jobs_not_completed",
                 "mean_stretch", "max_stretch", "mean_session_stretch", "sessions", "mean_bsld",
                 "total_transfer_time", "total_file_wait", "total_load_time", "total_core_time",
                 "loads", "hits", "reuses", "makespan", *SEED_COLUMNS]


def render(output_dir: Path, results, comp, summary: pd.DataFrame, figs: dict, failed: dict, baseline: str) -> str:
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>batloc report</title><style>{_STYLE}</style></head><body>"]
    out.append(f"<h1>batloc report — {html.escape(str(output_dir))}</h1>")
    out.append(f"<p>{len(results)} run(s); baseline <code>{html.escape(baseline)}</code> "
               f"(runs with backfilling against <code>{html.escape(baseline)}</code> with backfilling when present). "
               "Only evaluated jobs count. Stretch = flow / (input size / bandwidth + run time); "
               "session stretch = sum over a user's jobs submitted within 5 minutes; "
               "improvement = baseline session stretch / scheduler session stretch.</p>")
    if failed:
        out.append("<h2 class='fail'>Runs left out of every comparison</h2><ul>")
        out += [f"<li class='fail'><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in failed.items()]
        out.append("</ul>")

    out.append("<h2>Per-run metrics</h2>")
    cols = [c for c in _SUMMARY_COLS if c in summary.columns]
    out.append(_table(summary[cols], index=False))
    out.append(khanna_section(summary))

    out.append("<h2>Reduction of time spent waiting for files (transfer + file wait) relative to the baseline, % (Tables I, II)</h2>")
    out.append(_table(comp.transfer_table))
    out.append("<h2>Reduction of total core time relative to the baseline, % (Table III)</h2>")
    out.append(_table(comp.core_time_table, fmt="{:.3f}"))

    out.append(f"<h2>User sessions faster / slower / equal (±{EQUAL_BAND:.0%}) than the baseline (Figs. 2, 7)</h2>")
    if not comp.per_run.empty:
        cols = ["group", "scheduler", "baseline", "sessions_compared", "faster", "equal", "slower",
                "mean_improvement_faster", "mean_improvement_slower", "median_improvement", "mean_improvement"]
        out.append(_table(comp.per_run[cols], fmt="{:.3f}", index=False))
    else:
        out.append(_table(None))
    for key in ("sessions_faster_slower", "improvement_boxplot", "improvement_boxplot_bf", "improvement_ecdf"):
        if key in figs:
            out.append(_img(figs[key], output_dir, key.replace("_", " ")))

    out.append("<h2>Utilisation over time and NUWT per user (seed schedulers)</h2>")
    out += [_img(path, output_dir, key) for key, path in figs.items() if key.split(":")[0] in ("utilisation", "nuwt")]

    out.append("<h2>Cluster usage (Figs. 3, 6) and Gantt charts</h2>")
    for r in results:
        out.append(f"<h3>{html.escape(r.name)}</h3>")
        for kind in ("usage", "gantt"):
            key = f"{kind}:{r.name}"
            if key in figs:
                out.append(_img(figs[key], output_dir, f"{kind} — {r.name}"))

    out.append("<h2>Runs</h2>")
    out.append(_table(_metadata_rows(results), index=False))
    for r in results:
        m = r.meta or {}
        details = {k: m.get(k) for k in ("batcmd", "schedcmd", "platform", "workload", "status", "reason",
                                         "started_at", "ended_at", "batsim_returncode", "sched_returncode")
                   if m.get(k) is not None}
        details["workload provenance"] = m.get("workload_provenance", {})
        out.append(f"<details><summary>{html.escape(r.name)}</summary><pre>{html.escape(json.dumps(details, indent=2, default=str))}</pre></details>")

    out.append("<h2>Provenance</h2><pre>")
    prov = _versions()
    prov["generated"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    out.append(html.escape("\n".join(f"{k}: {v}" for k, v in prov.items())))
    out.append("</pre></body></html>")
    return "\n".join(out)
