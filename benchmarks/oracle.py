"""Issues 16 and 19: batloc against the authors' C simulator on the oracle input.

Runs the engine + a batloc scheduler on the oracle workload (platforms/rackham.xml)
for the chosen variants (default: all ten) and scheduler options, then prints, per variant, batloc
beside the authors' ``aggregates.csv``: total transfer, total wait for another
job's load, their sum (the paper's "time spent waiting for a file"), mean stretch
over evaluated jobs, their relative differences, and the share of evaluated jobs
whose per-job transfer + wait equals the authors' (to the second: the C simulator
counts whole seconds), and the CPU time of engine + scheduler beside the C simulator's
(``aggregates.csv``'s ``c_cpu_s``, when it has one). docs/authors-simulator.md says what the C model does.

    python benchmarks/oracle.py [--variants fcfs lea] [--options JSON] [--keep DIR [--reuse]]
    python benchmarks/oracle.py --parallel 1 --options '{"profile": "authors"}'   # docs/reproduction.md

The oracle folder is ``$BATLOC_ORACLE``, else ``../shared/data/oracle`` relative to the
repository's root. Skips (exit 0) when it is absent. The workload run is the
authors' text input converted with ``batloc workload from-gonthier
--history-node`` (``oracle-s2.json`` with each job running at t0 keeping its
node, for ``pin_history_node``), or ``oracle-s2.json`` when the text is absent.
"""

import argparse
import concurrent.futures as cf
import csv
import glob
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from saturated_day import ROOT, run_variant  # noqa: E402  (sibling benchmark script)

from batloc.analysis.authors import compare, per_job  # noqa: E402
from batloc.analysis.validate import verdict  # noqa: E402
from batloc.schedulers.engine_mode import wants_instant_engine  # noqa: E402
from batloc.schedulers.planning.options import SchedulerOptions  # noqa: E402
from batloc.workloads import pipeline  # noqa: E402

# The oracle folder: $BATLOC_ORACLE, else ../shared/data/oracle beside the repository.
ORACLE = os.environ.get("BATLOC_ORACLE") or os.path.join(os.path.dirname(ROOT), "shared", "data", "oracle")
VARIANTS = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf"]


def rel(pair):
    ours, theirs = pair
    return (ours - theirs) / theirs * 100 if theirs else float("nan")


def print_table(rows):
    print(f"{'variant':<8} {'done':>5} | {'transfer h b/a':>15} {'Δ%':>6} | {'wait h b/a':>13} {'Δ%':>6} | "
          f"{'sum h b/a':>15} {'Δ%':>6} | {'stretch b/a':>13} {'Δ%':>6} | {'exact':>6} {'valid':>5} {'wall s':>7}  note")
    for r in rows:
        if "transfer" not in r:
            print(f"{r['variant']:<8} {'-':>5} | {'' if 'valid' in r else 'run failed: '}{r['note']}")
            continue
        cells = []
        for key, scale, fmt in (("transfer", 3600, "{:7.1f}/{:<7.1f}"), ("wait", 3600, "{:6.1f}/{:<6.1f}"),
                                ("total", 3600, "{:7.1f}/{:<7.1f}"), ("stretch", 1, "{:6.3f}/{:<6.3f}")):
            ours, theirs = r[key]
            cells.append(fmt.format(ours / scale, theirs / scale) + f" {rel(r[key]):+6.1f}")
        print(f"{r['variant']:<8} {r['completed']:>5} | " + " | ".join(cells)
              + f" | {r['exact'] * 100:5.1f}% {'yes' if r['valid'] else 'NO':>5} {r['wall']:>7.0f}  {r['note']}")
    timed = [r for r in rows if "cpu" in r]
    if timed:
        print("CPU seconds, engine + scheduler over ZeroMQ (batloc / the C simulator's, aggregates.csv):")
        for r in timed:
            ours, theirs = r["cpu"]
            print(f"  {r['variant']:<8} {ours:7.1f} / {theirs:7.1f}  = {ours / theirs:5.2f}x")
    base = next((r for r in rows if r["variant"] == "fcfs" and "total" in r), None)
    if base is not None and len(rows) > 1:
        print("time waiting for a file vs FCFS (batloc / authors):")
        for r in rows:
            if "total" in r and r is not base:
                print(f"  {r['variant']:<8} {rel((r['total'][0], base['total'][0])):+6.1f}% / "
                      f"{rel((r['total'][1], base['total'][1])):+6.1f}%")


