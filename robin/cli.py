"""robin: run Batsim simulations robustly (batexpe robin's format), or a sweep of them.

    robin DESCRIPTION.yaml [--jobs N] [--force] [--no-report] [--dask [ADDRESS | local[:N]]]
    robin --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] [--simulation-timeout=S] ...
    robin generate DESCRIPTION.yaml --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] ...

A single run starts Batsim (or batloc's engine) and the scheduler, enforces
the four timeouts, keeps their stdout/stderr in OUTPUT_DIR/log/ and exits 0
only if both succeeded. A sweep (see robin.description) runs every
platform × workload × scheduler combination in parallel, skips complete
runs, reports failed ones with the tail of their logs, and ends with
`batloc report OUTPUT_DIR`. Exit status: 0 iff every run succeeded.

With --dask, a sweep's runs are Dask tasks (robin.dask_sweep): on the
scheduler at ADDRESS, or on a LocalCluster of N workers (default: --jobs)
bound to 127.0.0.1; a failed run is retried once. Workers write into the
output directory: they must share robin's file system.

Ctrl-C or SIGTERM stops at once: every run in progress stops its process
groups and is recorded as failed (so the next invocation redoes it), runs
not started are left, finished runs are kept; exit status 128 + signal.
The description's commands (batcmd, schedcmd, scheduler commands, engine)
run in a shell: only run descriptions you trust.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

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
    p.add_argument("--dask", nargs="?", const="local", metavar="ADDRESS",
                   help="run a sweep's runs on Dask: a scheduler address (tcp://host:8786), or local[:N] "
                        "for a LocalCluster of N workers on 127.0.0.1 (default when the flag has no value; "
                        "N defaults to --jobs)")
    return p


@contextmanager
def stopping_on_signals():
    """While inside, SIGINT and SIGTERM set `process.STOP` instead of raising.

    Runs in other threads cannot be interrupted by an exception; they watch
    STOP and stop their process groups themselves (children live in their own
    sessions, so a terminal's Ctrl-C never reaches them directly).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    robin_process.STOP.clear()
    watched = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in watched}
    for sig in watched:
        signal.signal(sig, lambda signum, frame: robin_process.STOP.set(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stopped_status() -> int:
    return 128 + (robin_process.STOP.signum or signal.SIGTERM)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.no_pin:
        robin_process.CPUS.enabled = False
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
            return run_sweep(desc, args.jobs, args.force, not args.no_report, log, dask=args.dask)
        if args.dask:
            raise rd.DescriptionError("--dask runs sweeps; this description is a single run")
        spec = robin_runs.single_run(desc)
    except rd.DescriptionError as exc:
        print(f"robin: {exc}", file=sys.stderr)
        return 1
    log(f"robin: running {spec.name} → {spec.output_dir}")
    with stopping_on_signals():
        outcome = robin_runs.execute(spec, log=log)
    if robin_process.STOP.is_set():
        print(f"robin: {spec.name} {robin_process.STOP.reason}", file=sys.stderr)
        return _stopped_status()
    if outcome.success:
        log(f"robin: {spec.name} succeeded in {outcome.wall_seconds:.1f} s")
        return 0
    print(robin_runs.failure_message(spec, outcome), file=sys.stderr)
    return 1


def run_sweep(desc: dict, jobs: int, force: bool, report: bool, log, dask: str | None = None) -> int:
    """Run a sweep description (robin.description); the exit status robin would give.

    `dask`: None runs on this machine's threads; else a Dask scheduler address or local[:N].
    """
    with stopping_on_signals():
        return _sweep(desc, jobs, force, report, log, dask)


def _sweep(desc: dict, jobs: int, force: bool, report: bool, log, dask: str | None) -> int:
    out, specs, baseline = robin_runs.sweep_runs(desc)
    complete = {s.name for s in specs if s.is_complete()}
    todo = [s for s in specs if force or s.name not in complete]
    where = f"on Dask ({dask})" if dask else f"{max(1, jobs)} at a time"
    log(f"robin: sweep of {len(specs)} runs in {out} ({len(complete)} already complete, "
        f"{len(todo)} to run, {where})")
    if dask:
        from . import dask_sweep

        try:
            tally = dask_sweep.run(todo, dask, jobs, log)
        except (dask_sweep.DaskUnavailable, ValueError) as exc:
            print(f"robin: {exc}", file=sys.stderr)
            return 1
        failed, finished, not_started = tally.failed, tally.finished, tally.not_started
    else:
        failed, finished, not_started = _run_threads(todo, jobs, log)
    if robin_process.STOP.is_set():
        print(f"robin: sweep {robin_process.STOP.reason}: {finished} run(s) finished and kept, "
              f"{len(failed)} stopped or failed, {not_started} not started; no report", file=sys.stderr)
        return _stopped_status()
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


def _run_threads(todo, jobs: int, log):
    """The runs on this machine, `jobs` at a time; (failed names, finished count, not started count)."""
    failed, finished, not_started = [], 0, 0

    def one(spec):
        if robin_process.STOP.is_set():
            return spec, None   # stopped before its turn
        robin_runs.bind_commands(spec)
        return spec, robin_runs.execute(spec, log=log)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, s) for s in todo]
        for fut in as_completed(futures):
            spec, outcome = fut.result()
            if outcome is None:
                not_started += 1
            elif outcome.success:
                finished += 1
                log(f"robin: {spec.name} succeeded in {outcome.wall_seconds:.1f} s")
            else:
                failed.append(spec.name)
                print(robin_runs.failure_message(spec, outcome), file=sys.stderr, flush=True)
    return failed, finished, not_started


if __name__ == "__main__":
    sys.exit(main())
