"""`batloc-batsim`: the embedded engine's command line, with Batsim 4's flags where they overlap."""

import argparse
import gc
import os
import sys
import time
from types import SimpleNamespace

from .checks import timeout_seconds
from .errors import EngineError, Interrupted
from .network import REPLY_TIMEOUT

VERSION = "batloc-engine-0.1.0"


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="batloc-batsim",
        description="Batsim-compatible simulation engine on SimGrid (speaks the Batsim 4 JSON protocol).")
    p.add_argument("-p", "--platform", required=True, help="SimGrid platform XML file")
    p.add_argument("-w", "--workload", action="append", required=True,
                   help="Batsim JSON workload (repeatable; named w0, w1, … in order)")
    p.add_argument("-e", "--export", default="out/", help="prefix of the output files (default: out/)")
    p.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000",
                   help="where the decision process listens (default: tcp://localhost:28000)")
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
    p.add_argument("--ready-timeout", type=timeout_seconds, default=30.0,
                   help="seconds to wait for a ZeroMQ scheduler to be there and answer first; once its ZeroMQ "
                        "handshake is done, the reply timeout applies (default: 30; 0: no limit)")
    p.add_argument("--reply-timeout", type=timeout_seconds, default=REPLY_TIMEOUT,
                   help=f"seconds to wait for any later answer before ending the run, outputs written "
                        f"(default: {REPLY_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--in-process", metavar="SCHEDULER",
                   help="run the pybatsim scheduler SCHEDULER (a file such as schedulers/lea.py, or a stock "
                        "name such as schedFcfs) inside this process instead of talking to one over ZeroMQ "
                        "(--socket-endpoint is then unused); same outputs, less time per message")
    p.add_argument("--scheduler-options", metavar="JSON", default="{}",
                   help="with --in-process: the scheduler's options, as pybatsim's -o takes them (default: {})")
    p.add_argument("--scheduler-verbosity", default="warning",
                   choices=("debug", "info", "warning", "error", "critical"),
                   help="with --in-process: pybatsim's log level, as its -v (default: warning)")
    p.add_argument("--time-scheduler", action="store_true",
                   help="with --in-process: count the CPU time spent in the scheduler and print it in the last "
                        "line (for benchmarks; costs 1-2 %% of a run)")
    p.add_argument("--record-wallclock", action="store_true",
                   help="write wall-clock times into _schedule.csv (makes outputs differ between runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--progress", action="store_true", help="show a progress bar over simulated time on stderr")
    p.add_argument("--progress-file", metavar="FILE",
                   help="rewrite FILE about once a second with one line 'now horizon jobs_done jobs_total' "
                        "(simulated seconds, last submission time in seconds, counts), for robin")
    # Batsim 4.2.1's options that change which hosts compute (batsim.cpp's usage text)
    batsim = p.add_argument_group("platform options, as Batsim 4.2.1's")
    batsim.add_argument("-m", "--master-host", default="master_host", metavar="NAME",
                        help="the host that runs no job when none has role=master (default: master_host)")
    batsim.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                        help="give ROLE (master, storage or compute_node) to each of HOSTS (comma-separated); "
                             "repeatable")
    batsim.add_argument("--mmax", type=int, default=0, metavar="N",
                        help="keep only the first N compute hosts by name (default: 0, all)")
    batsim.add_argument("--mmax-workload", action="store_true",
                        help="keep only as many compute hosts as the workloads' largest nb_res")
    p.add_argument("--version", action="version", version=VERSION)
    return p.parse_args(argv)


def _needs_ptasks(paths):
    """Whether a workload holds Batsim's compute tasks, which run as one L07 parallel task as on Batsim."""
    import json

    for path in paths:
        try:
            with open(path, "rb") as f:
                profiles = json.load(f).get("profiles", {})
        except (OSError, ValueError, AttributeError):
            continue   # the workload's own reading says what is wrong with it
        if isinstance(profiles, dict) and any(isinstance(p, dict) and p.get("type") in PTASK_TYPES
                                              for p in profiles.values()):
            return True
    return False


PTASK_TYPES = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total", "usage_trace")


