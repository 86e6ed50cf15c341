"""A sweep: its runs on robin's threads or on Dask, one tally, one display, then the report.

What a sweep does, whichever executor runs it:
1. lock OUTPUT_DIR (robin.lock): a second robin on the same folder is refused;
2. sort the runs: complete ones (same configuration, same input contents: robin.identity)
   are kept, changed ones re-run (or, with `refuse_changed`, stop the sweep naming the file);
3. compile the planning core once if a run needs it and its cache is cold (robin.kernel);
4. run the rest, `jobs` at a time on threads (here) or as Dask tasks (robin.dask_sweep);
   each run is validated as it ends (robin.runs.execute), and a run with violations counts
   as failed, its outputs kept;
5. show progress: runs done/failed, and each running run's simulated time, last submission and jobs
   ended (the engine's progress file), and about how much of the sweep is done;
6. write the report; exit status 0 iff every run succeeded and is valid.
"""

from __future__ import annotations

import shutil
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from batloc.processes import signals_to

from . import dask_sweep, kernel
from . import process as robin_process
from . import runs as robin_runs
from .lock import FolderInUse, OutputLock
from .outcome import FAILED, INVALID, NOT_STARTED, STOPPED, SUCCESS, outcome_message, outcome_status
from .process import stopping_on_signals

LOG_EVERY = 60.0      # seconds between two progress lines when stderr is not a terminal
DRAW_EVERY = 1.0      # seconds between two redraws on a terminal


@dataclass
class Tally:
    """What became of a sweep's runs (names), the same whichever executor ran them."""
    succeeded: list = field(default_factory=list)
    failed: list = field(default_factory=list)       # process failures, stops, and invalid runs
    invalid: list = field(default_factory=list)      # of which: both processes succeeded, the schedule is impossible
    not_started: list = field(default_factory=list)

    @property
    def finished(self) -> int:
        return len(self.succeeded)


class SweepError(Exception):
    """A sweep refused before any run starts: one line for the user."""


@dataclass(frozen=True)
class RunProgress:
    """A running run's engine's progress file (engine.progress): simulated time, last submission, jobs."""
    now: float
    last_submission: float
    done: int
    total: int

    @property
    def share(self) -> float:
        """The share of the workload's jobs that ended; below 1 while the run goes on, whatever the clock
        says (simulated time runs past the last submission while the last jobs run)."""
        return min(self.done / self.total, 0.99) if self.total > 0 else 0.0

    def text(self) -> str:
        return (f"t={_days(self.now)} (last submission {_days(self.last_submission)}), "
                f"{min(self.done, self.total)}/{self.total} jobs ended ({int(100 * self.share)}%)")


def read_progress(spec) -> RunProgress | None:
    """A running run's progress, or None (not started, not the embedded engine, half written)."""
    try:
        now, horizon, done, total = spec.progress_path.read_text().split()
        return RunProgress(float(now), float(horizon), int(done), int(total))
    except (OSError, ValueError):
        return None


def _days(seconds: float) -> str:
    return f"{seconds / 86400:.1f}d" if seconds >= 86400 else f"{seconds / 3600:.1f}h"


def in_notebook(stream) -> bool:
    """Whether `stream` is a Jupyter kernel's output, which draws a carriage return as a terminal does (but not
    a terminal's escape sequences)."""
    return type(stream).__module__.split(".")[0] == "ipykernel"


