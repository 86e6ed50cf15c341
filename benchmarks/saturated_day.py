"""Issue 6's large acceptance: every variant on a saturated synthetic Rackham day, on the engine.

For each scheduler variant: engine + pybatsim scheduler on platforms/rackham.xml
and a synthetic day (>= 20 000 jobs, heavy file sharing), then `batloc validate`
on the outputs. Prints one row per variant: wall time, jobs, validator verdict,
data loaded and its ratio to FCFS (the paper's direction: LEA and LEM below 1).

    python benchmarks/saturated_day.py [--variants fcfs lea lem] [--parallel 2] [--keep DIR] [--options JSON]
"""

import argparse
import concurrent.futures as cf
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from engine_run import run_pair

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf"]


def run_variant(variant, platform, workload, out, options):
    prefix = os.path.join(out, variant)
    r = run_pair(variant, platform, workload, prefix, options)
    wall = r["wall"]
    if not r["ok"]:
        return dict(variant=variant, wall=wall, ok=False, note=r["note"])
    check = subprocess.run([sys.executable, "-m", "batloc.cli.main", "validate", prefix, "--workload", workload,
                            "--platform", platform], capture_output=True, text=True)
    with open(prefix + "_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    jobs = sum(1 for r in rows if r["workload_name"] == "w0")
    with open(prefix + "_decisions.csv") as f:
        loaded = sum(float(r["input_size"] or 0) for r in csv.DictReader(f) if r["cache"] == "miss")
    return dict(variant=variant, wall=wall, ok=check.returncode == 0, jobs=jobs, loaded=loaded,
                note=check.stdout.strip().splitlines()[-1] if check.stdout.strip() else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--load", default="1.2")
    ap.add_argument("--jobs-per-file", default="8")
    ap.add_argument("--keep", help="keep outputs in this folder")
    ap.add_argument("--options", type=json.loads, default={},
                    help='extra scheduler options as JSON, e.g. \'{"scheduling_period": 60}\' (default: the paper\'s)')
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="batloc-day-")
    os.makedirs(out, exist_ok=True)
    platform = os.path.join(ROOT, "platforms", "rackham.xml")
    workload = os.path.join(out, "day.json")
    subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", workload, "--platform",
                    platform, "--duration", "1d", "--load", args.load, "--jobs-per-file", args.jobs_per_file,
                    "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
    print(f"workload {workload}; outputs in {out}"
          + (f"; scheduler options {json.dumps(args.options)}" if args.options else ""))
    with cf.ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(lambda v: run_variant(v, platform, workload, out, args.options), args.variants))
    base = next((r["loaded"] for r in results if r["variant"] == "fcfs" and "loaded" in r), None)
    print(f"{'variant':<9} {'wall s':>8} {'jobs':>7} {'valid':>6} {'loaded TB':>10} {'vs FCFS':>8}  note")
    for r in results:
        loaded = r.get("loaded")
        ratio = f"{loaded / base:.2f}" if base and loaded is not None else "-"
        tb = f"{loaded / 1e12:.2f}" if loaded is not None else "-"
        print(f"{r['variant']:<9} {r['wall']:>8.0f} {r.get('jobs', '-'):>7} {str(r['ok']):>6} {tb:>10} "
              f"{ratio:>8}  {r['note']}")
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