def _machine_limit(args):
    """Batsim's --mmax, or with --mmax-workload the workloads' largest nb_res (0: every compute host)."""
    if args.mmax < 0:
        raise EngineError(f"--mmax must be >= 0, got {args.mmax}")
    if not args.mmax_workload:
        return args.mmax
    import json

    sizes = []
    for path in args.workload:
        try:
            with open(path, "rb") as f:
                nb_res = json.load(f).get("nb_res")
        except (OSError, ValueError, AttributeError):
            nb_res = None   # the workload's own reading says what is wrong with it
        if isinstance(nb_res, int) and not isinstance(nb_res, bool) and nb_res > 0:
            sizes.append(nb_res)
    return max(sizes, default=0)


def _load(args):
    """Check and load every input before SimGrid runs or the socket is touched."""
    from .platform import PTASK_MODEL, SIMGRID_CONFIG, check_platform_file, load_platform
    from .simgrid_loader import import_simgrid
    from .workload import load_workload

    check_platform_file(args.platform)
    for path in args.workload:
        if not os.path.exists(path):
            raise EngineError(f"workload file not found: {path}")
    sg = import_simgrid()
    ptasks = _needs_ptasks(args.workload)
    # L07 times networks and computations itself: SimGrid refuses a network model beside it
    config = [PTASK_MODEL] + [c for c in SIMGRID_CONFIG if "network/" not in c] if ptasks else SIMGRID_CONFIG
    engine = sg.Engine(["batloc-batsim"] + config)
    from batloc.platforms.numbering import RoleError, parse_role_maps

    try:
        roles = parse_role_maps(args.add_role_to_hosts)
    except RoleError as e:
        raise EngineError(str(e)) from None
    platform = load_platform(engine, args.platform, args.master_host, roles, _machine_limit(args), args.quiet)
    workloads = [load_workload(path, f"w{i}", len(platform.compute)) for i, path in enumerate(args.workload)]
    args.ptasks = ptasks
    return sg, engine, platform, workloads


def _actor(sim, outcome):
    def actor():
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


def run(args):
    from .signals import StopOnSignal

    # Before any thread exists, so that SimGrid's and ZeroMQ's threads inherit the blocked signals.
    stop = StopOnSignal()
    try:
        sg, engine, platform, workloads = _load(args)
        exporter, link, sim, outcome = _prepare(args, stop, sg, engine, platform, workloads)
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


def _prepare(args, stop, sg, engine, platform, workloads):
    from .export import Exporter
    from .network import SchedulerLink
    from .progress import Progress
    from .server import Simulation

    # Hundreds of thousands of long-lived job objects: keep the cyclic GC from
    # re-scanning them on every collection (the simulation creates no cycles worth collecting).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    options = SimpleNamespace(
        dynamic_jobs=args.enable_dynamic_jobs, ack_dynamic=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse, forward_profiles=args.forward_profiles_on_submission,
        lenient_calls=args.lenient_call_me_later, ptasks=args.ptasks)
    nb_static = sum(len(w.jobs) for w in workloads)
    horizon = max((j.subtime for w in workloads for j in w.jobs), default=0.0)
    progress = None
    if args.progress or args.progress_file:
        progress = Progress(horizon, nb_static, sys.stderr if args.progress else None, args.progress_file)
    exporter = Exporter(args.export, len(platform.compute), VERSION, args.record_wallclock)
    link = None
    try:
        if args.in_process:
            from .in_process import InProcessLink

            link = InProcessLink(args.in_process, args.scheduler_options, args.scheduler_verbosity,
                                 args.time_scheduler)
        else:
            link = SchedulerLink(args.socket_endpoint, args.ready_timeout, args.reply_timeout, stop)
        sim = Simulation(sg, engine, platform, workloads, link, exporter, options, progress, stop)
        outcome = {}
        platform.master.add_actor("batloc-engine", _actor(sim, outcome))
    except BaseException:
        exporter.discard()
        if link is not None:
            link.close()
        raise
    return exporter, link, sim, outcome


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
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except Interrupted as e:
        print(f"batloc-batsim: {e}", file=sys.stderr)
        return e.exit_status
    except EngineError as e:
        print(f"batloc-batsim: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