class Display:
    """The sweep's state on stderr: redrawn in place on a terminal or in a Jupyter notebook, a line per change
    (and one a minute while runs are running) otherwise."""

    WIDTH = 30

    def __init__(self, specs, stream=None, quiet=False):
        self.specs = list(specs)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.notebook = not self.tty and in_notebook(self.stream)
        self.drawn = 0   # the length of the line drawn in a notebook, which the next one overwrites
        self.quiet = quiet
        self.tally = Tally()
        self.ended = set()
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    # -- state ---------------------------------------------------------------
    def line(self) -> str:
        t, total = self.tally, len(self.specs)
        done = len(t.succeeded) + len(t.failed)
        filled = self.WIDTH * done // max(1, total)
        text = (f"robin: [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} runs: "
                f"{len(t.succeeded)} done, {len(t.failed)} failed")
        if t.invalid:
            text += f" ({len(t.invalid)} invalid)"
        running, share = [], 0.0
        for spec in self.specs:
            if spec.name in self.ended:
                share += 1.0
                continue
            p = read_progress(spec)
            if p is None:
                continue
            share += p.share
            running.append(f"{spec.name} {p.text()}")
        if running:
            # each run weighs the same: ended ones 1, running ones their share of jobs ended
            text += f"; sweep about {int(100 * share / max(1, total))}% done; running: " + ", ".join(running)
        return text

    def show(self) -> None:
        if self.quiet:
            return
        with self.lock:
            if self.tty:   # one screen line, or the next redraw cannot erase it
                width = shutil.get_terminal_size().columns - 1
                text = self.line()
                self.stream.write("\r\033[K" + (text if len(text) <= width else text[:width - 1] + "…"))
            elif self.notebook:   # spaces erase what is left of a longer line before
                text = self.line()
                self.stream.write("\r" + text.ljust(self.drawn))
                self.drawn = len(text)
            else:
                self.stream.write(self.line() + "\n")
            self.stream.flush()

    def say(self, text: str, stream=None) -> None:
        """A message of its own, on a line of its own, even while the bar is drawn."""
        with self.lock:
            if self.tty and not self.quiet:
                self.stream.write("\r\033[K")
            elif self.notebook and self.drawn and not self.quiet:
                self.stream.write("\r" + " " * self.drawn + "\r")
                self.stream.flush()
                self.drawn = 0
            print(text, file=stream or sys.stdout, flush=True)

    def record(self, spec, status: str, wall: float = 0.0, message: str = "") -> None:
        """One run's end, from either executor."""
        t = self.tally
        if status == NOT_STARTED:
            t.not_started.append(spec.name)
            return
        self.ended.add(spec.name)
        if status == SUCCESS:
            t.succeeded.append(spec.name)
            if not self.quiet:
                self.say(f"robin: {spec.name} succeeded in {wall:.1f} s")
        else:
            t.failed.append(spec.name)
            if status == INVALID:
                t.invalid.append(spec.name)
            if message:
                self.say(message, sys.stderr)
        self.show()

    # -- the periodic redraw ---------------------------------------------------
    def __enter__(self):
        if not self.quiet and self.specs:
            self.show()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def _loop(self):
        period = DRAW_EVERY if self.tty or self.notebook else LOG_EVERY
        while not self._stop.wait(period):
            if any(read_progress(s) is not None for s in self.specs if s.name not in self.ended):
                self.show()

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if (self.tty or self.notebook) and not self.quiet and self.specs:
            self.stream.write("\n")
            self.stream.flush()


def run_threads(todo, jobs: int, display: Display) -> None:
    """The runs on this machine, `jobs` at a time."""

    def one(spec):
        if robin_process.STOP.is_set():
            return spec, None   # stopped before its turn
        robin_runs.bind_commands(spec)
        return spec, robin_runs.execute(spec, log=lambda msg: None)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, s) for s in todo]
        for fut in as_completed(futures):
            spec, outcome = fut.result()
            status = outcome_status(outcome)
            message = outcome_message(spec, outcome) if status in (INVALID, FAILED, STOPPED) else ""
            display.record(spec, status, outcome.wall_seconds if outcome else 0.0, message)


# A sweep this large is checked with a line saying so, and one every PLAN_EVERY seconds
PLAN_SAID, PLAN_EVERY = 1000, 5.0


def plan(specs, force: bool, refuse_changed: bool, log, stop=None) -> tuple[list, list]:
    """(complete runs, runs to do: all of them with `force`); SweepError if a complete run's inputs
    changed and that is refused. `stop` (robin.process.STOP): once set, planning ends where it is."""
    complete, todo = [], []
    if len(specs) >= PLAN_SAID:   # each run's digests and run.json are read: seconds for thousands of runs
        log(f"robin: checking which of the sweep's {len(specs)} runs are complete")
    said = time.monotonic()
    for number, spec in enumerate(specs, 1):
        if stop is not None and stop.is_set():
            break
        if time.monotonic() - said > PLAN_EVERY:
            log(f"robin: checked {number - 1}/{len(specs)} runs")
            said = time.monotonic()
        state, detail = spec.state()
        if state == "changed" and not force:
            if refuse_changed:
                raise SweepError(f"run {spec.name}: its inputs changed since it ran: {detail} "
                                 "(without --refuse-changed robin re-runs it)")
            log(f"robin: {spec.name}: inputs changed since it ran ({detail}): running it again")
        if state == "complete":
            complete.append(spec)
            if not force:
                robin_runs.refresh_analysis_keys(spec)
        if force or state != "complete":
            todo.append(spec)
    return complete, todo


def run_sweep(desc: dict, jobs: int, force: bool, report: bool, log, dask: str | None = None,
              refuse_changed: bool = False, quiet: bool = False) -> int:
    """Run a sweep description (robin.description); the exit status robin would give.

    `dask`: None runs on this machine's threads; else a Dask scheduler address or local[:N].
    """
    try:
        return execute_sweep(desc, jobs, force, report, log, dask, refuse_changed, quiet)
    except SweepError as exc:
        print(f"robin: {exc}", file=sys.stderr)
        return 1


