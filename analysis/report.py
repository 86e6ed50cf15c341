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

import numpy as np
import pandas as pd

from . import compare, figures, gantt, job_table, khanna, load, predictions, seed_metrics, usage, workflows
from .checks import RunLeftOut, check_validation
from .report_html import render
from .runs import Inputs, analyse_run
from .swap import staged
from .style import Palette, TimeAxis


@dataclass
class Report:
    html: Path
    summary_csv: Path
    figures: dict[str, Path] = field(default_factory=dict)   # key → PNG (an SVG beside each)
    failed: dict[str, str] = field(default_factory=dict)     # run left out → one line saying why
    seconds: float = 0.0
    comparison: compare.Comparison | None = None  # the tables behind the report (batloc study reads them)
    captions: dict[str, str] = field(default_factory=dict)   # figure key → what it shows
    per_job: dict[str, Path] = field(default_factory=dict)   # run → its per-job CSV
    results: list = field(default_factory=list)   # the analysed runs (compare.RunResult; batloc study reads them)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def build_report(output_dir, baseline: str = "fcfs", inputs: Inputs | None = None,
                 gantt_range: tuple[float, float] | None = None, log=None, gantt_window="evaluation") -> Report:
    """gantt_range: START, END in seconds of simulated time; else gantt_window: `evaluation`, `all` or
    (FROM, TO) in seconds from the evaluation window's start (gantt.parse_window)."""
    t0 = time.perf_counter()
    log = log or (lambda msg: print(msg, file=sys.stderr))
    output_dir = Path(output_dir)
    results, raw, failed = gather(output_dir, inputs, log)
    if not results:
        left = f" ({len(failed)} left out, see above)" if failed else ""
        raise FileNotFoundError(f"no analysable run (*_jobs.csv) under {output_dir}{left}")

    with staged(output_dir) as work:   # written aside, swapped in whole (an interrupted report keeps the last)
        fig_dir = work / "figures"
        fig_dir.mkdir(parents=True, exist_ok=True)
        khanna.add_metrics(results, raw)
        comp = compare.compare(results, baseline)
        palette = Palette([r.scheduler for r in results],
                          baseline if any(r.scheduler == baseline for r in results) else None)
        axes = _time_axes(results)
        figs, captions = _figures(results, raw, comp, fig_dir, gantt_range, palette, axes, gantt_window)
        seed_figs = seed_metrics.figures(results, fig_dir, palette, axes)
        figs.update(seed_figs)
        captions.update(_seed_captions(seed_figs))
        per_job = _per_job_tables(results, raw, work / "per_job")
        workflows_html, wf_figs = workflows.report_section(results, raw, fig_dir)
        figs.update(wf_figs)

        summary = _summary_frame(results, comp)
        summary.to_csv(work / "summary.csv", index=False, float_format="%.6f")

        (work / "report.html").write_text(render(work, results, comp, summary, figs, failed, baseline,
                                                 captions=captions, palette=palette, per_job=per_job,
                                                 workflows_html=workflows_html, shown_as=output_dir))

    def placed(path):
        return output_dir / path.relative_to(work)

    return Report(html=output_dir / "report.html", summary_csv=output_dir / "summary.csv",
                  figures={k: placed(p) for k, p in figs.items()}, failed=failed,
                  seconds=time.perf_counter() - t0, comparison=comp, captions=captions,
                  per_job={k: placed(p) for k, p in per_job.items()}, results=results)


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
        try:
            result, jobs_csv = _analyse(run, inputs, workload_cache)
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


def _analyse(run: load.RunFiles, inputs: Inputs | None, workload_cache: dict):
    # the validator's counts say more than the failure they made robin record
    check_validation(run.meta, run.directory / "run.json", run.prefix)
    if run.meta.get("status") == "failure":   # robin's record: its outputs may be partial
        raise RunLeftOut(f"{run.directory / 'run.json'}: robin: {run.meta.get('reason', 'failed')}")
    result, jobs_csv = analyse_run(run, inputs, workload_cache)
    predictions.add_to_run(result, run.predictions_csv)
    workflows.add_to_run(result, run.input_path("workload") or (inputs.workload if inputs else None), jobs_csv,
                         run.decisions_csv if run.decisions_csv.exists() else None)
    seed_metrics.extend_summary(result, run.input_path("workload") or (inputs.workload if inputs else None), jobs_csv)
    return result, jobs_csv


