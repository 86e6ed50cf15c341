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
                                       [--workload day.json] [--in-process] [--instant] [--floor]

With --floor each variant is followed by its replay floor (schedulers/replay.py: the
run's own decisions committed again, no planning), a row named ``<variant>/floor``
whose outputs must equal the run's byte for byte (its note says so or names the
file that differs), and the ratio of the variant's CPU sum to the floor's.
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


OUTPUTS = ("jobs", "schedule", "machine_states", "decisions", "predictions")


def variant_rows(variant, platform, workload, out, options, in_process=False, floor=False,
                 engine_args=()):
    """The variant's row, and with `floor` its replay floor's row after it."""
    result = run_variant(variant, platform, workload, out, options, in_process, engine_args)
    if not floor or not result["ok"]:
        return [result]
    prefix, r = os.path.join(out, variant), result["run"]
    again = os.path.join(out, variant + "-floor")
    f = run_pair("replay", platform, workload, again, {**options, **replayed_options(variant), "replay": prefix},
                 in_process, engine_args)
    differ = [n for n in OUTPUTS if not same_file(f"{prefix}_{n}.csv", f"{again}_{n}.csv")]
    row_f = dict(variant=variant + "/floor", wall=f["wall"], ok=f["ok"] and not differ, run=f,
                 note=f"outputs differ: {', '.join(differ)}" if differ else
                 ("same outputs" if f["ok"] else f["note"]))
    if f["ok"] and f.get("sched_cpu") is not None and r.get("sched_cpu") is not None:
        ratio = (r["engine_cpu"] + r["sched_cpu"]) / (f["engine_cpu"] + f["sched_cpu"])
        row_f["note"] += f"; {variant} / floor = {ratio:.2f}x (CPU sums)"
    return [result, row_f]


def replayed_options(variant):
    """The options a variant's file forces (fcfs_bf.py: backfilling), for its replay."""
    return {"backfilling": True} if variant.endswith("_bf") else {}


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


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
            f"{r['note']}{walk_note(st)}")


def walk_note(st):
    """Where the standing plan's walks stopped, when the scheduler counted it."""
    if "walk_stops_dearer" not in st:
        return ""
    return (f"; walks stopped: node dearer {st['walk_stops_dearer']}, move cap {st['walk_stops_cap']}, "
            f"LEM flag {st['walk_stops_flag']}; compactions {st['compactions']}; replayed {st['replayed']}"
            + (f"; walked jobs settled by the least bound {st['walk_settled']}, changed nodes bounded "
               f"{st['walk_bounded']}" if "walk_bounded" in st else "")
            + (f"; chosen again where their node got dearer {st['chosen_dearer']}" if st.get("chosen_dearer") else "")
            + (f"; chosen again under LEM's other flag {st['flag_chosen']} (nodes reloaded {st['flag_reloaded']})"
               if st.get("flag_chosen") else "")
            + cycle_note(st))


def cycle_note(st):
    """The passes' cycles by part, as shares of the passes' own (the rest: the pass's bookkeeping)."""
    whole = st.get("cycles_pass")
    if not whole:
        return ""
    parts = ("compact", "reload", "walk", "drop", "place")
    placed = st.get("jobs_scanned") or 1
    return ("; pass cycles " + f"{whole / 1e9:.1f} G: "
            + ", ".join(f"{part} {100 * st[f'cycles_{part}'] / whole:.0f} %" for part in parts)
            + f" (choosing nodes {100 * st['cycles_choose'] / whole:.0f} %, of which listing the nodes that know the "
              f"file or whose gaps fit the job {100 * st['cycles_list'] / whole:.0f} %: "
              f"{st['listed'] / placed:.1f} a choice; the jobs left's minima {100 * st['cycles_left'] / whole:.0f} %, "
              f"the gaps from now {100 * st['cycles_gaps'] / whole:.0f} %"
            + (f", reserving {100 * st['cycles_reserve'] / whole:.0f} %" if "cycles_reserve" in st else "") + ")"
            + (f"; listed nodes scored {st['scored_from_list'] / placed:.1f} a choice, listed again under their "
               f"gaps' bound {st['listed_again'] / placed:.1f}" if "listed_again" in st else ""))


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
    ap.add_argument("--floor", action="store_true",
                    help="after each variant, its replay floor (schedulers/replay.py) and the ratio to it")
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
        futures = [pool.submit(variant_rows, v, platform, workload, out, args.options, args.in_process, args.floor,
                               engine_args)
                   for v in args.variants]
        for fut in cf.as_completed(futures):
            for r in fut.result():
                results.append(r)
                print(row(r), flush=True)
    base = next((r["loaded"] for r in results if r["variant"] == "fcfs" and "loaded" in r), None)
    if base:
        print("data loaded vs FCFS: " + ", ".join(f"{r['variant']} {r['loaded'] / base:.2f}"
                                                   for r in results if r.get("loaded") is not None))
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
