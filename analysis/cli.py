"""`batloc report OUTPUT_DIR`: write OUTPUT_DIR/report.html and OUTPUT_DIR/summary.csv."""

from __future__ import annotations

import argparse
import math
import signal
import sys
from pathlib import Path

from batloc.processes import signals_to


def parse_range(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition(":")
    try:
        start, end = float(lo), float(hi)
    except ValueError:
        raise argparse.ArgumentTypeError("expected START:END in seconds, e.g. 3600:7200") from None
    if not (math.isfinite(start) and math.isfinite(end) and start < end):
        raise argparse.ArgumentTypeError(f"expected finite START < END in seconds, e.g. 3600:7200, not {text!r}")
    return start, end


def bandwidth(text: str) -> float:
    """A reference bandwidth: the stretch divides by it, so only a finite positive number of bytes/s is one."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"a bandwidth is a finite number of bytes/s > 0, not {text!r}")
    return value


def _window(text: str):
    from .gantt import parse_window

    try:
        return parse_window(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def recorded_baseline(output_dir: Path) -> str:
    """The `baseline:` of the robin sweep that made the folder's runs, so that a report made again
    compares as the sweep's own did; fcfs when none is recorded or the runs disagree."""
    from .load import discover_runs

    seen = {r.meta["baseline"] for r in discover_runs(output_dir) if isinstance(r.meta.get("baseline"), str)}
    return seen.pop() if len(seen) == 1 else "fcfs"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="batloc report",
        description="Analyse every run (*_jobs.csv, with robin's run.json when present) under OUTPUT_DIR "
                    "and write report.html, summary.csv (seconds, bytes), figures/ (PNG and SVG) and per_job/ "
                    "(one CSV per run). A run that cannot be read, is incomplete or that robin's validator "
                    "found impossible is left out, named in one line; the exit status is then 1.")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--baseline", help="scheduler name of the baseline run of each group (default: the "
                                           "baseline robin's sweep recorded in its runs' run.json, else fcfs)")
    parser.add_argument("--workload", type=Path, help="workload JSON for runs without run.json")
    parser.add_argument("--platform", type=Path, help="platform XML for runs without run.json (gives the bandwidth)")
    parser.add_argument("--bandwidth", type=bandwidth, help="reference bandwidth in bytes/s for the stretch (overrides the platform's)")
    parser.add_argument("--gantt-window", type=_window, default="evaluation", metavar="WINDOW",
                        help="what the Gantt charts show: evaluation (default: the evaluation window, from its first "
                             "to its last evaluated submission), all (the whole run), or FROM:TO from the evaluation "
                             "window's start, e.g. 0:6h or 1d:36h; the same range for every run of a platform/workload")
    parser.add_argument("--gantt-range", type=parse_range, metavar="START:END",
                        help="the Gantt charts' range in seconds of simulated time (overrides --gantt-window)")
    args = parser.parse_args(argv)

    from .report import build_report
    from .runs import Inputs

    if not args.output_dir.is_dir():
        print(f"batloc report: {args.output_dir} is not a directory", file=sys.stderr)
        return 2
    if args.baseline is not None:
        from .load import discover_runs

        names = sorted({r.scheduler for r in discover_runs(args.output_dir)})
        if names and args.baseline not in names:
            print(f"batloc report: --baseline {args.baseline}: no run under {args.output_dir} has that scheduler; "
                  f"its runs' schedulers: {', '.join(names)}", file=sys.stderr)
            return 2
    came = []

    def interrupted(signum):
        came.append(signum)
        raise KeyboardInterrupt

    try:
        # SIGTERM and SIGHUP as Ctrl-C: the report written aside is dropped, the previous one left whole
        with signals_to(interrupted, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
            report = build_report(args.output_dir, baseline=args.baseline or recorded_baseline(args.output_dir),
                                  inputs=Inputs(args.workload, args.platform, args.bandwidth),
                                  gantt_range=args.gantt_range, gantt_window=args.gantt_window)
    except FileNotFoundError as exc:
        print(f"batloc report: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        signum = came[0] if came else signal.SIGINT
        print(f"batloc report: interrupted by {signal.Signals(signum).name}; the report in {args.output_dir} is "
              "whole (the previous one, unless this one was already in place)", file=sys.stderr)
        return 128 + signum
    except OSError as exc:   # a full disk, a folder without rights: the swap leaves the previous report whole
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"batloc report: cannot write the report in {args.output_dir}: {exc.strerror or exc}{where}; the "
              "previous report, if any, is whole", file=sys.stderr)
        return 1
    print(f"batloc report: wrote {report.html} and {report.summary_csv} in {report.seconds:.1f} s")
    if report.failed:
        print(f"batloc report: {len(report.failed)} run(s) left out of every comparison (named above)", file=sys.stderr)
    return 1 if report.failed else 0
