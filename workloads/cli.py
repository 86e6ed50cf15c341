"""`batloc workload ...`: turn traces into file-annotated Batsim workloads.

  batloc workload from-swf KTH-SP2-1996-2.1-cln.swf.gz -o kth.json
  batloc workload from-sacct sacct.txt -o week.json --sharing consecutive --start 2022-01-03 --length 7d --before 2d --after 2d
  batloc workload from-gonthier 2022-01-03-V10000 -o published.json
  batloc workload synth -o synth.json --load 0.9 --duration 7d --jobs-per-file 4 --seed 1
  batloc workload synth-khanna -o khanna.json --jobs 1200 --overlap 0.85 --platform khanna.xml
  batloc workload window kth.json -o kth-week.json --start 1996-10-07 --length 7d --before 3d --after 3d
  batloc workload from-wfcommons 1000genome.json -o wf.json --background synth.json --start 1d --every 6h
  batloc workload stats synth.json
"""

import argparse
import json
import math
import os
import sys

from batloc import command
from batloc.platforms.reader import PlatformError, read_platform
from batloc.platforms.units import parse_bytes, parse_duration
from batloc.reading import WORKLOAD_BYTES

from . import annotate, pipeline, synth_io, synth_khanna, wfcommons
from .errors import WorkloadError
from .export import read_batsim
from .source import read_json
from .stats import format_stats, workload_stats

SHOWN_ISSUES = 10


def _type(parse, what):
    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc) or f"bad {what}: {text!r}") from None
    convert.__name__ = what
    return convert


DURATION = _type(parse_duration, "duration")
BYTES = _type(parse_bytes, "size")


def _keys(text):
    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys:
        raise argparse.ArgumentTypeError("give at least one grouping key, e.g. user,cores")
    return keys


def _core_mix(text):
    mix = {}
    for part in text.split(","):
        cores, sep, weight = part.partition(":")
        try:
            mix[int(cores)] = float(weight) if sep else 1.0
        except ValueError:
            raise argparse.ArgumentTypeError(f"cannot read core mix part {part!r} (expected CORES:WEIGHT)") from None
    return mix


def _platform_args(parser, annotate_files=True):
    group = parser.add_argument_group("platform (default: Rackham, 486 nodes x 20 cores, 128 GB)")
    group.add_argument("--platform", help="platform XML to take cores per node, node memory and nb_res from")
    group.add_argument("--cores-per-node", type=int, help="override cores per node")
    if annotate_files:
        group.add_argument("--node-memory", type=BYTES, help="override node memory (file size of a full node)")
    group.add_argument("--nb-res", type=int, help="override nb_res written in the workload")


def _sharing_args(parser, default="paper", choices=annotate.RULES):
    group = parser.add_argument_group("file sharing and sessions")
    group.add_argument("--sharing", choices=choices, default=default,
                       help=f"grouping rule (default {default}): paper = same key within a window from the "
                            "group's first job; consecutive = the authors' published rule (next submission, "
                            "sliding window)")
    group.add_argument("--sharing-window", type=DURATION, default=800.0, help="sharing window (default 800s)")
    group.add_argument("--keys", type=_keys, default=["user", "cores"],
                       help="grouping keys, comma-separated job-table columns (default user,cores)")
    group.add_argument("--sessions", type=DURATION, default=annotate.SESSION_WINDOW,
                       help="user-session window (default 5min; 0 = no session field)")
    group.add_argument("--overhead", type=DURATION, default=0.0,
                       help="added to every job's run time and walltime (the authors used 120s; default 0)")
    if default == "paper":       # traces without files of their own
        group.add_argument("--file-size", choices=annotate.FILE_SIZES, default="fit",
                           help="fit (default): the paper's size (cores / cores per node x node memory), capped so "
                                "that loading it at the platform's node bandwidth fits in the time each job reading "
                                "it had to spare in the trace (walltime - run time); paper: the paper's size "
                                "whatever the walltime (a job whose load does not fit is killed by it under the "
                                "paper's walltime rule)")


def _window_args(parser, required=False):
    group = parser.add_argument_group("evaluation window (paper, Fig. 1)")
    group.add_argument("--start", required=required,
                       help="window start: seconds in the trace's time, or a date (YYYY-MM-DD[THH:MM:SS], UTC) "
                            "when the trace gives its epoch")
    group.add_argument("--length", type=DURATION, default=7 * 86400.0, help="window length (default 7d)")
    group.add_argument("--before", type=DURATION, default=0.0, help="context before the window (default 0)")
    group.add_argument("--after", type=DURATION, default=0.0, help="context after the window (default 0)")


