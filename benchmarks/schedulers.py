"""Scheduler cost on a saturated Rackham trace, on the engine: `python3 benchmarks/schedulers.py`.

For each variant (FCFS, EFT, LEA, LEO, LEM, each ± backfilling): the embedded
engine and a batloc scheduler on platforms/rackham.xml and a synthetic trace
(load 1.2, 8 jobs per file, seed 7: the saturated day of saturated_day.py by
default; `--days 7` a week), both processes on one CPU as under robin. Prints,
per variant: wall time, planning passes, queued jobs scanned, µs per scanned
job (pass time / jobs scanned, the whole pass included), time in passes, the
scheduler process's CPU time and peak RSS, and the time from the scheduler's
start to the end of its first pass. First, the time to start a scheduler's
planning core with a warm compile cache. Prints tables, asserts nothing.

    python3 benchmarks/schedulers.py [--days 1] [--variants fcfs lea_bf] [--options JSON] [--parallel 1]
"""

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time

from engine_run import ROOT, run_pair

VARIANTS = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf"]


def warm_start_seconds():
    """A fresh Python starting the planning core and planning one pass (cache warm)."""
    code = "from batloc.schedulers.planning.planner import warm_up; warm_up()"
    subprocess.run([sys.executable, "-c", code], check=True)          # fills the cache if cold
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def make_trace(path, days, seed=7):
    platform = os.path.join(ROOT, "platforms", "rackham.xml")
    subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", path, "--platform",
                    platform, "--duration", f"{days}d", "--load", "1.2", "--jobs-per-file", "8",
                    "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return platform


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=float, default=1)
    ap.add_argument("--workload", help="a Batsim workload instead of the synthetic trace")
    ap.add_argument("--platform", default=os.path.join(ROOT, "platforms", "rackham.xml"))
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--options", type=json.loads, default={}, help="extra scheduler options, as JSON")
    ap.add_argument("--parallel", type=int, default=1, help="variants run at once (each on one CPU)")
    ap.add_argument("--keep", help="keep outputs in this folder")
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="batloc-sched-")
    os.makedirs(out, exist_ok=True)
    workload = args.workload
    if not workload:
        workload = os.path.join(out, "trace.json")
        make_trace(workload, args.days)
    with open(workload) as fh:
        jobs = sum(1 for line in fh if line.lstrip().startswith('{"id"'))
    print(f"warm start of the planning core: {warm_start_seconds():.2f} s")
    print(f"workload {workload} ({jobs} jobs); options {json.dumps(args.options)}")

    def one(variant):
        return variant, run_pair(variant, args.platform, workload, os.path.join(out, variant), args.options)

    cols = ("variant", "wall s", "passes", "scanned", "us/scan", "pass s", "sched CPU s", "RSS MB", "1st pass s")
    print(("{:<8} " + "{:>11} " * (len(cols) - 1)).format(*cols))
    with cf.ThreadPoolExecutor(args.parallel) as pool:
        for variant, r in pool.map(one, args.variants):
            st = r["stats"]
            scanned = st.get("jobs_scanned", 0)
            per = 1e6 * st.get("decision_seconds", 0.0) / scanned if scanned else float("nan")
            row = (variant, f"{r['wall']:.0f}", st.get("passes", "-"), scanned, f"{per:.2f}",
                   f"{st.get('decision_seconds', float('nan')):.1f}", f"{r['sched_cpu']:.1f}",
                   f"{r['sched_rss_mb']:.0f}", f"{st.get('first_pass_seconds', float('nan')):.2f}")
            print(("{:<8} " + "{:>11} " * (len(cols) - 1)).format(*row) + ("" if r["ok"] else "  " + r["note"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
