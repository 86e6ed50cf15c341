"""Every variant on a saturated synthetic Rackham day (or week), on the engine.

For each scheduler variant: engine + pybatsim scheduler on platforms/rackham.xml
and a synthetic workload (a day is about 32 000 jobs, heavy file sharing), then
`batloc validate` on the outputs. Prints one row per variant as soon as it ends
(a long sweep shows its progress): wall time; CPU time of the engine and of the
scheduler, the latter split into the planner, the rest of its passes and
everything outside passes; passes; jobs placed, walked, dropped and moved by
the standing plan; µs of planner CPU per placed job; peak RSS, jobs, validator
verdict, data loaded and its ratio to FCFS (the paper's direction: LEA and LEM
below 1).

    python benchmarks/saturated_day.py [--variants fcfs lea lem] [--parallel 2] [--keep DIR]
                                       [--duration 7d] [--options '{"scheduling_period": 30}']
                                       [--workload day.json] [--in-process] [--instant]
"""

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

from engine_run import run_pair

from batloc.outputs import read_rows
from batloc.schedulers.planning.options import SchedulerOptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf"]


def run_variant(variant, platform, workload, out, options, in_process=False, engine_args=()):
    prefix = os.path.join(out, variant)
    r = run_pair(variant, platform, workload, prefix, options, in_process, engine_args)
    wall = r["wall"]
    if not r["ok"]:
        return dict(variant=variant, wall=wall, ok=False, note=r["note"])
    cache = SchedulerOptions.from_dict(options).cache   # the model the run kept files by (a profile may set it)
    check = subprocess.run([sys.executable, "-m", "batloc.cli.main", "validate", prefix, "--workload", workload,
                            "--platform", platform, "--cache", cache], capture_output=True, text=True)
    _, rows = read_rows(prefix + "_jobs.csv")
    jobs = sum(1 for r in rows if r["workload_name"] == "w0")
    loaded = sum(float(r["input_size"] or 0) for r in read_rows(prefix + "_decisions.csv")[1] if r["cache"] == "miss")
    return dict(variant=variant, wall=wall, ok=check.returncode == 0, jobs=jobs, loaded=loaded, run=r,
                note=check.stdout.strip().splitlines()[-1] if check.stdout.strip() else "")


COLUMNS = (f"{'variant':<9} {'wall s':>6} {'engine':>6} {'sched':>6} {'plan':>6} {'commit':>6} {'other':>6} "
           f"{'passes':>7} {'placed':>8} {'walked':>9} {'dropped':>8} {'moved':>7} {'us/plac':>7} {'RSS MB':>6} "
           f"{'jobs':>6} {'valid':>5} {'loaded TB':>9}  note")
LEGEND = ("CPU seconds: engine (every thread), sched (the scheduler process), plan (in the planner), commit (the\n"
          "rest of its passes: committing decisions), other (the scheduler outside passes: pybatsim's dispatch,\n"
          "JSON, ZeroMQ, state updates); us/plac: plan CPU per placed job (stats jobs_scanned)")


def cpu(x):
    return f"{x:>6.1f}" if x is not None else f"{'-':>6}"


def row(r):
    run = r.get("run", {})
    st = run.get("stats", {})
    placed = st.get("jobs_scanned", 0)
    sched, passes, plan = run.get("sched_cpu"), st.get("decision_cpu_seconds"), st.get("plan_cpu_seconds")
    other = sched - passes if sched is not None and passes is not None else None
    commit = passes - plan if passes is not None and plan is not None else None
    per = f"{1e6 * plan / placed:.2f}" if placed and plan is not None else "-"
    loaded = r.get("loaded")
    tb = f"{loaded / 1e12:.2f}" if loaded is not None else "-"
    return (f"{r['variant']:<9} {r['wall']:>6.0f} {cpu(run.get('engine_cpu'))} {cpu(sched)} {cpu(plan)} {cpu(commit)} "
            f"{cpu(other)} {st.get('passes', '-'):>7} {placed:>8} {st.get('jobs_walked', '-'):>9} "
            f"{st.get('jobs_dropped', '-'):>8} {st.get('jobs_moved', '-'):>7} {per:>7} "
            f"{run.get('sched_rss_mb', float('nan')):>6.0f} {r.get('jobs', '-'):>6} {str(r['ok']):>5} {tb:>9}  "
            f"{r['note']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--load", default="1.2")
    ap.add_argument("--jobs-per-file", default="8")
    ap.add_argument("--duration", default="1d", help="workload length: 1d (the issue's day), 7d (a week)")
    ap.add_argument("--keep", help="keep outputs in this folder")
    ap.add_argument("--workload", help="use this workload file instead of synthesising one")
    ap.add_argument("--in-process", action="store_true",
                    help="run each scheduler inside the engine's process (batloc-batsim --in-process); the "
                         "RSS column is then the one process's")
    ap.add_argument("--instant", action="store_true",
                    help="the engine in its instant mode (batloc-batsim --instant: every event of one instant in one "
                         "message), as before issue 38; default: Batsim's messages")
    ap.add_argument("--options", type=json.loads, default={},
                    help='extra scheduler options as JSON, e.g. \'{"scheduling_period": 60}\' (default: the paper\'s)')
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="batloc-day-")
    os.makedirs(out, exist_ok=True)
    platform = os.path.join(ROOT, "platforms", "rackham.xml")
    workload = os.path.abspath(args.workload) if args.workload else os.path.join(out, "day.json")
    if not args.workload:
        subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", workload, "--platform",
                        platform, "--duration", args.duration, "--load", args.load, "--jobs-per-file",
                        args.jobs_per_file, "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
    # the planning core compiles once per source version: not inside a measured run
    subprocess.run([sys.executable, "-c", "from batloc.schedulers.planning.planner import warm_up; warm_up()"],
                   check=True)
    print(f"workload {workload}; outputs in {out}"
          + (f"; scheduler options {json.dumps(args.options)}" if args.options else "")
          + ("; schedulers in the engine's process (--in-process)" if args.in_process else ""))
    print(LEGEND)
    print(COLUMNS, flush=True)
    results = []
    with cf.ThreadPoolExecutor(args.parallel) as pool:
        engine_args = ["--instant"] if args.instant else []
        futures = [pool.submit(run_variant, v, platform, workload, out, args.options, args.in_process, engine_args)
                   for v in args.variants]
        for fut in cf.as_completed(futures):
            results.append(fut.result())
            print(row(results[-1]), flush=True)
    base = next((r["loaded"] for r in results if r["variant"] == "fcfs" and "loaded" in r), None)
    if base:
        print("data loaded vs FCFS: " + ", ".join(f"{r['variant']} {r['loaded'] / base:.2f}"
                                                   for r in results if r.get("loaded") is not None))
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
