"""How far the predicted start times were from the actual starts (issue 23; contract §6 "Predicted starts").

A planning scheduler writes `<prefix>_predictions.csv`: for each started job,
the start planned when a pass first placed it (what Slurm's `squeue --start`
would have told its user then), when that pass ran, the start planned just
before the pass that started it, and when its cores were taken. Per run, over
the evaluated jobs that have a row (the workload's `evaluated` field, as every
run total):
- error = actual start − predicted start, in seconds: > 0 the job started
  later than predicted, < 0 earlier, 0 exactly (same microsecond: the file's
  resolution); for the first prediction and for the last one;
- its median, and the smallest |error| that 95 % of the jobs stay within
  (nearest rank, so that the sentence "95 % started within x" holds exactly);
- delay = predicted_at − submission: how long a job waited for its first
  prediction (0 unless a pass stopped before reaching it; always 0 with the
  option `predictions: true`).
Runs without the file (stock schedulers, the file-sharing family, the staging
proxy) are left out of this section only; so is a run whose file cannot be
read (a value that is no time, a column missing), named with the file and line
in the section's note. A file that is not whole — cut short in a line, or at
a line's end so that jobs that took cores have no row, or naming a job the
run's workload does not have — is checked as jobs.csv is: the run is left out
of the report (``checks.RunLeftOut``), the file named in one line.
"""

from __future__ import annotations

import csv
import html
import math
from pathlib import Path

import numpy as np
import pandas as pd

from batloc.outputs import PREDICTIONS_COLUMNS, read_rows

from .checks import RunLeftOut, check_text
from .compare import group_label
from .tables import HOUR, Column, frame, to_html

TIMES = [c for c in PREDICTIONS_COLUMNS if c != "job_id"]
WITHIN = 95   # the percentile of |error| the report gives
KINDS = {"first": ("start_error", "at first placement"), "last": ("last_start_error", "last before its start")}


class PredictionsUnreadable(Exception):
    """A predictions file the section cannot use; the message is one line naming it (and the line at fault)."""


def read(path) -> pd.DataFrame | None:
    """The file as job_id + float columns (NaN where a field is empty), or None when the run wrote none."""
    path = Path(path)
    if not path.exists():
        return None
    check_text(path)   # a file cut short would end in a time cut short, read as another time (RunLeftOut)
    try:
        names, rows = read_rows(path, line_key="_line")
    except (OSError, csv.Error) as exc:
        text = str(exc).strip()
        raise PredictionsUnreadable(f"{path}: cannot read: {text.splitlines()[0] if text else type(exc).__name__}") from None
    missing = [c for c in PREDICTIONS_COLUMNS if c not in names]
    if missing:
        raise PredictionsUnreadable(f"{path}: not a predictions file (no column {', '.join(missing)})")
    out = {"job_id": [r["job_id"] for r in rows]}
    for col in TIMES:
        values = pd.to_numeric(pd.Series([r[col] for r in rows], dtype=object), errors="coerce").to_numpy(dtype=float)
        for i in np.flatnonzero(np.isnan(values)):   # empty is a missing time; anything else an error
            r = rows[i]
            if (r[col] or "").strip():
                raise PredictionsUnreadable(f"{path}: line {r['_line']}: {col} {r[col]!r} is not a time "
                                            f"(job {r['job_id']})")
        out[col] = values
    frame = pd.DataFrame(out, columns=list(PREDICTIONS_COLUMNS))
    frame.attrs["lines"] = [r["_line"] for r in rows]
    return frame


def check_rows(path, predictions: pd.DataFrame, jobs: pd.DataFrame) -> None:
    """One row per workload job that took cores (contract §6), and no row for a job the run does not have;
    RunLeftOut otherwise, naming the file (and the line)."""
    keys = predictions["job_id"].str.split("!", n=1).str[-1].tolist()
    known = set(jobs["job_id"].astype(str))
    lines = predictions.attrs.get("lines") or [None] * len(keys)
    for key, full, line in zip(keys, predictions["job_id"], lines):
        if key not in known:
            raise RunLeftOut(f"{path}: line {line}: job {full} is not a job of the run's workload: the file "
                             "belongs to another run")
    have = set(keys)
    took_cores = jobs.loc[jobs["reservation_start"].notna(), "job_id"].astype(str).tolist()
    missing = [j for j in took_cores if j not in have]
    if missing:
        raise RunLeftOut(f"{path}: rows for {len(took_cores) - len(missing)} of the {len(took_cores)} jobs that "
                         f"took cores (no row for job {missing[0]}{' and others' if len(missing) > 1 else ''}): "
                         "the file is truncated or the scheduler lost rows")


