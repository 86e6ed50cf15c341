"""robin: run Batsim simulations robustly (batexpe robin's format), or a sweep of them.

    robin DESCRIPTION.yaml [--jobs N] [--force] [--no-report]
    robin --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] [--simulation-timeout=S] ...
    robin generate DESCRIPTION.yaml --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] ...

A single run starts Batsim (or batloc's engine) and the scheduler, enforces
the four timeouts, keeps their stdout/stderr in OUTPUT_DIR/log/ and exits 0
only if both succeeded. A sweep (see robin.description) runs every
platform × workload × scheduler combination in parallel, skips complete
runs, reports failed ones with the tail of their logs, and ends with
`batloc report OUTPUT_DIR`. Exit status: 0 iff every run succeeded.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed

import yaml

from . import description as rd
from . import process as robin_process
from . import runs as robin_runs


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="robin", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("description", nargs="*", help="description file (YAML), or: generate FILE")
    p.add_argument("--output-dir")
    p.add_argument("--batcmd")
    p.add_argument("--schedcmd")
    for key in rd.TIMEOUT_KEYS:
        p.add_argument(f"--{key}", type=float)
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs in a sweep (default: cores)")
    p.add_argument("--force", action="store_true", help="redo sweep runs whose outputs are complete")
    p.add_argument("--no-report", action="store_true", help="do not write the report after a sweep")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin each run's engine and scheduler to one shared CPU")
    return p


def _terminate(signum, frame):
    # Turn SIGTERM into an exception so every `finally` stops its process groups.
    raise SystemExit(128 + signum)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.no_pin:
        robin_process.CPUS.enabled = False
    signal.signal(signal.SIGTERM, _terminate)
    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    cli_desc = {"output-dir": args.output_dir, "batcmd": args.batcmd, "schedcmd": args.schedcmd,
                **{k: getattr(args, k.replace("-", "_")) for k in rd.TIMEOUT_KEYS}}
    cli_desc = {k: v for k, v in cli_desc.items() if v is not None}
    try:
        if args.description[:1] == ["generate"]:
            if len(args.description) != 2:
                raise rd.DescriptionError("usage: robin generate FILE --output-dir=DIR --batcmd=CMD ...")
            with open(args.description[1], "w") as f:
                yaml.safe_dump(cli_desc, f, sort_keys=False)
            return 0
        if len(args.description) > 1:
            raise rd.DescriptionError("give one description file")
        desc = rd.load_description(args.description[0]) if args.description else cli_desc
        if rd.is_sweep(desc):
            return run_sweep(desc, args.jobs, args.force, not args.no_report, log)
        spec = robin_runs.single_run(desc)
    except rd.DescriptionError as exc:
        print(f"robin: {exc}", file=sys.stderr)
        return 1
    log(f"robin: running {spec.name} → {spec.output_dir}")
    outcome = robin_runs.execute(spec, log=log)
    if outcome.success:
        log(f"robin: {spec.name} succeeded in {outcome.wall_seconds:.1f} s")
        return 0
    print(robin_runs.failure_message(spec, outcome), file=sys.stderr)
    return 1


def run_sweep(desc: dict, jobs: int, force: bool, report: bool, log) -> int:
    out, specs, baseline = robin_runs.sweep_runs(desc)
    complete = {s.name for s in specs if s.is_complete()}
    todo = [s for s in specs if force or s.name not in complete]
    log(f"robin: sweep of {len(specs)} runs in {out} ({len(complete)} already complete, "
        f"{len(todo)} to run, {max(1, jobs)} at a time)")
    failed = []

    def one(spec):
        robin_runs.bind_commands(spec)
        return spec, robin_runs.execute(spec, log=log)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, s) for s in todo]
        for fut in as_completed(futures):
            spec, outcome = fut.result()
            if outcome.success:
                log(f"robin: {spec.name} succeeded in {outcome.wall_seconds:.1f} s")
            else:
                failed.append(spec.name)
                print(robin_runs.failure_message(spec, outcome), file=sys.stderr, flush=True)
    if report:
        from batloc.analysis.report import build_report

        try:
            rep = build_report(out, baseline=baseline)
            log(f"robin: report written to {rep.html} ({rep.seconds:.1f} s)")
        except FileNotFoundError as exc:
            print(f"robin: no report: {exc}", file=sys.stderr)
            return 1
    if failed:
        print(f"robin: {len(failed)} of {len(specs)} runs failed: {', '.join(sorted(failed))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
