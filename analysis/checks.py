"""Whether a run may be used at all, checked before any number is drawn from it.

A run is left out of the report, with one line naming the file at fault,
when its jobs.csv is not text, ends in the middle of a line (a copy or a
write cut short), or lacks rows for some of its workload's jobs (a run,
even one that failed, writes one row per job, contract §5); or when robin's
validator found its schedule impossible (run.json's `validation`). Taking
such a run's numbers would compare schedules that never happened, or count
missing rows as jobs that never completed. A verdict is robin's on the files
it validated: outputs or inputs changed since (run.json's digests,
``run_folder``) leave the run out too.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from batloc.locality.staging import STAGE_WORKLOAD

from . import run_folder


class RunLeftOut(Exception):
    """A run the report must not use; the message is one line that names the file."""


def check_text(path) -> None:
    """jobs.csv exists, is UTF-8 text and ends with a whole line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunLeftOut(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not data:
        raise RunLeftOut(f"{path}: empty file")
    nul = data.find(b"\0")
    if nul >= 0:
        raise RunLeftOut(f"{path}: not a CSV file (binary data at byte {nul})")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunLeftOut(f"{path}: not a CSV file (not UTF-8 text at byte {exc.start})") from None
    if not data.endswith(b"\n"):
        line = data.count(b"\n") + 1
        raise RunLeftOut(f"{path}: line {line} is cut short (no end of line): the file is truncated")


def check_rows(path, jobs_csv: pd.DataFrame, workload_ids) -> None:
    """Every workload job has its row in jobs.csv."""
    own = set(jobs_csv.loc[jobs_csv["workload_name"] != STAGE_WORKLOAD, "job_id"])
    wanted = list(dict.fromkeys(str(j) for j in workload_ids))
    missing = [j for j in wanted if j not in own]
    if missing:
        raise RunLeftOut(f"{path}: rows for {len(wanted) - len(missing)} of the workload's {len(wanted)} jobs "
                         f"(no row for job {missing[0]}{' and others' if len(missing) > 1 else ''}): "
                         "the file is truncated or the run lost jobs")


def check_validation(meta: dict, run_json, prefix=None) -> None:
    """robin's verdict in run.json: a run with violations is left out, with their counts; so is a run whose
    outputs at `prefix` (the files the report reads) are not the ones robin validated, or whose inputs
    changed since it read them (run.json's digests): the verdict is not theirs."""
    verdict = meta.get("validation")
    if prefix is not None and isinstance(verdict, dict) and verdict.get("valid") is True:
        changed = run_folder.changed_outputs(prefix, verdict.get("outputs"))
        changed += run_folder.changed_config(meta)
        changed += run_folder.changed_inputs(Path(run_json).parent, meta)
        if changed:
            raise RunLeftOut(f"{changed[0]}{f' (and {len(changed) - 1} more)' if len(changed) > 1 else ''}: "
                             f"run.json's verdict is not this run's (batloc validate {Path(run_json).parent})")
    if not isinstance(verdict, dict) or verdict.get("valid") is not False:
        return
    counts = verdict.get("violations") or {}
    detail = ", ".join(f"{kind} {n}" for kind, n in counts.items()) if isinstance(counts, dict) else str(counts)
    raise RunLeftOut(f"{run_json}: impossible schedule according to the validator"
                     + (f" ({detail})" if detail else ""))


def validated(meta: dict) -> str:
    """'yes', 'no' or 'not checked': what run.json says of the run's validation."""
    verdict = meta.get("validation")
    if not isinstance(verdict, dict) or "valid" not in verdict:
        return "not checked"
    return "yes" if verdict["valid"] is True else "no"
