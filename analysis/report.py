"""`report.html` + `summary.csv` for every run found under an output directory.

The last stage of the pipeline: runs → per-run tables → comparisons →
figures → files. Rendering HTML is in report_html.py.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import compare, figures, gantt, khanna, load, seed_metrics, usage
from .checks import RunLeftOut
from .report_html import render
from .runs import Inputs, analyse_run


@dataclass
class Report:
    html: Path
    summary_csv: Path
    figures: dict[str, Path] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    comparison: compare.Comparison | None = None  # the tables behind the report (batloc study reads them)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def build_report(output_dir, baseline: str = "fcfs", inputs: Inputs | None = None,
                 gantt_range: tuple[float, float] | None = None, log=None) -> Report:
    t0 = time.perf_counter()
    log = log or (lambda msg: print(msg, file=sys.stderr))
    output_dir = Path(output_dir)
    results, raw, failed = gather(output_dir, inputs, log)
    if not results:
        left = f" ({len(failed)} left out, see above)" if failed else ""
        raise FileNotFoundError(f"no analysable run (*_jobs.csv) under {output_dir}{left}")

    fig_dir = output_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    khanna.add_metrics(results, raw)
    comp = compare.compare(results, baseline)
    figs = _figures(results, raw, comp, fig_dir, gantt_range)
    figs.update(seed_metrics.figures(results, fig_dir))

    summary = _summary_frame(results, comp)
    summary_csv = output_dir / "summary.csv"
    summary.to_csv(summary_csv, index=False, float_format="%.6f")

    html = output_dir / "report.html"
    html.write_text(render(output_dir, results, comp, summary, figs, failed, baseline))
    report = Report(html=html, summary_csv=summary_csv, figures=figs, failed=failed, seconds=time.perf_counter() - t0,
                    comparison=comp)
    return report


def gather(output_dir: Path, inputs: Inputs | None, log):
    """Every run under output_dir checked and analysed: (results, raw jobs.csv frames, left out).

    A run that fails a check (analysis.checks) or cannot be read is left out
    with one line naming the file, logged and kept in `left out`; the others
    are still analysed."""
    results, raw, failed = [], {}, {}
    workload_cache: dict = {}
    for run in load.discover_runs(output_dir):
        if run.name in failed or run.name in raw:   # two folders claim one name: tell them apart
            run.name = f"{run.name} ({run.directory})"
        if run.meta.get("status") == "failure":
            # robin recorded this run as failed: its outputs may be partial
            failed[run.name] = f"{run.directory / 'run.json'}: robin: {run.meta.get('reason', 'failed')}"
        else:
            try:
                result, jobs_csv = analyse_run(run, inputs, workload_cache)
                seed_metrics.extend_summary(result, run.input_path("workload") or (inputs.workload if inputs else None),
                                            jobs_csv)
            except RunLeftOut as exc:
                failed[run.name] = str(exc)
            except Exception as exc:  # one unreadable run must not hide the others, nor end in a traceback
                text = str(exc).strip()
                failed[run.name] = f"{run.jobs_csv}: {type(exc).__name__}{': ' + text.splitlines()[0] if text else ''}"
            else:
                results.append(result)
                raw[result.name] = jobs_csv
                continue
        log(f"batloc report: leaving out run {run.name}: {failed[run.name]}")
    return results, raw, failed


def _pooled_counts(improvements: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for sched, g in improvements.groupby("scheduler", sort=False):
        rows.append({"scheduler": sched, **compare.count_faster(g["improvement"])})
    return pd.DataFrame(rows, columns=["scheduler", "sessions_compared", "faster", "slower", "equal",
                                       "mean_improvement_faster", "mean_improvement_slower",
                                       "median_improvement", "mean_improvement"])


def _figures(results, raw, comp, fig_dir: Path, gantt_range) -> dict[str, Path]:
    figs = {}
    imp = comp.improvements
    is_bf = imp["backfilling"].astype(bool)
    figs["improvement_boxplot"] = figures.improvement_boxplot(
        imp[~is_bf], fig_dir / "improvement_boxplot.png", "Session stretch improvement over the baseline")
    if is_bf.any():
        figs["improvement_boxplot_bf"] = figures.improvement_boxplot(
            imp[is_bf], fig_dir / "improvement_boxplot_bf.png", "With backfilling, over the backfilling baseline")
    figs["improvement_ecdf"] = figures.improvement_ecdf(
        imp, fig_dir / "improvement_ecdf.png", "ECDF of session stretch improvements")
    figs["sessions_faster_slower"] = figures.faster_slower_bars(
        _pooled_counts(imp), fig_dir / "sessions_faster_slower.png", "User sessions faster / equal / slower (±1 %)")
    for r in results:
        slug = _slug(r.name)
        u = usage.cluster_usage(r.jobs)
        figs[f"usage:{r.name}"] = figures.cluster_usage(
            u, fig_dir / f"usage_{slug}.png", f"Cluster usage — {r.name}", r.meta.get("platform_cores"))
        jobs_csv = raw[r.name]
        rng = gantt_range or gantt.default_range(jobs_csv, u.window[0] if pd.notna(u.window[0]) else 0.0)
        figs[f"gantt:{r.name}"] = gantt.gantt(jobs_csv, fig_dir / f"gantt_{slug}.png", rng, f"Gantt — {r.name}")
    return figs


def _summary_frame(results, comp) -> pd.DataFrame:
    rows = []
    for r in results:
        rows.append({"run": r.name, "scheduler": r.scheduler, "platform": r.group[0], "workload": r.group[1],
                     "status": (r.meta or {}).get("status", ""), **r.summary})
    summary = pd.DataFrame(rows)
    if not comp.per_run.empty:
        keep = ["run", "baseline", "transfer_reduction_pct", "core_time_reduction_pct", "sessions_compared",
                "faster", "slower", "equal", "mean_improvement_faster", "mean_improvement_slower",
                "median_improvement", "mean_improvement"]
        summary = summary.merge(comp.per_run[keep], on="run", how="left")
    return summary
