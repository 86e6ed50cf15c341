"""`batloc-batsim`: the embedded engine's command line, with Batsim 4's flags where they overlap."""

import argparse
import os
import sys
import time
import traceback
from types import SimpleNamespace

from batloc.processes import quiet_gc

from .checks import timeout_seconds
from .errors import EngineError, Interrupted
from .network import REPLY_TIMEOUT

VERSION = "batloc-engine-0.1.0"
SOCKET_ENDPOINT = "tcp://localhost:28000"
READY_TIMEOUT = 30.0
# exit status of a command line that cannot be run as given (argparse's)
USAGE = 2


class UsageError(Exception):
    """A flag that cannot be used as given, in one line."""


def parse_args(argv):
    return checked(parser().parse_args(argv))


def parser():
    """The command line's parser (batloc.api checks the engine options it is given against it)."""
    p = argparse.ArgumentParser(
        prog="batloc-batsim",
        description="Batsim-compatible simulation engine on SimGrid (speaks the Batsim 4 JSON protocol).")
    p.add_argument("-p", "--platform", help="SimGrid platform XML file (required)")
    p.add_argument("-w", "--workload", action="append",
                   help="Batsim JSON workload (required; repeatable; named w0, w1, … in order)")
    p.add_argument("-e", "--export", default="out/", help="prefix of the output files (default: out/)")
    p.add_argument("-s", "--socket-endpoint",
                   help=f"where the decision process listens (default: {SOCKET_ENDPOINT}; not with --in-process)")
    p.add_argument("--enable-dynamic-jobs", action="store_true", help="accept REGISTER_JOB / REGISTER_PROFILE")
    p.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                   help="answer each REGISTER_JOB with a JOB_SUBMITTED")
    p.add_argument("--enable-profile-reuse", action="store_true",
                   help="keep dynamic profiles after their first job ends")
    p.add_argument("--forward-profiles-on-submission", action="store_true",
                   help="attach the job's profile to JOB_SUBMITTED")
    p.add_argument("--lenient-call-me-later", action="store_true",
                   help="call a scheduler now when its CALL_ME_LATER asks for a time not in the future, with "
                        "one warning, instead of stopping the run as Batsim 4.2.1 does (for schedulers written "
                        "against batloc before it followed Batsim here)")
    p.add_argument("--instant", action="store_true",
                   help="send everything that happens at one simulated instant in one message and apply the "
                        "answer's decisions at that instant (the paper's semantics; cheaper) instead of Batsim "
                        "4.2.1's messages, each timed over the platform: events of one instant may then come in "
                        "several messages, decisions apply as their messages arrive (contract section 4)")
    p.add_argument("--ready-timeout", type=timeout_seconds,
                   help=f"seconds to wait for a ZeroMQ scheduler to be there and answer first; once its ZeroMQ "
                        f"handshake is done, the reply timeout applies (default: {READY_TIMEOUT:g}; 0: no limit; "
                        "not with --in-process)")
    p.add_argument("--reply-timeout", type=timeout_seconds, default=REPLY_TIMEOUT,
                   help=f"seconds to wait for any later answer (in process: for the scheduler to load, and for "
                        f"each answer) before ending the run, outputs written (default: {REPLY_TIMEOUT:g}; "
                        "0: no limit)")
    p.add_argument("--in-process", metavar="SCHEDULER",
                   help="run the pybatsim scheduler SCHEDULER (a file such as schedulers/lea.py, a name robin "
                        "takes such as lea or lea-bf, or a stock name such as schedFcfs) inside this process instead "
                        "of talking to one over ZeroMQ, under a supervisor that ends a hung or dead run; same "
                        "outputs, less time per message (a batloc policy writes its decision log with this "
                        "run's -e prefix unless its options set export_prefix)")
    p.add_argument("--scheduler-options", metavar="JSON",
                   help="with --in-process: the scheduler's options, as pybatsim's -o takes them (default: {})")
    p.add_argument("--scheduler-verbosity", choices=("debug", "info", "warning", "error", "critical"),
                   help="with --in-process: pybatsim's log level, as its -v (default: warning)")
    p.add_argument("--time-scheduler", action="store_true",
                   help="with --in-process: count the CPU time spent in the scheduler and print it in the last "
                        "line (for benchmarks; costs 1-2 %% of a run)")
    p.add_argument("--recover", metavar="PREFIX",
                   help="write the outputs of a run with export prefix PREFIX that was killed (-9, out of memory), "
                        "from the journal it left, and exit (a later run with that prefix does it too)")
    p.add_argument("--no-journal", action="store_true",
                   help="keep no journal of the run (<prefix>_journal.<pid>.tmp): a run killed with -9 then "
                        "leaves no outputs, as Batsim's")
    p.add_argument("--traces-anywhere", action="store_true",
                   help="read usage-trace files outside the workload's folder too (as Batsim does; by default a "
                        "trace path leading out of it is refused)")
    p.add_argument("--record-wallclock", action="store_true",
                   help="write wall-clock times into _schedule.csv (makes outputs differ between runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--progress", action="store_true",
                   help="show progress on stderr: the workloads' jobs ended, the simulated time and the last "
                        "submission")
    p.add_argument("--progress-file", metavar="FILE",
                   help="rewrite FILE about once a second with one line 'now horizon jobs_done jobs_total' "
                        "(simulated seconds, last submission time in seconds, counts), for robin")
    # Batsim 4.2.1's options that change which hosts compute (batsim.cpp's usage text)
    batsim = p.add_argument_group("platform options, as Batsim 4.2.1's")
    batsim.add_argument("-m", "--master-host", metavar="NAME",
                        help="the host that runs no job when none has role=master (default: master_host)")
    batsim.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                        help="give ROLE (master, storage or compute_node) to each of HOSTS (comma-separated); "
                             "repeatable")
    batsim.add_argument("--mmax", type=int, default=0, metavar="N",
                        help="keep only the first N compute hosts by name (default: 0, all)")
    batsim.add_argument("--mmax-workload", action="store_true",
                        help="keep only as many compute hosts as the workloads' largest nb_res")
    p.add_argument("--version", action="version", version=VERSION)
    return p


