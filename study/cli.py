"""`batloc study paper|rackham`: Gonthier et al.'s §V study in one command.

  batloc study paper                       # experiments/paper-study.yaml: 2 weeks of KTH-SP2 x 10 variants
  batloc study paper --full                # the paper's 12 weeks
  batloc study paper --dask local          # the runs on a Dask LocalCluster (or --dask tcp://host:8786)
  batloc study paper my-study.yaml --trace SDSC-SP2-1998-4.2-cln.swf.gz --options '{"scheduling_period": 30}'
  batloc study rackham --weeks 12 --dask tcp://host:8786
                                           # experiments/rackham-study.yaml: the paper's scale, 486 nodes,
                                           # saturated synthetic weeks x 10 variants

`rackham` draws its weeks with the synthetic generator (Rackham's logs are
not public) and runs them on Rackham itself: each run is hundreds of thousands
of jobs, minutes of CPU; the study is meant for a Dask cluster, and says in
study.md what it cost and on what.

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

STUDIES = ("paper", "rackham")


def _parser():
    p = argparse.ArgumentParser(prog="batloc study", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("study", choices=STUDIES, help="which study (paper: Gonthier et al. 2024, §V, on a public trace; "
                                                  "rackham: the same at Rackham's scale, on synthetic weeks)")
    p.add_argument("file", nargs="?", help="study file (default: experiments/paper-study.yaml, "
                                           "experiments/rackham-study.yaml)")
    p.add_argument("--full", action="store_true", help="the study file's `full` values (paper: its 12 weeks)")
    p.add_argument("--windows", "--weeks", type=int, dest="windows",
                   help="evaluation weeks (paper: drawn from the trace; rackham: synthetic, default 12)")
    p.add_argument("--seed", type=int, help="seed of the weeks (paper: of the draw; rackham: week i has seed + i)")
    p.add_argument("--trace", help="paper: SWF trace (overrides the file)")
    p.add_argument("--nodes", type=int, help="rackham: nodes of the platform (default 486)")
    p.add_argument("--load", type=float, help="rackham: offered load of the synthetic weeks (default 1.2)")
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
    from batloc.study import cost, description, note
    from batloc.workloads.errors import WorkloadError

    missing = None if args.prepare_only else pybatsim_missing()
    if missing:
        print(f"batloc study: {missing}", file=sys.stderr)
        return 2

    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    started = time.monotonic()
    try:
        study, prepared = _prepare(args, log)
    except description.StudyError as exc:
        print(f"batloc study: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:   # a read-only folder, a full disk: the study's inputs cannot be written
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"batloc study: cannot write the study's inputs: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except WorkloadError as exc:   # the workload writer's own line names the file
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
    where = f"runs on Dask ({args.dask})" if args.dask else f"{max(1, args.jobs)} run(s) at a time on this machine"
    spent = cost.describe(cost.measure(study.output_dir), seconds, where)
    text = note.render(prepared, report.comparison, report.html, seconds, report.results, spent)
    note_path = study.output_dir / "study.md"
    note_path.write_text(text)
    log(f"batloc study: report {report.html}")
    log(f"batloc study: note {note_path} ({seconds / 60:.1f} min)")
    log(f"batloc study: {spent}")
    log("")
    log("Table II — reduction of the time spent waiting for files, against FCFS, all weeks:")
    log(note.table_ii(report.comparison))
    return status


def _prepare(args, log):
    """The study the arguments describe, its inputs written and its sweep made."""
    from batloc.study import description, prepare, rackham

    if args.study == "rackham":
        if args.trace:
            raise description.StudyError("--trace is for `batloc study paper`; rackham's weeks are synthetic")
        overrides = {"weeks": args.windows, "seed": args.seed, "output-dir": args.output_dir, "nodes": args.nodes,
                     "load": args.load}
        study = rackham.load(args.file, args.full, overrides)
    else:
        if args.nodes is not None or args.load is not None:
            raise description.StudyError("--nodes and --load are for `batloc study rackham`")
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
    from batloc.robin import description as rd

    try:
        rd.output_folder(study.output_dir)   # a file on the way is one line, as for robin
    except rd.DescriptionError as exc:
        raise description.StudyError(str(exc)) from None
    study.output_dir.mkdir(parents=True, exist_ok=True)
    made = rackham.prepare(study, log) if args.study == "rackham" else prepare.prepare(study, log)
    return study, made


if __name__ == "__main__":
    sys.exit(main())