def execute_sweep(desc: dict, jobs: int, force: bool, report: bool, log, dask: str | None = None,
                  refuse_changed: bool = False, quiet: bool = False) -> int:
    """`run_sweep`, a sweep refused (its folder in use or not writable, …) raising SweepError in one line
    (batloc.api's errors); the exit status robin would give otherwise."""
    out, specs, baseline = robin_runs.sweep_runs(desc)
    try:
        with OutputLock(out), stopping_on_signals():
            return _sweep(out, specs, baseline, jobs, force, report, log, dask, refuse_changed, quiet)
    except FolderInUse as exc:
        raise SweepError(str(exc)) from None
    except OSError as exc:
        raise SweepError(f"cannot write into {out}: {exc.strerror or exc}") from None


def _interrupt(signum):
    robin_process.STOP.set(signum)
    raise KeyboardInterrupt


def run_alone(spec, log, quiet: bool = False):
    """One run of robin's single-run form (robin.runs.single_run), its folder locked, shown as a sweep's
    runs are; its Outcome. FolderInUse, or OSError when the folder cannot be written."""
    with OutputLock(spec.output_dir), stopping_on_signals(), Display([spec], quiet=quiet):
        return robin_runs.execute(spec, log=log)


def _sweep(out, specs, baseline, jobs, force, report, log, dask, refuse_changed, quiet) -> int:
    if dask:
        try:        # before anything is shown: a bad --dask is one line
            dask_sweep.local_workers(dask, jobs)
            dask_sweep.check_installed()
        except (dask_sweep.DaskUnavailable, ValueError) as exc:
            raise SweepError(str(exc)) from None
    complete, todo = plan(specs, force, refuse_changed, log, robin_process.STOP)
    if robin_process.STOP.is_set():
        print(f"robin: sweep {robin_process.STOP.reason} while it was planned: no run started", file=sys.stderr)
        return 128 + (robin_process.STOP.signum or 15)
    names = list(dict.fromkeys(s.meta["scheduler"]["name"] for s in specs))
    if report and baseline not in names:     # only the default can be absent: a named one is checked
        log(f"robin: no scheduler of the sweep is the baseline {baseline} (the default): the report will show "
            f"each run's figures and compare none; `baseline: NAME` in a sweep file (--baseline) names one of "
            f"{', '.join(names)}")
    where = f"on Dask ({dask})" if dask else f"{max(1, jobs)} at a time"
    log(f"robin: sweep of {len(specs)} runs in {out} ({len(complete)} already complete, "
        f"{len(todo)} to run, {where})")
    for spec in todo:       # a progress file left by an earlier invocation is not this run's
        try:
            spec.progress_path.unlink()
        except OSError:
            pass
    kernel.prepare([s.meta.get("scheduler") or {} for s in todo], log,
                   lambda msg: print(msg, file=sys.stderr, flush=True), robin_process.STOP)
    with Display(todo, quiet=quiet) as display:
        if dask:
            try:
                dask_sweep.run(todo, dask, jobs, log, display)
            except (dask_sweep.DaskUnavailable, ValueError) as exc:
                display.say(f"robin: {exc}", sys.stderr)
                return 1
        elif todo:
            run_threads(todo, jobs, display)
    tally = display.tally
    if robin_process.STOP.is_set():
        print(f"robin: sweep {robin_process.STOP.reason}: {tally.finished} run(s) finished and kept, "
              f"{len(tally.failed)} stopped or failed, {len(tally.not_started)} not started; no report",
              file=sys.stderr)
        return 128 + (robin_process.STOP.signum or 15)
    if report:
        from batloc.analysis.report import build_report

        try:
            with signals_to(_interrupt, robin_process.stop_signals()):   # the report is interrupted, not waited for
                rep = build_report(out, baseline=baseline)
            log(f"robin: report written to {rep.html} ({rep.seconds:.1f} s)")
        except FileNotFoundError as exc:
            print(f"robin: no report: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"robin: sweep {robin_process.STOP.reason} while its report was written: {tally.finished} run(s) "
                  f"finished and kept; the report in {out} is whole (the previous one, unless this one was "
                  f"already in place; `batloc report {out}` writes it)",
                  file=sys.stderr)
            return 128 + (robin_process.STOP.signum or signal.SIGINT)
    if tally.failed:
        invalid = f" ({len(tally.invalid)} invalid: {', '.join(sorted(tally.invalid))})" if tally.invalid else ""
        print(f"robin: {len(tally.failed)} of {len(specs)} runs failed: {', '.join(sorted(tally.failed))}{invalid}",
              file=sys.stderr)
        return 1
    return 0