# flags that mean something only with --in-process, and those that mean nothing with it
OWN_COMMAND_LINE = "a scheduler over ZeroMQ takes its options and verbosity from its own command line"
IN_PROCESS_ONLY = (("scheduler_options", "--scheduler-options", OWN_COMMAND_LINE),
                   ("scheduler_verbosity", "--scheduler-verbosity", OWN_COMMAND_LINE),
                   ("time_scheduler", "--time-scheduler", "over ZeroMQ the scheduler is a process of its own: time "
                                                          "that process"))
ZEROMQ_ONLY = (("socket_endpoint", "--socket-endpoint"), ("ready_timeout", "--ready-timeout"))


def checked(args):
    """Refuse a flag that does nothing as given (it needs another one, or the mode makes it unused), then fill
    in the defaults left unset so that giving them could be told apart."""
    if args.recover is not None:
        given = [flag for flag, value in (("-p", args.platform), ("-w", args.workload), ("--in-process",
                 args.in_process)) if value is not None]
        if given:
            raise UsageError(f"--recover rebuilds a killed run's outputs from its journal alone: not with {given[0]}")
        if not args.recover.strip():
            raise UsageError("--recover needs the export prefix of the killed run (its -e)")
        return args
    for flag, value in (("-p/--platform", args.platform), ("-w/--workload", args.workload)):
        if value is None:
            raise UsageError(f"the following argument is required: {flag}")
    if args.in_process is not None:
        if not args.in_process.strip():
            raise UsageError("--in-process needs a scheduler: a file such as schedulers/lea.py, a batloc policy "
                             "such as lea or lea-bf, or a pybatsim stock scheduler such as schedFcfs")
        for attr, flag in ZEROMQ_ONLY:
            if getattr(args, attr) is not None:
                raise UsageError(f"{flag} is for a scheduler over ZeroMQ: with --in-process the engine starts the "
                                 "scheduler itself (its answers are bounded by --reply-timeout)")
    else:
        for attr, flag, why in IN_PROCESS_ONLY:
            if getattr(args, attr) not in (None, False):
                raise UsageError(f"{flag} needs --in-process ({why})")
    defaults = dict(socket_endpoint=SOCKET_ENDPOINT, ready_timeout=READY_TIMEOUT, scheduler_options="{}",
                    scheduler_verbosity="warning")
    for attr, value in defaults.items():
        if getattr(args, attr) is None:
            setattr(args, attr, value)
    if args.in_process and not args.instant:
        args.instant = _authors_profile(args.scheduler_options)
    return args