def attach(jobs: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """The per-job table (metrics.per_job) with the run's predictions beside each job (NaN without a row):
    predicted_at, predicted_start, last_predicted_start, start_error and last_start_error (actual − predicted)
    and prediction_delay (predicted_at − submission), in seconds."""
    # astype: a file without rows (every job rejected) reads as an empty float column
    pred = predictions.assign(key=predictions["job_id"].astype(str).str.split("!", n=1).str[-1])
    pred = pred.drop_duplicates("key", keep="last").set_index("key").reindex(jobs["job_id"].astype(str))
    out = jobs.copy()
    for col in ("predicted_at", "predicted_start", "last_predicted_start"):
        out[col] = pred[col].to_numpy(dtype=float)
    start = pred["starting_time"].to_numpy(dtype=float)
    out["start_error"] = start - out["predicted_start"].to_numpy(dtype=float)
    out["last_start_error"] = start - out["last_predicted_start"].to_numpy(dtype=float)
    out["prediction_delay"] = out["predicted_at"].to_numpy(dtype=float) - pred["submission_time"].to_numpy(dtype=float)
    return out


def _nearest_rank(values: np.ndarray, pct: float) -> float:
    return float(np.percentile(values, pct, method="inverted_cdf")) if len(values) else math.nan


def _microseconds(seconds: np.ndarray) -> np.ndarray:
    """Whole microseconds: the files' times have six decimals, so a difference is a whole number of them."""
    return np.rint(seconds * 1e6)


def summary(jobs: pd.DataFrame) -> dict:
    """Run totals (seconds, fractions) over the evaluated jobs with a prediction: predicted_jobs, first_prediction_*,
    last_prediction_*."""
    ev = jobs[jobs["evaluated"].astype(bool) & jobs["predicted_start"].notna()]
    out = {"predicted_jobs": int(len(ev))}
    for kind, (col, _) in KINDS.items():
        err = ev[col].to_numpy(dtype=float)
        err = err[np.isfinite(err)]
        us = _microseconds(err)
        n = len(err)
        out.update({
            f"{kind}_prediction_later": float((us > 0).sum() / n) if n else math.nan,
            f"{kind}_prediction_earlier": float((us < 0).sum() / n) if n else math.nan,
            f"{kind}_prediction_exact": float((us == 0).sum() / n) if n else math.nan,
            f"{kind}_prediction_median_error": float(np.median(err)) if n else math.nan,
            f"{kind}_prediction_within": _nearest_rank(np.abs(us) / 1e6, WITHIN),
        })
    delay = ev["prediction_delay"].to_numpy(dtype=float)
    delay = delay[np.isfinite(delay)]
    out.update({
        "first_prediction_at_submission": float((_microseconds(delay) == 0).sum() / len(delay)) if len(delay) else math.nan,
        "first_prediction_median_delay": float(np.median(delay)) if len(delay) else math.nan,
        "first_prediction_delay_within": _nearest_rank(delay, WITHIN),
    })
    return out


def add_to_run(result, path) -> None:
    """Read a run's predictions (if any) into its per-job table and summary; a file it cannot read is noted in meta,
    one that is not whole leaves the run out (RunLeftOut)."""
    result.summary["has_predictions"] = False
    try:
        pred = read(path)
    except PredictionsUnreadable as exc:
        result.meta["predictions_problem"] = str(exc)
        return
    if pred is None:
        return
    check_rows(path, pred, result.jobs)
    result.jobs = attach(result.jobs, pred)
    result.summary["has_predictions"] = True
    result.summary.update(summary(result.jobs))


def with_predictions(results) -> list:
    return [r for r in results if r.summary.get("has_predictions")]


def errors_in_hours(run, kind: str = "first") -> np.ndarray:
    """The evaluated jobs' errors of the run's `kind` of prediction, in hours (for the figure)."""
    jobs = run.jobs
    col = KINDS[kind][0]
    err = jobs.loc[jobs["evaluated"].astype(bool), col].to_numpy(dtype=float)
    return err[np.isfinite(err)] / HOUR


_COLUMNS = [
    Column("predicted_jobs", "jobs", integer=True),
    Column("later", "later than predicted (%)", 100), Column("earlier", "earlier (%)", 100),
    Column("exact", "exactly (%)", 100),
    Column("median_error", "median error (h)", 1 / HOUR),
    Column("within", f"{WITHIN} % within ± (h)", 1 / HOUR),
    Column("at_submission", "predicted at submission (%)", 100),
    Column("median_delay", "median delay of the prediction (h)", 1 / HOUR),
    Column("delay_within", f"{WITHIN} % predicted within (h)", 1 / HOUR),
]


def _rows(runs, order) -> list[dict]:
    rows = []
    for r in sorted(runs, key=lambda r: order.index(r.scheduler) if r.scheduler in order else len(order)):
        s = r.summary
        for kind, (_, label) in KINDS.items():
            row = {"variant": r.scheduler if kind == "first" else "", "prediction": label,
                   "predicted_jobs": s.get("predicted_jobs")}
            for key in ("later", "earlier", "exact", "median_error", "within"):
                row[key] = s.get(f"{kind}_prediction_{key}")
            if kind == "first":   # when the last prediction was made is not in the file
                row.update(at_submission=s.get("first_prediction_at_submission"),
                           median_delay=s.get("first_prediction_median_delay"),
                           delay_within=s.get("first_prediction_delay_within"))
            rows.append(row)
    return rows


NOTE = ("A job's predicted start is the start its scheduler planned for it, as Slurm's <code>squeue --start</code> "
        "tells a user: when a pass first placed it, and the last one before the pass that started it. "
        "Error = actual start (cores taken) − predicted start, over the evaluated jobs that started: "
        "later than predicted when positive, exactly when within the same microsecond. "
        f"{WITHIN} % within ± x: {WITHIN} % of the jobs started at most x hours from their prediction. "
        "The delay of the prediction is how long after its submission a job was first placed (a pass stops "
        "once no later job could start now, so a job deep in a busy queue is placed later; the scheduler option "
        "<code>predictions: true</code> places every job at its submission).")


def html_section(results, order, figures_html: dict) -> str:
    """The section: a table per platform/workload (and its figure, from figures_html: group → HTML), then the note
    on the runs left out of it."""
    out = ["<h2>Predicted start times: how far the actual starts were</h2>", f"<p class='note'>{NOTE}</p>"]
    used = with_predictions(results)
    groups: dict[tuple, list] = {}
    for r in used:
        groups.setdefault(r.group, []).append(r)
    for group in sorted(groups):
        out.append(f"<h3>{html.escape(group_label(group))}</h3>")
        table = frame(_rows(groups[group], order), _COLUMNS, [("variant", "variant"), ("prediction", "prediction")])
        out.append(to_html(table, keep=2))
        if group in figures_html:
            out.append(figures_html[group])
    if not used:
        out.append("<p class='note'><em>No run wrote predicted starts.</em></p>")
    left = [r for r in results if not r.summary.get("has_predictions")]
    if left:
        items = []
        for r in left:
            problem = (r.meta or {}).get("predictions_problem")
            why = html.escape(problem) if problem else "no predictions file"
            items.append(f"<li>{html.escape(r.name)} ({html.escape(r.scheduler)}): {why}</li>")
        out.append("<p class='note'>Left out of this section (only the planning schedulers write "
                   "<code>&lt;prefix&gt;_predictions.csv</code>; stock schedulers, the file-sharing family and the "
                   "staging proxy do not):</p><ul class='note'>" + "".join(items) + "</ul>")
    return "\n".join(out)
