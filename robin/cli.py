"""robin: run Batsim simulations robustly (batexpe robin's format), or a sweep of them.

    robin DESCRIPTION.yaml [--jobs N] [--force] [--no-report] [--dask [ADDRESS | local[:N]]]
    robin --output-dir=DIR --platform P.xml --workload W.json --schedulers fcfs,lea,lea-bf
    robin --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] [--simulation-timeout=S] ...
    robin generate DESCRIPTION.yaml --output-dir=DIR --batcmd=CMD [--schedcmd=CMD] ...

A single run starts Batsim (or batloc's engine) and the scheduler, enforces
the four timeouts, keeps their stdout/stderr in OUTPUT_DIR/log/ and exits 0
only if both succeeded and `batloc validate` finds its schedule possible. A
sweep (see robin.description; or --platform/--workload/--schedulers) runs
every platform × workload × scheduler combination in parallel, skips runs
complete for the same input contents (re-runs those whose files changed),
shows each running run's simulated time, validates every run (a run with
violations counts as failed, its outputs kept), reports failed ones with the
tail of their logs, and ends with `batloc report OUTPUT_DIR`. Exit status: 0
iff every run succeeded. One robin at a time per output folder.

With --dask, a sweep's runs are Dask tasks (robin.dask_sweep): on the
scheduler at ADDRESS, or on a LocalCluster of N workers (default: --jobs)
bound to 127.0.0.1; a failed run is retried once. Workers write into the
output directory: they must share robin's file system.

Ctrl-C, SIGTERM or SIGHUP stops at once: every run in progress stops its process
groups and is recorded as failed (so the next invocation redoes it), runs
not started are left, finished runs are kept; exit status 128 + signal.
The description's commands (batcmd, schedcmd, scheduler commands, engine)
run in a shell: only run descriptions you trust.
"""

from __future__ import annotations

import argparse
import os
import sys

import yaml

from . import description as rd
from . import process as robin_process
from . import runs as robin_runs
from .lock import FolderInUse
from .process import Timeouts
from .sweep import run_alone, run_sweep  # run_sweep: batloc demo and study call it from here
from batloc.shipped import packaged

_DEFAULT = Timeouts()
TIMEOUT_HELP = {
    "simulation-timeout": f"seconds the engine and scheduler have together (default: {_DEFAULT.simulation:g}, a week)",
    "ready-timeout": f"seconds to wait for the port to be free, then for the scheduler to listen (default: "
                     f"{_DEFAULT.ready:g}; batexpe's is 10, too short for a scheduler that loads the planning core "
                     "on a busy machine)",
    "success-timeout": f"seconds the second process has to end after the first ended well (default: "
                       f"{_DEFAULT.success:g})",
    "failure-timeout": f"seconds the second process has to end after the first failed (default: "
                       f"{_DEFAULT.failure:g})",
}