def _authors_profile(text: str) -> bool:
    """The in-process scheduler's options ask for the instant mode (`wants_instant_engine`); options that
    are not JSON are refused later, by the scheduler's loader, with their own line."""
    import json

    from batloc.schedulers.engine_mode import wants_instant_engine
    try:
        return wants_instant_engine(json.loads(text))
    except ValueError:
        return False


def _needs_ptasks(docs):
    """Whether a workload holds Batsim's compute tasks, which run as one L07 parallel task as on Batsim."""
    for data in docs:
        profiles = data.get("profiles", {}) if isinstance(data, dict) else {}
        if isinstance(profiles, dict) and any(isinstance(p, dict) and p.get("type") in PTASK_TYPES
                                              for p in profiles.values()):
            return True
    return False


PTASK_TYPES = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total", "usage_trace")


def _machine_limit(args, docs):
    """Batsim's --mmax, or with --mmax-workload the workloads' largest nb_res (0: every compute host)."""
    if args.mmax < 0:
        raise EngineError(f"--mmax must be >= 0, got {args.mmax}")
    if not args.mmax_workload:
        return args.mmax
    sizes = []
    for data in docs:
        nb_res = data.get("nb_res") if isinstance(data, dict) else None
        if isinstance(nb_res, int) and not isinstance(nb_res, bool) and nb_res > 0:
            sizes.append(nb_res)
    return max(sizes, default=0)


def _load(args):
    """Check and load every input before SimGrid runs or the socket is touched."""
    from .platform import PTASK_MODEL, SIMGRID_CONFIG, check_platform_file, load_platform
    from .simgrid_loader import import_simgrid
    from .simgrid_probe import probe
    from .workload import load_workload, read_json

    check_platform_file(args.platform)
    for path in args.workload:
        if not os.path.exists(path):
            raise EngineError(f"workload file not found: {path}")
    # each read once, within its bound, before SimGrid: the model and --mmax-workload depend on them
    docs = [read_json(path) for path in args.workload]
    sg = import_simgrid()
    ptasks = _needs_ptasks(docs)
    # L07 times networks and computations itself: SimGrid refuses a network model beside it
    config = [PTASK_MODEL] + [c for c in SIMGRID_CONFIG if "network/" not in c] if ptasks else SIMGRID_CONFIG
    from batloc.platforms.numbering import RoleError, parse_role_maps

    try:
        roles = parse_role_maps(args.add_role_to_hosts)
    except RoleError as e:
        raise EngineError(str(e)) from None
    probe(sg, args.platform, config, args.master_host, roles)   # what would crash SimGrid, in one line
    engine = sg.Engine(["batloc-batsim"] + config)
    platform = load_platform(engine, args.platform, args.master_host, roles, _machine_limit(args, docs), args.quiet)
    workloads = [load_workload(path, f"w{i}", len(platform.compute), data, traces_anywhere=args.traces_anywhere)
                 for i, (path, data) in enumerate(zip(args.workload, docs))]
    del docs
    args.ptasks = ptasks
    return sg, engine, platform, workloads


