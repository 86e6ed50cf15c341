"""Locality when storage is shared (issue 39): saturated runs on backbone platforms, and workflows.

For each backbone bandwidth (Rackham-equivalent GB/s: 5, 10, 25, 50 by default) it generates a
`rackham-backbone.xml`-style platform (`batloc platform generate --backbone-bw B --sharing SHARED`,
node links of 0.1 GB/s, 128 GB, 20 cores) with `--nodes` nodes and the backbone scaled by
nodes / 486, so that it stays the bottleneck as on Rackham (the sum of node links over the
backbone is the same: 9.7, 4.9, 1.9, 0.97); for each seed a saturated synthetic input on it
(`batloc workload synth --load L`); then runs every variant on the embedded engine (scheduler in
process), validates it (`batloc validate`) and prints, per variant, the mean over the seeds of:

- file wait (h): the paper's time spent waiting for a file (own loads + waits for others' loads),
  total over the jobs that ended;
- mean stretch (the paper's, ReferenceFlow at the node link);
- GB moved: bytes of the loads (Lustre -> node memories);
- killed by load: jobs whose load outlasted their window;
- start error (s): median |actual - predicted| start, from the predictions file (predicted_start: the
  reservation's t_k when first placed; actual: when its cores were taken), over every job, and over
  the jobs first planned for later than their submission (queued: the others start as predicted);
- compute-start error (s): median |actual - planned| start of computing of the jobs that loaded their
  file (the decision log's planned_start, t'_k, against jobs.csv's starting_time, after the load);
- the spread over the seeds of the first two (min-max), and the runs' CPU seconds.

Variants: a planning policy file name (fcfs, fcfs_bf, lea, lea_bf, lem, lem_bf), `lemg` / `lemg_bf`
(LEM with `ramp`, the gradual form), each with modifiers after a colon: `shared` (option load_model
"shared"), `W` (option ramp_scale "W": the gradual LEM's weight on W's scale), `oracle` (the Python
pass of the test oracle, `tests/oracle_planner`, much slower: the reference the compiled pass is held to,
jobs of several files and pinned outputs included).

    python benchmarks/shared_storage.py [--nodes 32] [--backbones 5 10 25 50] [--seeds 1 2 3]
        [--load 1.2] [--duration 12h] [--variants fcfs lea lea:shared ...] [--keep DIR]
        [--workflows [--workflow-variants lea lea:shared,oracle ...] [--workflow-args '--duration 6h']]
            (the six-workflow benchmark, jobs of several files, on each backbone's platform; --variants
            with no name runs only these)
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

from engine_run import run_pair

from batloc.analysis import metrics
from batloc.analysis.load import read_decisions, read_jobs, read_workload, reference_bandwidth
from batloc.analysis.predictions import read as read_predictions
from batloc.analysis.validate import verdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RACKHAM_NODES = 486
DEFAULT_VARIANTS = ["fcfs", "fcfs_bf", "lea", "lea_bf", "lea:shared", "lea_bf:shared", "lem", "lem_bf",
                    "lemg", "lemg_bf", "lemg:W", "lemg_bf:W"]
# where a job's several files matter: the Python pass (oracle) plans by their sum, the compiled by the largest
WORKFLOW_VARIANTS = ["fcfs", "lea", "lea:shared", "lea:oracle", "lea:shared,oracle"]


def batloc(*args):
    subprocess.run([sys.executable, "-m", "batloc.cli.main", *args], check=True, stdout=subprocess.DEVNULL)


def platform(folder, nodes, rackham_gbps):
    path = os.path.join(folder, f"backbone-{rackham_gbps:g}.xml")
    if not os.path.exists(path):
        scaled = rackham_gbps * 1e9 * nodes / RACKHAM_NODES
        batloc("platform", "generate", "-o", path, "--nodes", str(nodes), "--cores", "20", "--memory", "128GB",
               "--node-bw", "0.1GB/s", "--backbone-bw", f"{scaled:.0f}", "--sharing", "SHARED",
               "--name", f"backbone-{rackham_gbps:g}")
    return path


def workload(folder, plat, seed, load, duration):
    path = os.path.join(folder, f"saturated-{seed}.json")
    if not os.path.exists(path):
        batloc("workload", "synth", "-o", path, "--platform", plat, "--load", str(load), "--duration", duration,
               "--seed", str(seed))
    return path


def scheduler(variant, folder):
    """(file name, options, the scheduler file to load or None) of a variant `name[:mod,...]`."""
    name, _, mods = variant.partition(":")
    mods = set(filter(None, mods.split(",")))
    options = {}
    bf = name.endswith("_bf")
    base = name[:-3] if bf else name
    if base == "lemg":
        base, options["ramp"] = "lem", [0.5, 1.0]
    unknown = mods - {"shared", "W", "oracle"}
    if unknown:
        sys.exit(f"shared_storage.py: unknown modifier(s) {', '.join(sorted(unknown))} in {variant}")
    if "shared" in mods:
        options["load_model"] = "shared"
    if "W" in mods:
        options["ramp_scale"] = "W"
    if "oracle" not in mods:
        return base + ("_bf" if bf else ""), options, None
    shim = os.path.join(folder, "oracle_" + variant.replace(":", "_").replace(",", "_") + ".py")
    cls = "O" + os.path.basename(shim)[1:-3]
    with open(shim, "w") as fh:
        fh.write(f"import sys\nsys.path.insert(0, {os.path.join(ROOT, 'tests')!r})\n"
                 "from oracle_planner.scheduler import oracle_class\n"
                 f"{cls} = oracle_class({base!r}, {bf!r})\n")
    return base + ("_bf" if bf else ""), options, shim


def measure(variant, plat, wl, folder):
    name, options, shim = scheduler(variant, folder)
    prefix = os.path.join(folder, os.path.basename(wl)[:-5] + "-" + variant.replace(":", "-").replace(",", "-"))
    r = run_pair(name, plat, wl, prefix, {**options, "predictions": True}, in_process=True, path=shim)
    if not r["ok"]:
        return dict(variant=variant, ok=False, note=r["note"])
    valid, lines = verdict(prefix, wl, plat, options.get("cache", "paper"))
    jobs = read_jobs(prefix + "_jobs.csv")
    decisions = read_decisions(prefix + "_decisions.csv")
    table = metrics.per_job(jobs, read_workload(wl), decisions, reference_bandwidth(plat))
    run = metrics.per_run(table, jobs)
    first = decisions[decisions["cache"] != "full"].drop_duplicates("job_id", keep="first")
    moved = float(first.loc[first["cache"].str.contains("miss"), "input_size"].sum())
    p = read_predictions(prefix + "_predictions.csv")
    errors = (p["starting_time"] - p["predicted_start"]).abs()
    queued = p["predicted_start"] > p["predicted_at"] + 1e-6          # first planned for later than then
    own = jobs.drop_duplicates("full_id", keep="last").set_index("full_id")
    loads = first[first["cache"].str.contains("miss")].set_index("job_id")["planned_start"]
    compute = (own["starting_time"].reindex(loads.index) - loads).abs().dropna()
    return dict(variant=variant, ok=valid["valid"], violations=valid["violations"], note="; ".join(lines[:2]),
                file_wait=run["total_load_time"] / 3600, stretch=run["mean_stretch"], moved=moved / 1e9,
                killed_by_load=run["jobs_killed_by_load"], start_err=float(errors.median()),
                queued_err=float(errors[queued].median()) if queued.any() else float("nan"),
                compute_err=float(compute.median()) if len(compute) else float("nan"),
                cpu=r["engine_cpu"] + (r["sched_cpu"] or 0.0))


def summarise(rows):
    ok = [r for r in rows if "stretch" in r]
    if not ok:
        return None
    mean = {k: statistics.fmean(r[k] for r in ok) for k in ("file_wait", "stretch", "moved", "killed_by_load",
                                                                 "start_err", "queued_err", "compute_err", "cpu")}
    mean["spread"] = (min(r["file_wait"] for r in ok), max(r["file_wait"] for r in ok),
                      min(r["stretch"] for r in ok), max(r["stretch"] for r in ok))
    mean["valid"] = all(r["ok"] for r in rows) and len(ok) == len(rows)
    mean["runs"] = len(ok)
    return mean


HEADER = (f"{'backbone':>8} {'variant':<15} {'file wait h':>11} {'stretch':>8} {'GB moved':>9} {'killed':>7} "
          f"{'start err s':>11} {'queued s':>9} {'compute err s':>13} {'wait min-max':>15} {'stretch min-max':>16} "
          f"{'CPU s':>6} valid")


def line(backbone, variant, m):
    if m is None:
        return f"{backbone:>8g} {variant:<15} failed"
    lo_w, hi_w, lo_s, hi_s = m["spread"]
    return (f"{backbone:>8g} {variant:<15} {m['file_wait']:>11.1f} {m['stretch']:>8.2f} {m['moved']:>9.0f} "
            f"{m['killed_by_load']:>7.1f} {m['start_err']:>11.0f} {m['queued_err']:>9.0f} {m['compute_err']:>13.0f} "
            f"{lo_w:>7.1f}-{hi_w:<7.1f} {lo_s:>7.2f}-{hi_s:<8.2f} {m['cpu']:>6.0f} "
            f"{'yes' if m['valid'] else 'NO'}{'' if m['runs'] == 3 else ' (' + str(m['runs']) + ' runs)'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=32, help="nodes of 20 cores (default 32)")
    ap.add_argument("--backbones", type=float, nargs="+", default=[5, 10, 25, 50],
                    help="Rackham-equivalent backbone bandwidths, GB/s (scaled by nodes / 486)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--load", type=float, default=1.2, help="offered load of the synthetic input (default 1.2)")
    ap.add_argument("--duration", default="12h", help="its submission period (default 12h)")
    ap.add_argument("--variants", nargs="*", default=DEFAULT_VARIANTS, help="none: only the workflows")
    ap.add_argument("--keep", help="folder for the inputs and runs (default: a temporary one)")
    ap.add_argument("--workflows", action="store_true",
                    help="also run benchmarks/workflows.py's six workflows on each backbone's platform")
    ap.add_argument("--workflow-variants", nargs="+", default=WORKFLOW_VARIANTS,
                    help=f"variants of the workflow runs, modifiers allowed (default {' '.join(WORKFLOW_VARIANTS)})")
    ap.add_argument("--workflow-args", default="", help="more arguments of workflows.py, one string "
                                                        "(e.g. '--duration 6h --start 2h')")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="batloc-shared-storage-")
    os.makedirs(folder, exist_ok=True)
    print(f"{args.nodes} nodes x 20 cores, 0.1 GB/s SHARED node links, 128 GB; saturated synthetic input "
          f"(load {args.load}, {args.duration}); seeds {' '.join(map(str, args.seeds))}", flush=True)
    print(HEADER, flush=True)
    results = {}
    for backbone in args.backbones:
        plat = platform(folder, args.nodes, backbone)
        for variant in args.variants:
            rows = []
            for seed in args.seeds:
                wl = workload(folder, plat, seed, args.load, args.duration)
                sub = os.path.join(folder, f"backbone-{backbone:g}")
                os.makedirs(sub, exist_ok=True)
                m = measure(variant, plat, wl, sub)
                if not m["ok"]:
                    print(f"  {variant} seed {seed}: {m.get('violations') or ''} {m['note']}", flush=True)
                rows.append(m)
            results[(backbone, variant)] = summarise(rows)
            print(line(backbone, variant, results[(backbone, variant)]), flush=True)
    with open(os.path.join(folder, "results.json"), "w") as fh:
        json.dump({f"{b:g} {v}": m for (b, v), m in results.items()}, fh, indent=1)
    print("file wait: own loads + waits for others' (h, total); stretch: mean; GB moved: loads; killed: by their "
          "load;\nstart err: median |start - predicted start| (predictions file), over all jobs and the queued ones; "
          "compute err: median |computing start - planned (t'_k)| of the jobs that loaded; means over the seeds")
    if args.workflows:
        for backbone in args.backbones:
            plat = platform(folder, args.nodes, backbone)
            print(f"\nThe six workflows (jobs of several files) on the {backbone:g} GB/s platform:", flush=True)
            subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "workflows.py"), "--platform", plat,
                            "--keep", os.path.join(folder, f"workflows-{backbone:g}"),
                            "--variants", *args.workflow_variants, *shlex.split(args.workflow_args)], check=False)


if __name__ == "__main__":
    main()
