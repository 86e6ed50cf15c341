"""`batloc-batsim`: the embedded engine's command line, with Batsim 4's flags where they overlap."""

import argparse
import gc
import os
import sys
import time
from types import SimpleNamespace

from .errors import EngineError

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
    p.add_argument("--ready-timeout", type=float, default=30.0,
                   help="seconds to wait for the scheduler's first answer (default: 30)")
    p.add_argument("--reply-timeout", type=float, default=None,
                   help="seconds to wait for any later answer (default: no limit)")
    p.add_argument("--record-wallclock", action="store_true",
                   help="write wall-clock times into _schedule.csv (makes outputs differ between runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--progress", action="store_true", help="show a progress bar over simulated time on stderr")
    p.add_argument("--version", action="version", version=VERSION)
    return p.parse_args(argv)


def run(args):
    from .export import Exporter
    from .network import SchedulerLink
    from .platform import SIMGRID_CONFIG, check_platform_file, load_platform
    from .progress import Progress
    from .server import Simulation
    from .simgrid_loader import import_simgrid
    from .workload import load_workload

    # Check every input before SimGrid or the socket is touched.
    check_platform_file(args.platform)
    for path in args.workload:
        if not os.path.exists(path):
            raise EngineError(f"workload file not found: {path}")
    sg = import_simgrid()
    engine = sg.Engine(["batloc-batsim"] + SIMGRID_CONFIG)
    platform = load_platform(engine, args.platform)
    workloads = [load_workload(path, f"w{i}", len(platform.compute)) for i, path in enumerate(args.workload)]
    # Hundreds of thousands of long-lived job objects: keep the cyclic GC from
    # re-scanning them on every collection (the simulation creates no cycles worth collecting).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    options = SimpleNamespace(
        dynamic_jobs=args.enable_dynamic_jobs, ack_dynamic=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse, forward_profiles=args.forward_profiles_on_submission)
    nb_static = sum(len(w.jobs) for w in workloads)
    horizon = max((j.subtime for w in workloads for j in w.jobs), default=0.0)
    progress = Progress(horizon, nb_static) if args.progress else None
    exporter = Exporter(args.export, len(platform.compute), VERSION, args.record_wallclock)
    link = SchedulerLink(args.socket_endpoint, args.ready_timeout, args.reply_timeout)
    sim = Simulation(sg, engine, platform, workloads, link, exporter, options, progress)
    outcome = {}
    wall_start = time.monotonic()

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

    platform.master.add_actor("batloc-engine", actor)
    try:
        engine.run()
        if "error" in outcome:
            sim.write_unfinished()
    finally:
        wall = time.monotonic() - wall_start
        exporter.close(sim.now, scheduling_time=0.0, simulation_time=wall)
        link.close()
        if progress is not None:
            progress.close(sim.now)
    if "error" in outcome:
        raise outcome["error"]
    if not args.quiet:
        c = exporter.counts
        print(f"batloc-batsim: simulation ended at t={sim.now:.6f}: {c['nb_jobs']} jobs "
              f"({c['success']} succeeded, {c['killed']} killed/failed, {c['rejected']} rejected), "
              f"{sim.messages} messages, {wall:.1f} s wall; outputs {args.export}_jobs.csv", file=sys.stderr)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except EngineError as e:
        print(f"batloc-batsim: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("batloc-batsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