def _runs_at_once(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of runs at once, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 run at once, not {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line (its usage runs to a dozen: `robin --help` shows it)."""

    def error(self, message):
        self.exit(2, f"robin: {message} (robin --help lists the options)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="robin", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("description", nargs="*", help="description file (YAML), or: generate FILE")
    p.add_argument("--output-dir", help="folder of the run's, or the sweep's, outputs (created)")
    p.add_argument("--batcmd", help="single run: the Batsim command (run by bash)")
    p.add_argument("--schedcmd", help="single run: the scheduler command (run by bash)")
    for key, text in TIMEOUT_HELP.items():
        p.add_argument(f"--{key}", type=float, metavar="SECONDS", help=text)
    sweep = p.add_argument_group("a sweep from the command line, instead of a description file")
    sweep.add_argument("--platform", action="append", metavar="P.xml",
                       help="platform file (repeat for several; a file of the package, e.g. platforms/rackham.xml, "
                            "works from anywhere)")
    sweep.add_argument("--workload", action="append", metavar="W.json", help="workload file (repeat for several)")
    sweep.add_argument("--schedulers", metavar="LIST",
                       help="comma-separated batloc policies, '-bf' for backfilling, e.g. fcfs,fcfs-bf,lea,lea-bf "
                            "(stock or staged commands: write a sweep file)")
    sweep.add_argument("--baseline", metavar="NAME",
                       help="scheduler the report compares the others with (default: fcfs)")
    p.add_argument("-j", "--jobs", type=_runs_at_once, default=os.cpu_count() or 1, metavar="N",
                   help="runs at once in a sweep (default: this machine's CPUs, %(default)s)")
    p.add_argument("--force", action="store_true", help="redo the sweep's runs even when complete")
    p.add_argument("--refuse-changed", action="store_true",
                   help="stop (exit 1, naming the file) when a complete run's input files changed since it ran, "
                        "instead of running it again")
    p.add_argument("--no-report", action="store_true", help="do not write the report after a sweep")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only (no progress)")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin each run's engine and scheduler to one shared CPU")
    p.add_argument("--pybatsim-verbosity", choices=rd.VERBOSITIES, metavar="LEVEL",
                   help="log level of the pybatsim schedulers robin starts: debug, info, warning, error, critical "
                        "(default: warning; overrides the description's pybatsim-verbosity)")
    p.add_argument("--in-process", action="store_true",
                   help="the embedded engine runs each scheduler it can inside its own process, without ZeroMQ "
                        "(same outputs, faster; as the description's in-process: true)")
    p.add_argument("--dask", nargs="?", const="local", metavar="ADDRESS",
                   help="run a sweep's runs on Dask: a scheduler address (tcp://host:8786), or local[:N] "
                        "for a LocalCluster of N workers on 127.0.0.1 (default when the flag has no value; "
                        "N defaults to --jobs)")
    return p


# what the command line gives a run or a sweep, whatever describes it (a file or the flags)
_SINGLE_ONLY = ("batcmd", "schedcmd")


def _cli_sweep(args) -> dict | None:
    """The sweep that --platform/--workload/--schedulers describe, or None when none is given."""
    given = [f for f in ("platform", "workload", "schedulers") if getattr(args, f)]
    if not given and (args.description or not args.baseline):
        return None     # a description file's sweep takes --baseline too (_with_command_line)
    missing = [f for f in ("platform", "workload", "schedulers") if not getattr(args, f)]
    if missing or args.description:
        raise rd.DescriptionError("a sweep from the command line needs --output-dir, --platform, --workload and "
                                  "--schedulers, and no description file" + (
                                      f" (missing: --{', --'.join(missing)})" if missing else ""))
    names = [n.strip() for n in args.schedulers.split(",") if n.strip()]
    desc = {"output-dir": args.output_dir, "platforms": args.platform, "workloads": args.workload,
            "schedulers": names}
    if not args.output_dir:
        raise rd.DescriptionError("a sweep from the command line needs --output-dir")
    return desc


def _with_command_line(desc: dict, args) -> dict:
    """`desc` with what the command line says on top of it: the four timeouts, --output-dir, --baseline,
    --pybatsim-verbosity and --in-process win over a description file's values; --batcmd and --schedcmd
    describe a single run of their own and go with no description and no sweep."""
    desc = dict(desc)
    if args.output_dir is not None:
        desc["output-dir"] = args.output_dir
    if args.baseline is not None:
        if not rd.is_sweep(desc):
            raise rd.DescriptionError("--baseline names the run a sweep's others are compared with: this "
                                      "description is a single run")
        desc["baseline"] = args.baseline
    for key in rd.TIMEOUT_KEYS:
        value = getattr(args, key.replace("-", "_"))
        if value is not None:
            desc[key] = value
    if args.pybatsim_verbosity:
        desc["pybatsim-verbosity"] = args.pybatsim_verbosity
    if args.in_process:
        desc["in-process"] = True
    return desc


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.no_pin:
        robin_process.CPUS.enabled = False
    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    cli_desc = {"output-dir": args.output_dir, "batcmd": args.batcmd, "schedcmd": args.schedcmd,
                "pybatsim-verbosity": args.pybatsim_verbosity,
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
        desc = _cli_sweep(args)
        single_flags = [f"--{k}" for k in _SINGLE_ONLY if getattr(args, k) is not None]
        if single_flags and (desc is not None or args.description):
            raise rd.DescriptionError(f"{' and '.join(single_flags)} describe a single run on the command line: "
                                      "not with a description file or --platform/--workload/--schedulers")
        if desc is None:
            desc = rd.load_description(packaged(args.description[0])) if args.description else cli_desc
        desc = _with_command_line(desc, args)
        if rd.is_sweep(desc):
            return run_sweep(desc, args.jobs, args.force, not args.no_report, log, dask=args.dask,
                             refuse_changed=args.refuse_changed, quiet=args.quiet)
        if args.dask:
            raise rd.DescriptionError("--dask runs sweeps; this description is a single run")
        spec = robin_runs.single_run(desc)
    except rd.DescriptionError as exc:
        print(f"robin: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"robin: {exc.filename or ''}: {exc.strerror or exc}".replace(": : ", ": "), file=sys.stderr)
        return 1
    except KeyboardInterrupt:   # reading the description, laying out a sweep's runs: before robin acts on signals
        print("robin: interrupted before any run started", file=sys.stderr)
        return 130
    return _single(spec, log, args)


def _single(spec, log, args) -> int:
    state, detail = spec.state()
    if state == "changed" and args.refuse_changed:
        print(f"robin: run {spec.name}: its inputs changed since it ran: {detail}", file=sys.stderr)
        return 1
    log(f"robin: running {spec.name} → {spec.output_dir}")
    try:
        outcome = run_alone(spec, log, args.quiet)
    except FolderInUse as exc:
        print(f"robin: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"robin: cannot write into {spec.output_dir}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if robin_process.STOP.is_set():
        print(f"robin: {spec.name} {robin_process.STOP.reason}", file=sys.stderr)
        return 128 + (robin_process.STOP.signum or 15)
    if outcome.success:
        log(f"robin: {spec.name} succeeded in {outcome.wall_seconds:.1f} s")
        return 0
    if outcome.invalid:
        print(f"robin: run {spec.name} INVALID: {outcome.reason}", file=sys.stderr)
        return 1
    print(robin_runs.failure_message(spec, outcome), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
