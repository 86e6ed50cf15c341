"""Scheduler speed and data movement: `python3 benchmarks/schedulers.py [--days 1 7] [--variants ...]`.

For each of the ten variants (FCFS, EFT, LEA, LEO, LEM, each ± backfilling) on a
saturated synthetic Rackham workload (486 nodes x 20 cores, 128 GB, 0.1 GB/s),
prints wall time, per-pass decision time by queue length, and bytes loaded.
Workloads come from `batloc workload synth` (load > 1: saturated).

`--engine` runs on the real engine (batloc-batsim + pybatsim); by default the
scheduler is driven by `batloc.schedulers.dry_run` (the paper's model without
SimGrid), which isolates the scheduler's own cost. Prints tables, asserts nothing.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

from batloc.processes import free_port, pybatsim_command
from batloc.schedulers.dry_run import DryRun, make_resources

VARIANTS = ["fcfs", "eft", "lea", "leo", "lem"]
RACKHAM = {f"n{i:03d}": 20 for i in range(486)}


def synth(path, days, load, seed, jobs_per_file=4):
    subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", path,
                    "--duration", f"{days}d", "--load", str(load), "--seed", str(seed),
                    "--jobs-per-file", str(jobs_per_file)], check=True, capture_output=True)


def run_dry(variant, bf, workload, nodes, memory, bandwidth, stats_path, extra):
    mod = importlib.import_module(f"batloc.schedulers.{variant}")
    cls = getattr(mod, variant.capitalize())
    sched = cls({**extra, "backfilling": bf, "stats": stats_path})
    compute, storage = make_resources(nodes, memory_bytes=memory, bandwidth=bandwidth)
    t0 = time.perf_counter()
    run = DryRun(sched, compute, storage, workload)
    res = run.run()
    wall = time.perf_counter() - t0
    stats = json.load(open(stats_path))
    loaded = sum(run.bs.jobs[j].profile_dict["nb_bytes"] for j in res if j.startswith("batloc-stage!"))
    done = [r for j, r in res.items() if j.startswith("w0!")]
    sub = {f"w0!{j['id']}": j["subtime"] for j in workload["jobs"]}
    mean_flow = sum(r["finish"] - sub[j] for j, r in res.items() if j.startswith("w0!")) / max(1, len(done))
    return wall, stats, loaded, mean_flow


def run_engine(variant, bf, wl_path, platform, prefix, stats_path, extra):
    port = free_port()
    opts = json.dumps({**extra, "backfilling": bf, "stats": stats_path, "export_prefix": prefix})
    t0 = time.perf_counter()
    sched = subprocess.Popen(pybatsim_command() + [f"{os.path.dirname(__file__)}/../schedulers/{variant}.py",
                              "-s", f"tcp://127.0.0.1:{port}", "-o", opts], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    subprocess.run(["batloc-batsim", "-p", platform, "-w", wl_path, "-e", prefix,
                    "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs", "-q"], check=True)
    sched.wait()
    return time.perf_counter() - t0, json.load(open(stats_path))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=float, nargs="+", default=[1, 7])
    ap.add_argument("--load", type=float, default=1.3)
    ap.add_argument("--variants", nargs="+", default=[v + s for v in VARIANTS for s in ("", "-bf")])
    ap.add_argument("--engine", action="store_true")
    ap.add_argument("--platform", default=os.path.join(os.path.dirname(__file__), "../platforms/rackham.xml"))
    ap.add_argument("--max-jobs", type=int, default=0, help="keep only the first N jobs (quick looks)")
    ap.add_argument("--jobs-per-file", type=float, default=4)
    ap.add_argument("--options", type=json.loads, default={},
                    help='extra scheduler options as JSON, e.g. \'{"queue_depth": 100}\' or '
                         '\'{"scheduling_period": 30}\' (default: the paper\'s)')
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="batloc-bench-")
    if args.options:
        print(f"scheduler options: {json.dumps(args.options)}")
    print(f"{'variant':<8} {'days':>4} {'jobs':>6} {'wall s':>8} {'passes':>7} {'decide s':>9} "
          f"{'ms/pass':>8} {'max queue':>9} {'loaded TB':>9} {'mean flow h':>11}  ms/pass by queue length")
    for days in args.days:
        wl_path = os.path.join(tmp, f"sat{days}.json")
        synth(wl_path, days, args.load, seed=1, jobs_per_file=args.jobs_per_file)
        wl = json.load(open(wl_path))
        if args.max_jobs:
            wl["jobs"] = wl["jobs"][:args.max_jobs]
            json.dump(wl, open(wl_path, "w"))
        for v in args.variants:
            variant, bf = v.removesuffix("-bf"), v.endswith("-bf")
            stats_path = os.path.join(tmp, f"{v}-{days}.json")
            loaded, flow = float("nan"), float("nan")
            if args.engine:
                wall, st = run_engine(variant, bf, wl_path, args.platform, os.path.join(tmp, f"{v}-{days}"), stats_path,
                                      args.options)
            else:
                wall, st, loaded, flow = run_dry(variant, bf, wl, RACKHAM, 128e9, 0.1e9, stats_path,
                                                  args.options)
            by_q = " ".join(f"{k}:{b['mean_s'] * 1e3:.2f}" for k, b in st["by_queue_length"].items())
            print(f"{st['policy']:<8} {days:>4g} {len(wl['jobs']):>6} {wall:>8.1f} {st['passes']:>7} "
                  f"{st['decision_seconds']:>9.1f} {st['mean_pass_s'] * 1e3:>8.2f} {st['max_queue']:>9.0f} "
                  f"{loaded / 1e12:>9.2f} {flow / 3600:>11.2f}  {by_q}", flush=True)


if __name__ == "__main__":
    main()