def _actor(sim, outcome, unblock=False):
    def actor():
        if unblock:   # an in-process scheduler is called here: what it starts must not inherit blocked signals
            sim.stop.unblock_here()
        # Exceptions must not escape a SimGrid actor: keep them for the main thread.
        try:
            if os.environ.get("BATLOC_PROFILE"):
                import cProfile

                cProfile.runctx("sim.run()", globals(), {"sim": sim}, os.environ["BATLOC_PROFILE"])
            else:
                sim.run()
        except BaseException as e:  # noqa: BLE001
            outcome["error"] = e

    return actor


def recover_runs(prefix, alone=False):
    """Rebuild the outputs of the dead runs that left a journal with this prefix, one line each: None if there
    was none, False if one could not be (its journal is kept), True otherwise."""
    from .journal import Unreadable
    from .recovery import recover

    try:
        lines = recover(prefix)
    except Unreadable as e:
        print(f"batloc-batsim: {'error' if alone else 'warning'}: cannot recover the killed run with prefix "
              f"{prefix}: {e} (journal kept)", file=sys.stderr)
        return False
    for line in lines:
        print(f"batloc-batsim: {line}", file=sys.stderr)
    return True if lines else None


def run(args):
    recover_runs(args.export)   # a killed run with this prefix: its outputs first (this run then replaces them)
    if args.in_process is None:
        return simulate(args)
    from .leftovers import end_leftovers
    from .supervisor import supervise

    status, stamp = supervise(args)   # this process goes on as the engine, or as its supervisor
    if status is not None:
        return status
    # The engine is a fork of the caller (a Python script calling main(), say): it must never return into the
    # caller's code, which would then run twice. It ends here with the status main() would have returned.
    status = 1
    try:
        status = exit_status(lambda: simulate(args, stamp))
        end_leftovers()   # what the scheduler left running ends with the run, said in one line
    except BaseException:  # noqa: BLE001  (a bug of the engine's own: its traceback, then the engine's status)
        traceback.print_exc()
    finally:
        _leave(status)


def _leave(status):
    """End the forked engine as an interpreter's exit would for its own files, without the caller's exit code
    (its atexit functions, its `finally` blocks): files a failed scheduler left open are flushed as they are
    collected, pybatsim's log files by logging's shutdown."""
    import logging

    try:
        gc.collect()
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def simulate(args, stamp=None):
    """Load the inputs, run the simulation and write the outputs; the exit status (0), or raise."""
    from .signals import StopOnSignal

    # Before any thread exists, so that SimGrid's and ZeroMQ's threads inherit the blocked signals.
    stop = StopOnSignal()
    try:
        sg, engine, platform, workloads = _load(args)
        stop.inputs_loaded()
        exporter, link, sim, outcome = _prepare(args, stop, sg, engine, platform, workloads, stamp)
    except Interrupted as e:
        e.args = (f"{e}; no output written",)
        raise
    wall_start = time.monotonic()
    try:
        stop.simulation_starts()
        engine.run()
    except BaseException as e:  # noqa: BLE001  (a signal just before the run, or SimGrid failing)
        outcome.setdefault("error", e)
    return _finish(args, sim, exporter, link, outcome.get("error"), time.monotonic() - wall_start)


def _prepare(args, stop, sg, engine, platform, workloads, stamp=None):
    from .export import Exporter
    from .network import SchedulerLink
    from .progress import Progress
    from .server import Simulation

    quiet_gc()
    options = SimpleNamespace(
        dynamic_jobs=args.enable_dynamic_jobs, ack_dynamic=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse, forward_profiles=args.forward_profiles_on_submission,
        lenient_calls=args.lenient_call_me_later, ptasks=args.ptasks, instant=args.instant)
    nb_static = sum(len(w.jobs) for w in workloads)
    horizon = max((j.subtime for w in workloads for j in w.jobs), default=0.0)
    progress = None
    # paths taken whole before a scheduler in this process can change directory
    progress_file = os.path.abspath(args.progress_file) if args.progress_file else None
    if args.progress or args.progress_file:
        progress = Progress(horizon, nb_static, sys.stderr if args.progress else None, progress_file)
    journal = None if args.no_journal else journal_header(args, workloads)
    exporter = Exporter(args.export, len(platform.compute), VERSION, args.record_wallclock, journal)
    link = None
    try:
        if args.in_process:
            from .in_process import InProcessLink

            link = InProcessLink(args.in_process, args.scheduler_options, args.scheduler_verbosity,
                                 args.time_scheduler, stamp, exporter.path, stop)
        else:
            link = SchedulerLink(args.socket_endpoint, args.ready_timeout, args.reply_timeout, stop)
        sim = Simulation(sg, engine, platform, workloads, link, exporter, options, progress, stop)
        outcome = {}
        platform.master.add_actor("batloc-engine", _actor(sim, outcome, unblock=bool(args.in_process)))
    except BaseException:
        exporter.discard()
        if link is not None:
            link.close()
        raise
    return exporter, link, sim, outcome


