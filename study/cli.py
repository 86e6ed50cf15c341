"""`batloc study paper`: Gonthier et al.'s §V study on a public trace, in one command.

  batloc study paper                       # experiments/paper-study.yaml: 2 weeks x 10 variants
  batloc study paper --full                # the paper's 12 weeks
  batloc study paper --dask local          # the runs on a Dask LocalCluster (or --dask tcp://host:8786)
  batloc study paper my-study.yaml --trace SDSC-SP2-1998-4.2-cln.swf.gz --options '{"scheduling_period": 30}'

Steps: convert the trace with the paper's file rule, scale Rackham to its
machine, draw the evaluation weeks and cut them with their context
(batloc.study.prepare), run the variants as a robin sweep (complete runs are
kept), build the report (Tables I–III, boxplots, ECDF), then write
OUTPUT/study.md with batloc's tables beside the paper's and print Table II.
Exit status: 0 when every run succeeded, 1 otherwise, 2 for a bad study,
128 + signal when stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

STUDIES = ("paper",)


def _parser():
    p = argparse.ArgumentParser(prog="batloc study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("study", choices=STUDIES, help="which study (paper: Gonthier et al. 2024, §V)")
    p.add_argument("file", nargs="?", help="study file (default: experiments/paper-study.yaml)")
    p.add_argument("--full", action="store_true", help="the study file's `full` values (the paper's 12 weeks)")
    p.add_argument("--windows", type=int, help="evaluation weeks to draw (overrides the file)")
    p.add_argument("--seed", type=int, help="seed of the draw of weeks")
    p.add_argument("--trace", help="SWF trace (overrides the file)")
    p.add_argument("-o", "--output-dir", help="output folder (overrides the file)")
    p.add_argument("--options", help="JSON added to every variant's options, e.g. '{\"scheduling_period\": 30}'")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs (default: cores)")
    p.add_argument("--dask", nargs="?", const="local", metavar="ADDRESS",
                   help="run on Dask: a scheduler address, or local[:N] (default when given without a value)")
    p.add_argument("--force", action="store_true", help="redo runs whose outputs are complete")
    p.add_argument("--prepare-only", action="store_true", help="write the inputs and sweep.yaml, run nothing")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from batloc.processes import pybatsim_missing
    from batloc.study import description, note, prepare

    missing = None if args.prepare_only else pybatsim_missing()
    if missing:
        print(f"batloc study: {missing}", file=sys.stderr)
        return 2

    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    started = time.monotonic()
    try:
        overrides = {"windows": args.windows, "seed": args.seed, "trace": args.trace, "output-dir": args.output_dir}
        study = description.load(args.file, args.full, overrides)
        if args.options:
            try:
                extra = json.loads(args.options)
            except ValueError as exc:
                raise description.StudyError(f"--options is not JSON: {exc}") from None
            if not isinstance(extra, dict):
                raise description.StudyError("--options must be a JSON object")
            study.options = {**study.options, **extra}
        study.output_dir.mkdir(parents=True, exist_ok=True)
        prepared = prepare.prepare(study, log)
    except description.StudyError as exc:
        print(f"batloc study: {exc}", file=sys.stderr)
        return 2
    log(f"batloc study: sweep written to {prepared.sweep_file}")
    if args.prepare_only:
        return 0

    from batloc.analysis.report import build_report
    from batloc.robin.cli import run_sweep

    status = run_sweep(prepared.sweep, args.jobs, args.force, False, log, dask=args.dask)
    if status > 1:   # stopped by a signal: robin said so
        return status
    try:
        report = build_report(study.output_dir, baseline=study.baseline)
    except FileNotFoundError as exc:
        print(f"batloc study: no report: {exc}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - started
    text = note.render(prepared, report.comparison, report.html, seconds, report.results)
    note_path = study.output_dir / "study.md"
    note_path.write_text(text)
    log(f"batloc study: report {report.html}")
    log(f"batloc study: note {note_path} ({seconds / 60:.1f} min)")
    log("")
    log("Table II — reduction of the time spent waiting for files, against FCFS, all weeks:")
    log(note.table_ii(report.comparison))
    return status


if __name__ == "__main__":
    sys.exit(main())