def _per_job_tables(results, raw, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {r.name: job_table.write(r.jobs, raw[r.name], folder / f"{_slug(r.name)}.csv", r.meta.get("core_nodes"))
            for r in results}


def _time_axes(results) -> dict[tuple, TimeAxis]:
    """group → the time axis of its figures: from its evaluation window's start, one unit for all its runs."""
    spans: dict[tuple, list[float]] = {}
    for r in results:
        jobs = r.jobs
        ev = jobs.loc[jobs["evaluated"], "submission_time"]
        origin = float(ev.min()) if len(ev) else float("nan")
        end = float(jobs["finish_time"].max()) if jobs["finish_time"].notna().any() else float("nan")
        lo, hi, o = spans.get(r.group, [np.inf, -np.inf, np.inf])
        spans[r.group] = [min(lo, float(jobs["submission_time"].min())), max(hi, end), min(o, origin)]
    return {g: TimeAxis.for_span(o, lo, hi) for g, (lo, hi, o) in spans.items()}


def _pooled_counts(improvements: pd.DataFrame, palette: Palette) -> pd.DataFrame:
    rows = []
    for sched in palette.order(improvements["scheduler"]):
        g = improvements[improvements["scheduler"] == sched]
        rows.append({"scheduler": sched, **compare.count_faster(g["improvement"])})
    return pd.DataFrame(rows, columns=["scheduler", "sessions_compared", "faster", "slower", "equal", "unchanged",
                                       "mean_improvement_faster", "mean_improvement_slower",
                                       "median_improvement", "mean_improvement"])


_BOX = ("box from the 25th to the 75th percentile, whiskers at 12.5 % and 87.5 %, median line, mean triangle; "
        "above the dotted line at 1 the scheduler's sessions are faster (log scale: ×2 and ÷2 lie as far from 1).")


def _figures(results, raw, comp, fig_dir: Path, gantt_range, palette: Palette, axes,
             gantt_window="evaluation") -> tuple[dict, dict]:
    figs, captions = {}, {}
    imp = comp.improvements
    is_bf = imp["backfilling"].astype(bool)
    if not imp.empty:    # no pair to compare: no empty axes under "nothing to compare"
        figs["sessions_faster_slower"] = figures.faster_slower_bars(
            _pooled_counts(imp, palette), fig_dir / "sessions_faster_slower.png", "User sessions faster / equal / slower (±1 %)")
        captions["sessions_faster_slower"] = (
            "User sessions faster, equal (within ±1 %) or slower under each scheduler than under its baseline, "
            "pooled over every platform/workload; above the bars, the mean improvement of the faster and of the slower ones.")
        figs["improvement_boxplot"] = figures.improvement_boxplot(
            imp[~is_bf], fig_dir / "improvement_boxplot.png", "Session stretch improvement over the baseline", palette)
        captions["improvement_boxplot"] = ("Session stretch improvement (baseline's session stretch / the scheduler's) "
                                           "per scheduler without backfilling: " + _BOX)
        if is_bf.any():
            figs["improvement_boxplot_bf"] = figures.improvement_boxplot(
                imp[is_bf], fig_dir / "improvement_boxplot_bf.png", "With backfilling, over the backfilling baseline",
                palette)
            captions["improvement_boxplot_bf"] = ("Session stretch improvement of the schedulers with backfilling over "
                                                  "the baseline with backfilling: " + _BOX)
        figs["improvement_ecdf"] = figures.improvement_ecdf(
            imp, fig_dir / "improvement_ecdf.png", "ECDF of session stretch improvements", palette)
        captions["improvement_ecdf"] = ("Fraction of user sessions whose improvement over the baseline is at most x "
                                        "(log scale); the further right of the dotted line at 1, the faster the sessions.")

    by_group: dict[tuple, list] = {}
    for r in results:
        by_group.setdefault(r.group, []).append(r)
    for group, runs in by_group.items():
        _prediction_figure(group, runs, fig_dir, palette, figs, captions)
        axis = axes[group]
        use = {r.name: usage.cluster_usage(r.jobs) for r in runs}
        span = _usage_span(use.values(), axis)
        peaks = (max(float(np.max(u.queued.values)) for u in use.values()),
                 max(float(np.max(u.running.values)) for u in use.values()))
        first = min(runs, key=lambda r: palette.order([x.scheduler for x in runs]).index(r.scheduler))
        rng = gantt_range or gantt.default_range(raw[first.name], first.jobs, gantt_window)
        for r in runs:
            slug = _slug(r.name)
            cores = r.meta.get("platform_cores")
            figs[f"usage:{r.name}"] = figures.cluster_usage(
                use[r.name], fig_dir / f"usage_{slug}.png", f"Cluster usage — {r.name}", axis, cores, span, peaks)
            captions[f"usage:{r.name}"] = (
                f"Cores queued (top) and held (bottom) over time in run {r.name}: all jobs in blue, evaluated jobs in "
                "vermilion (drawn over the blue: where only vermilion shows, every job is evaluated), cores held "
                "while loading or waiting for a file in grey; dashed line: the platform's cores; orange lines: "
                "the evaluation window. Same axes for every run of its platform/workload.")
            figs[f"gantt:{r.name}"] = gantt.gantt(
                raw[r.name], r.jobs, fig_dir / f"gantt_{slug}.png", rng, f"Gantt — {r.name}", axis, cores,
                r.meta.get("core_nodes"))
            shown = TimeAxis.for_span(axis.origin, *rng)
            a, b = float(shown(rng[0])), float(shown(rng[1]))
            parts = {part: name for part, (name, _) in gantt.PARTS.items()}
            captions[f"gantt:{r.name}"] = (
                f"The jobs of run {r.name} on the compute cores from {a:.2f} to {b:.2f} {shown.unit} after the "
                "evaluation window's start (the same range for every run of its platform/workload; "
                "batloc report --gantt-window to choose it): computing in "
                f"{parts['evaluated']} (context jobs, not evaluated, {parts['context']}), jobs killed at their "
                f"walltime {parts['killed']}, cores held for a file {parts['loading']}.")
    return figs, captions


def _prediction_figure(group, runs, fig_dir: Path, palette: Palette, figs: dict, captions: dict) -> None:
    runs = predictions.with_predictions(runs)
    if not runs:
        return
    label = compare.group_label(group)
    key = f"predictions:{label}"
    figs[key], linthresh = figures.prediction_error_ecdf(
        {r.scheduler: predictions.errors_in_hours(r, "first") for r in runs},
        {r.scheduler: predictions.errors_in_hours(r, "last") for r in runs},
        fig_dir / f"predictions_{_slug(group[0] + '_' + group[1])}.png", f"Predicted start error — {label}", palette)
    scale = (f"symmetric log scale, linear within ±{linthresh:g} h" if linthresh is not None else "linear scale")
    captions[key] = (f"Fraction of the evaluated jobs of {label} whose actual start came at most x hours after the "
                     "start predicted when their scheduler first placed them (solid) and the last one before the pass "
                     "that started them (dashed), one colour per scheduler; left of the dotted line at 0 they started "
                     f"earlier than predicted, right of it later ({scale}).")


def _usage_span(usages, axis: TimeAxis) -> tuple[float, float]:
    lo = min(float(u.queued.times[0]) if len(u.queued.times) else np.inf for u in usages)
    hi = max(float(u.running.times[-1]) for u in usages)
    lo = min(lo, min(float(u.running.times[0]) for u in usages))
    return float(axis(lo)), float(axis(hi))


def _seed_captions(figs: dict) -> dict[str, str]:
    out = {}
    for key in figs:
        kind, _, group = key.partition(":")
        if kind == "utilisation":
            out[key] = (f"Allocated cores over the platform's cores in 50 equal windows from the first submission to "
                        f"the last finish, per run of {group}; time from the evaluation window's start.")
        elif kind == "nuwt":
            out[key] = (f"Normalised user wait time (seconds waited per second of CPU) of each user, users sorted by "
                        f"it, per run of {group} (symmetric log scale): the flatter and lower, the fairer.")
    return out


def _summary_frame(results, comp) -> pd.DataFrame:
    rows = []
    for r in results:
        rows.append({"run": r.name, "scheduler": r.scheduler, "platform": r.group[0], "workload": r.group[1],
                     "status": (r.meta or {}).get("status", ""), **r.summary})
    summary = pd.DataFrame(rows)
    if not comp.per_run.empty:
        keep = ["run", "baseline", "transfer_reduction_pct", "core_time_reduction_pct", "sessions_compared",
                "faster", "slower", "equal", "unchanged", "at_once", "mean_improvement_faster",
                "mean_improvement_slower", "median_improvement", "mean_improvement"]
        summary = summary.merge(comp.per_run[keep], on="run", how="left")
    return summary