def _parser():
    parser = argparse.ArgumentParser(prog="batloc workload", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("from-swf", "a Standard Workload Format trace (.swf or .swf.gz)"),
                       ("from-sacct", "Slurm `sacct --parsable2` output"),
                       ("from-gonthier", "a workload in the format Gonthier et al. published")):
        p = sub.add_parser(name, help=f"convert {what}")
        p.add_argument("trace")
        p.add_argument("-o", "--output", required=True, help="Batsim JSON to write")
        p.add_argument("--strict", action="store_true", help="any dropped or repaired line is an error")
        p.add_argument("--report", help="write every dropped/repaired line to this CSV")
        if name != "from-gonthier":
            p.add_argument("--default-walltime", type=DURATION,
                           help="walltime for jobs without one (default: their run time)")
        _platform_args(p)
        if name == "from-gonthier":
            p.add_argument("--history-node", action="store_true",
                           help="start at the authors' t0 (the first phase-0 job's submission, at 0), the jobs "
                                "running then with their remaining times and their node (job field history_node)")
            _sharing_args(p, default="keep", choices=("keep",) + annotate.RULES)
        else:
            _sharing_args(p)
        _window_args(p)

    p = sub.add_parser("synth", help="generate a synthetic Rackham-like workload")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--load", type=float, default=0.9, help="offered load (default 0.9)")
    p.add_argument("--duration", type=DURATION, default=7 * 86400.0, help="submission period (default 7d)")
    p.add_argument("--jobs-per-file", type=float, default=4.0, help="mean jobs per input file (default 4)")
    p.add_argument("--burstiness", type=float, default=1.0,
                   help="CV of gaps between bursts: 1 = Poisson, >1 = bursty, 0 = regular (default 1)")
    p.add_argument("--core-mix", type=_core_mix, help="CORES:WEIGHT,... (default Rackham-like, 1 to 20 cores)")
    p.add_argument("--walltime-accuracy", type=float, default=0.5,
                   help="mean run time / walltime, in (0, 1] (default 0.5)")
    p.add_argument("--users", type=int, default=200, help="number of users (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nodes", type=int, help="node count (default: from the platform)")
    p.add_argument("--sessions", type=DURATION, default=annotate.SESSION_WINDOW, help="user-session window (default 5min; 0 = none)")
    _platform_args(p)
    synth_io.add_arguments(p)

    synth_khanna.add_parser(sub, _platform_args)

    p = sub.add_parser("from-wfcommons", help="convert WfCommons workflow instances (WfFormat JSON) into "
                                              "workflows, folded into a background workload")
    p.add_argument("instances", nargs="+", help="WfFormat instance files")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--background", help="Batsim workload the workflows join (its jobs kept, ids continued)")
    p.add_argument("--start", type=DURATION, default=0.0, help="first workflow's arrival (default 0)")
    p.add_argument("--every", type=DURATION, default=3600.0, help="time between arrivals (default 1h)")
    p.add_argument("--copies", type=int, default=1, help="workflows per instance (default 1)")
    p.add_argument("--runtime-scale", type=float, default=1.0, help="multiply task run times (default 1)")
    p.add_argument("--size-scale", type=float, default=1.0, help="multiply file sizes (default 1)")
    p.add_argument("--max-cores", type=int, help="cores of a task at most (default: the platform's per node, 20)")
    p.add_argument("--walltime-factor", type=float, default=2.0,
                   help="walltime = factor x (run time + loads at --bandwidth) (default 2)")
    p.add_argument("--min-walltime", type=DURATION, default=60.0, help="shortest walltime (default 60s)")
    p.add_argument("--bandwidth", type=float, help="bytes/s for walltimes (default: the platform's, 0.1e9)")
    p.add_argument("--platform", help="platform XML (cores per node, node bandwidth, nb_res)")

    p = sub.add_parser("window", help="cut an evaluation window with context out of a Batsim workload")
    p.add_argument("workload")
    p.add_argument("-o", "--output", required=True)
    _window_args(p, required=True)

    p = sub.add_parser("stats", help="jobs, users, files, sharing and offered load of a Batsim workload")
    p.add_argument("workload")
    p.add_argument("--platform", help="platform XML for the offered load and the loads that exceed their walltime "
                                      "(default: the workload's nb_res, and no loads)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _sizes(args):
    return pipeline.platform_sizes(getattr(args, "platform", None), getattr(args, "cores_per_node", None),
                                   getattr(args, "node_memory", None), getattr(args, "nodes", None),
                                   getattr(args, "nb_res", None))


def _window(args):
    return None if args.start is None else pipeline.Window(args.start, args.length, args.before, args.after)


def _summarise_issues(log, args, kept):
    counts = log.counts()
    parts = [f"{args.trace}: {kept} jobs"]
    for action in ("dropped", "repaired"):
        if counts[action]:
            total = sum(counts[action].values())
            detail = ", ".join(f"{reason} {n}" for reason, n in counts[action].items())
            parts.append(f"{action} {total} line(s) ({detail})")
    print("; ".join(parts), file=sys.stderr)
    for issue in log.issues[:SHOWN_ISSUES]:
        print(f"  {issue}", file=sys.stderr)
    if len(log.issues) > SHOWN_ISSUES:
        hint = f"all in {args.report}" if args.report else "use --report FILE for all"
        print(f"  ... {len(log.issues) - SHOWN_ISSUES} more ({hint})", file=sys.stderr)
    if args.report:
        log.write_csv(args.report)


def _convert(args):
    sizes = _sizes(args)
    table, log = pipeline.convert(
        args.trace, args.command.removeprefix("from-"), sizes, strict=args.strict,
        default_walltime=getattr(args, "default_walltime", None), sharing=args.sharing,
        sharing_window=args.sharing_window, keys=args.keys, sessions=args.sessions, overhead=args.overhead,
        window=_window(args), history_node=getattr(args, "history_node", False),
        file_size=getattr(args, "file_size", "paper"))
    _summarise_issues(log, args, len(table))
    pipeline.write(table, args.output, sizes.nb_res)
    print(f"wrote {args.output}: {len(table)} jobs, nb_res {sizes.nb_res}")


def _synth(args):
    if args.io:
        return synth_io.run(args)
    sizes = _sizes(args)
    spec = pipeline.synth_spec(sizes, args.core_mix, duration=args.duration, load=args.load,
                               jobs_per_file=args.jobs_per_file, burstiness=args.burstiness,
                               walltime_accuracy=args.walltime_accuracy, users=args.users, seed=args.seed)
    table = pipeline.synthesize(spec, args.sessions)
    nb_res = args.nb_res or spec.nodes * spec.cores_per_node
    pipeline.write(table, args.output, nb_res)
    print(f"wrote {args.output}: {len(table)} jobs, nb_res {nb_res}")


def _from_wfcommons(args):
    if args.copies < 1:
        raise WorkloadError("--copies must be at least 1")
    scaling = wfcommons.Scaling(runtime_scale=args.runtime_scale, size_scale=args.size_scale,
                                walltime_factor=args.walltime_factor, min_walltime=args.min_walltime)
    nb_res = None
    if args.platform:
        plat = read_platform(args.platform)
        scaling.max_cores, nb_res = plat.cores_per_node, plat.total_cores
        scaling.bandwidth = float(plat.view.bandwidth.max())
        scaling.node_memory = float(plat.view.memory.min())
    scaling.max_cores = args.max_cores or scaling.max_cores
    scaling.bandwidth = args.bandwidth or scaling.bandwidth
    background = None
    if args.background:
        background = read_json(args.background, WORKLOAD_BYTES, "Batsim workload")
    instances = [wfcommons.read_instance(path) for path in args.instances]
    doc = wfcommons.build(instances, background, args.start, args.every, args.copies, scaling, nb_res)
    wfcommons.write(doc, args.output)
    tasks = sum(w["tasks"] for w in doc["batloc"]["workflows"])
    print(f"wrote {args.output}: {len(doc['batloc']['workflows'])} workflows ({tasks} tasks, "
          f"{len(doc['dependent_jobs'])} dependent), {len(doc['jobs'])} jobs submitted at their time, "
          f"nb_res {doc['nb_res']}")


def _inputs(args):
    """The files the command reads (what its output must not overwrite)."""
    named = [getattr(args, key, None) for key in ("trace", "workload", "background", "platform")]
    return [p for p in named + list(getattr(args, "instances", None) or []) if p]


def _refuse_overwriting_inputs(args):
    output = getattr(args, "output", None)
    if not output or not os.path.exists(output):
        return
    for path in _inputs(args):
        try:
            same = os.path.samefile(path, output)
        except OSError:
            continue
        if same:    # the output is opened for writing before the input is read whole: a trace lost
            raise WorkloadError(f"-o {output} is {path}, an input of this command: not overwritten (write to "
                                "another file)")


def _run(args):
    _refuse_overwriting_inputs(args)
    if args.command.startswith("from-") and args.command != "from-wfcommons":
        _convert(args)
    elif args.command == "from-wfcommons":
        _from_wfcommons(args)
    elif args.command == "synth":
        _synth(args)
    elif args.command == "synth-khanna":
        synth_khanna.run(args, _sizes(args), pipeline.write)
    elif args.command == "window":
        table = read_batsim(args.workload)
        windowed = pipeline.cut_window(table, _window(args))
        if not windowed["evaluated"].any():
            raise WorkloadError(f"{args.workload}: no job submitted in the evaluation window")
        nb_res = table.attrs.get("nb_res")
        if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
            # it used to write nb_res 0, which Batsim (and now the engine) refuses
            raise WorkloadError(f"{args.workload}: nb_res (the machine size, which Batsim requires) is "
                                f"{'missing' if nb_res is None else repr(nb_res)}; add it to the workload")
        pipeline.write(windowed, args.output, nb_res)
        print(f"wrote {args.output}: {len(windowed)} jobs, "
              f"{int(windowed['evaluated'].sum())} evaluated")
    else:
        table = read_batsim(args.workload)
        plat = read_platform(args.platform) if args.platform else None
        total = plat.total_cores if plat else table.attrs.get("nb_res")
        links = [n.bandwidth for n in plat.nodes if n.bandwidth and math.isfinite(n.bandwidth)] if plat else []
        stats = workload_stats(table, total, max(set(links), key=links.count) if links else None)
        print(json.dumps(stats, indent=1) if args.json else format_stats(stats))


def main(argv=None) -> int:
    return command.run("workload", _parser(), _run, (WorkloadError, PlatformError, ValueError, OSError), argv)


if __name__ == "__main__":
    sys.exit(main())
