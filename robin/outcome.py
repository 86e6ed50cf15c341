"""What became of one run, in the words both executors (robin.sweep's threads, robin.dask_sweep's
Dask tasks) give the sweep's tally and display: its status and the line that says why it failed."""

from __future__ import annotations

from . import process as robin_process
from . import runs as robin_runs
from .validation import summary

SUCCESS, INVALID, FAILED, STOPPED, NOT_STARTED = "success", "invalid", "failed", "stopped", "not started"


def outcome_status(outcome, stop=None) -> str:
    if outcome is None:
        return NOT_STARTED
    if outcome.success:
        return SUCCESS
    if outcome.invalid:
        return INVALID
    if (stop or robin_process.STOP).is_set():
        return STOPPED
    return FAILED


def outcome_message(spec, outcome) -> str:
    if outcome.invalid:
        return (f"robin: run {spec.name} INVALID: {summary(outcome.validation)} "
                f"(outputs kept; every violation in {spec.output_dir / 'log' / 'validate.txt'})")
    return robin_runs.failure_message(spec, outcome)
