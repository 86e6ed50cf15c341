"""A report written aside and swapped in whole: an interrupted `batloc report` leaves the previous one as it was.

The report's files (`report.html`, `summary.csv`, `figures/`, `per_job/`)
are written into a folder of their own beside them, `.report.<pid>.tmp`; only
once all are written does each replace its predecessor, by renames, with
SIGINT, SIGTERM and SIGHUP held back until the last one is done (a signal that came
meanwhile is raised right after). Ctrl-C while the report is drawn, or an
error, removes the folder and leaves the previous report whole; a folder left
by a report killed outright is removed by the next one.
"""

from __future__ import annotations

import os
import shutil
import signal
from contextlib import contextmanager
from pathlib import Path

from batloc.processes import signals_to

ITEMS = ("figures", "per_job", "summary.csv", "report.html")   # report.html last: what a reader opens


@contextmanager
def staged(output_dir: Path):
    """The folder to write the report's items into; they replace the output directory's on leaving."""
    output_dir = Path(output_dir)
    _remove_left_behind(output_dir)
    stage = output_dir / f".report.{os.getpid()}.tmp"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
        with _signals_held():
            _swap(stage, output_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _swap(stage: Path, output_dir: Path) -> None:
    old = stage / "previous"
    old.mkdir()
    for item in ITEMS:
        new = stage / item
        if not new.exists():
            continue
        if (output_dir / item).exists():
            os.rename(output_dir / item, old / item)
        os.rename(new, output_dir / item)


@contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP wait until the block is done (only the main thread sees Python's signal
    handlers)."""
    came = []
    try:
        with signals_to(came.append, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
            yield
    finally:
        if came:
            signal.raise_signal(came[0])


def _remove_left_behind(output_dir: Path) -> None:
    """The folders of reports killed while they were written (their process is gone)."""
    for folder in output_dir.glob(".report.*.tmp"):
        pid = folder.name.split(".")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
