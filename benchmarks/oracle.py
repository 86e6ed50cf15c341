"""Issue 16: batloc against the authors' C simulator on the oracle input.

Runs the engine + a batloc scheduler on ``oracle-s2.json`` (platforms/rackham.xml)
for the chosen variants and scheduler options, then prints, per variant, batloc
beside the authors' ``aggregates.csv``: total transfer, total wait for another
job's load, their sum (the paper's "time spent waiting for a file"), mean stretch
over evaluated jobs, their relative differences, and the share of evaluated jobs
whose per-job transfer + wait equals the authors' (to the second: the C simulator
counts whole seconds). docs/authors-simulator.md says what the C model does.

    python benchmarks/oracle.py [--variants fcfs lea] [--options JSON] [--keep DIR [--reuse]]

Skips (exit 0) when the oracle folder is absent.
"""

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import sys
import tempfile

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from saturated_day import ROOT, run_variant  # noqa: E402  (sibling benchmark script)

from batloc.analysis import load, metrics  # noqa: E402

ORACLE = os.environ.get("BATLOC_ORACLE", "/work/shared/data/oracle")
VARIANTS = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf"]
# The authors' stretch divides by the delay plus one load on an empty cluster (their
# ReferenceFlow uses the job's delay, not its measured run time): README of the oracle.
AUTHORS_BANDWIDTH = 0.1e9


def authors_name(variant):
    return variant.replace("_", "-")


def profile_delays(workload_path):
    """Job id -> the delay of its profile (the authors' stretch denominator needs it)."""
    with open(workload_path) as f:
        data = json.load(f)
    profiles = data.get("profiles", {})
    return {str(j["id"]): float(profiles[j["profile"]]["delay"]) for j in data["jobs"]}


def batloc_jobs(prefix, workload_path, platform, delays):
    """Per evaluated job: transfer, file wait and the authors' stretch, from batloc's outputs."""
    workload = load.read_workload(workload_path)
    jobs = load.read_jobs(f"{prefix}_jobs.csv")
    decisions = load.read_decisions(f"{prefix}_decisions.csv")
    table = metrics.per_job(jobs, workload, decisions, load.reference_bandwidth(platform))
    table = table[table["evaluated"]].set_index("job_id")
    reference = table.index.map(delays).astype(float) + table["input_size"] / AUTHORS_BANDWIDTH
    table["authors_stretch"] = (table["finish_time"] - table["submission_time"]) / reference
    return table


def compare(variant, table, oracle_dir):
    """One row: batloc's totals beside the authors' for this variant."""
    agg = pd.read_csv(os.path.join(oracle_dir, "aggregates.csv")).set_index("variant").loc[authors_name(variant)]
    theirs = pd.read_csv(os.path.join(oracle_dir, "per-job", authors_name(variant) + ".csv"))
    theirs = theirs.set_index(theirs["job_id"].astype(str))["transfer_plus_wait_for_load"]
    done = table[table["completed"]]
    ours = done["load_time"].round().reindex(theirs.index)
    row = dict(variant=variant, completed=len(done), evaluated=len(table),
               transfer=(done["transfer_time"].sum(), agg["total_transfer_s"]),
               wait=(done["file_wait"].sum(), agg["total_wait_load_s"]),
               total=(done["load_time"].sum(), agg["total_transfer_plus_wait_s"]),
               stretch=(done["authors_stretch"].mean(), agg["mean_stretch"]),
               exact=float((ours == theirs).sum()) / len(theirs))
    return row


def rel(pair):
    ours, theirs = pair
    return (ours - theirs) / theirs * 100 if theirs else float("nan")


def print_table(rows):
    print(f"{'variant':<8} {'done':>5} | {'transfer h b/a':>15} {'Δ%':>6} | {'wait h b/a':>13} {'Δ%':>6} | "
          f"{'sum h b/a':>15} {'Δ%':>6} | {'stretch b/a':>13} {'Δ%':>6} | {'exact':>6} {'wall s':>7}  note")
    for r in rows:
        if "transfer" not in r:
            print(f"{r['variant']:<8} {'-':>5} | run failed: {r['note']}")
            continue
        cells = []
        for key, scale, fmt in (("transfer", 3600, "{:7.1f}/{:<7.1f}"), ("wait", 3600, "{:6.1f}/{:<6.1f}"),
                                ("total", 3600, "{:7.1f}/{:<7.1f}"), ("stretch", 1, "{:6.3f}/{:<6.3f}")):
            ours, theirs = r[key]
            cells.append(fmt.format(ours / scale, theirs / scale) + f" {rel(r[key]):+6.1f}")
        print(f"{r['variant']:<8} {r['completed']:>5} | " + " | ".join(cells)
              + f" | {r['exact'] * 100:5.1f}% {r['wall']:>7.0f}  {r['note']}")
    base = next((r for r in rows if r["variant"] == "fcfs" and "total" in r), None)
    if base is not None and len(rows) > 1:
        print("time waiting for a file vs FCFS (batloc / authors):")
        for r in rows:
            if "total" in r and r is not base:
                print(f"  {r['variant']:<8} {rel((r['total'][0], base['total'][0])):+6.1f}% / "
                      f"{rel((r['total'][1], base['total'][1])):+6.1f}%")


def run_one(variant, platform, workload, out, options, reuse, delays, oracle_dir):
    prefix = os.path.join(out, variant)
    if reuse and os.path.exists(prefix + "_jobs.csv"):
        result = dict(variant=variant, wall=0.0, ok=True, note="reused outputs")
    else:
        result = run_variant(variant, platform, workload, out, options)
    if not os.path.exists(prefix + "_jobs.csv") or not os.path.exists(prefix + "_decisions.csv"):
        return dict(variant=variant, wall=result["wall"], note=result.get("note", "no outputs"))
    row = compare(variant, batloc_jobs(prefix, workload, platform, delays), oracle_dir)
    row.update(wall=result["wall"], note=result.get("note", "") if not result.get("ok", True) else "")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=["fcfs"], choices=VARIANTS)
    ap.add_argument("--options", type=json.loads, default={},
                    help='scheduler options as JSON, e.g. \'{"scheduling_period": 30}\' (default: the paper\'s)')
    ap.add_argument("--oracle", default=ORACLE, help=f"oracle folder (default {ORACLE}, or $BATLOC_ORACLE)")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--keep", help="keep outputs in this folder")
    ap.add_argument("--reuse", action="store_true", help="with --keep: analyse existing outputs instead of rerunning")
    args = ap.parse_args()
    workload = os.path.join(args.oracle, "oracle-s2.json")
    if not os.path.exists(workload) or not os.path.exists(os.path.join(args.oracle, "aggregates.csv")):
        print(f"skipped: no oracle input at {args.oracle}")
        return 0
    platform = os.path.join(ROOT, "platforms", "rackham.xml")
    out = args.keep or tempfile.mkdtemp(prefix="batloc-oracle-")
    os.makedirs(out, exist_ok=True)
    delays = profile_delays(workload)
    print(f"workload {workload}; outputs in {out}"
          + (f"; scheduler options {json.dumps(args.options)}" if args.options else ""))
    with cf.ThreadPoolExecutor(args.parallel) as pool:
        rows = list(pool.map(lambda v: run_one(v, platform, workload, out, args.options, args.reuse,
                                               delays, args.oracle), args.variants))
    print_table(rows)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all("transfer" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