def journal_header(args, workloads):
    """What the journal says of the run's inputs, for `--recover` (recovery.py) to read them again."""
    stamps = []
    for w in workloads:
        st = os.stat(w.path)
        stamps.append([st.st_size, st.st_mtime_ns])
    return {"workloads": [w.path for w in workloads], "stamps": stamps,
            "platform": os.path.abspath(args.platform), "argv": sys.argv}


def _finish(args, sim, exporter, link, error, wall):
    """Write the outputs (unless no scheduler was reached) and report the run's end in one line."""
    unfinished = 0
    written = False
    try:
        if error is not None and not link.reached:
            exporter.discard()   # nothing was simulated: earlier outputs with this prefix stay
        else:
            if error is not None:
                unfinished = sim.write_unfinished()
            exporter.close(sim.now, scheduling_time=0.0, simulation_time=wall)
            written = True
    except EngineError as e:   # the outputs cannot be written (a full disk): none is left half-written
        if error is None or exporter.broken == str(error):
            error = e
        else:
            error.args = (f"{error}; {e}",)
    finally:
        link.close()
        if sim.progress is not None:
            sim.progress.close(sim.now)
    if error is None:
        error = getattr(link, "end_error", None)   # an in-process scheduler that failed as it left
    if isinstance(error, (EngineError, Interrupted)):
        # say what became of the outputs, in the same one line
        if written:
            outputs = f"outputs written to {args.export}_*.csv, {unfinished} job(s) unfinished"
        elif link.reached:
            outputs = f"no output written (earlier {args.export}_*.csv, if any, kept)"
        else:
            outputs = f"nothing simulated, no output written (earlier {args.export}_*.csv, if any, kept)"
        error.args = (f"{error}; {outputs}",)
    if error is not None:
        raise error
    if not args.quiet:
        c = exporter.counts
        print(f"batloc-batsim: simulation ended at t={sim.now:.6f}: {c['nb_jobs']} jobs "
              f"({c['success']} succeeded, {c['killed']} killed/failed, {c['rejected']} rejected), "
              f"{sim.messages} messages, {wall:.1f} s wall{in_process_cpu(link)}; outputs {args.export}_jobs.csv",
              file=sys.stderr)
    return 0


def in_process_cpu(link):
    """How much of the run the scheduler took, when it ran inside the engine (benchmarks read it)."""
    cpu = getattr(link, "cpu", None)
    return "" if cpu is None else f" (the scheduler, in process: {cpu:.2f} s CPU)"


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        print(f"batloc-batsim: error: {e}", file=sys.stderr)
        return USAGE
    if args.recover is not None:
        done = recover_runs(args.recover, alone=True)
        if done is None:
            print(f"batloc-batsim: error: no journal of a killed run with prefix {args.recover} "
                  f"({args.recover}_journal.*.tmp)", file=sys.stderr)
        return 0 if done else 1
    return exit_status(lambda: run(args))


def exit_status(work):
    """`work()`'s exit status; an engine error or an interruption said in one line, with its status."""
    try:
        return work()
    except Interrupted as e:
        print(f"batloc-batsim: {e}", file=sys.stderr)
        return e.exit_status
    except EngineError as e:
        print(f"batloc-batsim: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