def authors_cpu(variant, oracle):
    """The C simulator's CPU seconds for the variant (``aggregates.csv``'s ``c_cpu_s``), or NaN."""
    with open(os.path.join(oracle, "aggregates.csv")) as fh:
        for r in csv.DictReader(fh):
            if r["variant"] == variant.replace("_", "-") and r.get("c_cpu_s"):
                return float(r["c_cpu_s"])
    return float("nan")


def authors_text(oracle):
    """The oracle's input in the authors' format (``*.gonthier.txt``), or None."""
    texts = sorted(glob.glob(os.path.join(oracle, "*.gonthier.txt")))
    return texts[0] if texts else None


def workload_in(oracle, out):
    """The workload to run: the authors' text with its history nodes, converted into ``out`` once."""
    text = authors_text(oracle)
    if text is None:
        return os.path.join(oracle, "oracle-s2.json")
    name = os.path.basename(text)[:-len(".gonthier.txt")]
    path = os.path.join(out, name + ".history.json")
    if not os.path.exists(path):
        sizes = pipeline.platform_sizes(os.path.join(ROOT, "platforms", "rackham.xml"))
        table, _ = pipeline.convert(text, "gonthier", sizes, sharing="keep", sessions=0, history_node=True)
        pipeline.write(table, path, sizes.nb_res)
    return path


def run_one(variant, platform, workload, out, options, reuse, oracle_dir):
    prefix = os.path.join(out, variant)
    if reuse and os.path.exists(prefix + "_jobs.csv"):
        result = dict(variant=variant, wall=0.0, ok=True, note="reused outputs")
    else:
        # the authors profile runs the engine's instant mode, as robin and --in-process give it
        result = run_variant(variant, platform, workload, out, options,
                             engine_args=["--instant"] if wants_instant_engine(options) else [])
    if not os.path.exists(prefix + "_jobs.csv") or not os.path.exists(prefix + "_decisions.csv"):
        return dict(variant=variant, wall=result["wall"], note=result.get("note", "no outputs"))
    # `batloc validate` under the memory model the run declared (a profile may set it)
    checked, lines = verdict(prefix, workload, platform, SchedulerOptions.from_dict(options).cache)
    if not os.path.exists(os.path.join(oracle_dir, "per-job", variant.replace("_", "-") + ".csv")):
        # a variant asked for that the oracle has no C results for (oracle-saturated: LEO-BF, LEM-BF)
        return dict(variant=variant, wall=result["wall"], valid=checked["valid"],
                    note=f"no authors' results; valid {'yes' if checked['valid'] else 'NO'}"
                         + (f": {lines[0]}" if lines else ""))
    row = compare(variant, per_job(prefix, workload, platform), oracle_dir)
    run = result.get("run", {})
    if run.get("engine_cpu") is not None and run.get("sched_cpu") is not None:
        row["cpu"] = (run["engine_cpu"] + run["sched_cpu"], authors_cpu(variant, oracle_dir))
    row.update(wall=result["wall"], valid=checked["valid"],
               note=lines[0] if lines else result.get("note", "") if not result.get("ok", True) else "")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS,
                    help="default: every one the oracle has C results for (per-job/<variant>.csv)")
    ap.add_argument("--options", type=json.loads, default={},
                    help='scheduler options as JSON, e.g. \'{"scheduling_period": 30}\' (default: the paper\'s)')
    ap.add_argument("--oracle", default=ORACLE, help=f"oracle folder (default {ORACLE}, or $BATLOC_ORACLE)")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--keep", help="keep outputs in this folder")
    ap.add_argument("--reuse", action="store_true", help="with --keep: analyse existing outputs instead of rerunning")
    args = ap.parse_args()
    if not (authors_text(args.oracle) or os.path.exists(os.path.join(args.oracle, "oracle-s2.json"))) \
            or not os.path.exists(os.path.join(args.oracle, "aggregates.csv")):
        print(f"skipped: no oracle input at {args.oracle}")
        return 0
    variants = args.variants or [v for v in VARIANTS if os.path.exists(
        os.path.join(args.oracle, "per-job", v.replace("_", "-") + ".csv"))]
    platform = os.path.join(ROOT, "platforms", "rackham.xml")
    out = args.keep or tempfile.mkdtemp(prefix="batloc-oracle-")
    os.makedirs(out, exist_ok=True)
    workload = workload_in(args.oracle, out)
    print(f"workload {workload}; outputs in {out}"
          + (f"; scheduler options {json.dumps(args.options)}" if args.options else ""))
    with cf.ThreadPoolExecutor(args.parallel) as pool:
        rows = list(pool.map(lambda v: run_one(v, platform, workload, out, args.options, args.reuse,
                                               args.oracle), variants))
    print_table(rows)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all("transfer" in r or r.get("valid") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
