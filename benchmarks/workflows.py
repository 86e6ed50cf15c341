"""Concurrent WfCommons workflows on Rackham under a synthetic background load: FCFS against LEA (± BF).

Builds the input, then runs each variant on the embedded engine (scheduler in
process) and `batloc validate`s it. A variant is any batloc policy of
`schedulers/` (the planning family: fcfs, lea_bf, ...; file-sharing: met, mct,
sa, jdp_dll, online_hps; plain: cons_tabu), or `proxy:NAME`: NAME (a pybatsim
stock scheduler such as easyBackfill or schedFcfs, or a batloc policy run with
ignore_files) behind the staging proxy. A policy takes benchmarks/shared_storage.py's
modifiers after a colon: `lea:shared` (load_model "shared"), `lea:oracle` (the
Python pass of tests/oracle_planner, which plans a job of several files by their
sum), `lea:shared,oracle`. Option `write_back` goes to the planning family only:
the others write outputs back at once (their rows say so). Prints per variant: workflow makespan
(mean and max over the workflows), critical-path stretch (mean), output
reuse (share of output reads served from memory, over every workflow), data
moved by the workflows (from Lustre, from other nodes' memories, written
back), the background's mean wait, and the run's CPU seconds.

Input: WfCommons instances generated here with the `wfcommons` package's
recipes (1000Genome, Montage, Epigenomics by default, any of the package's with
--recipes; seeded; `pip install wfcommons`)
or given with --instances; a background from `batloc workload synth`
(--load, --duration); the workflows folded in by `batloc workload
from-wfcommons` (--start, --every, --copies, --size-scale).

    python benchmarks/workflows.py [--variants fcfs fcfs_bf lea lea_bf] [--keep DIR] [--tasks 60] [--recipes ...]
                                   [--load 0.85] [--duration 12h] [--copies 2] [--size-scale 40]
                                   [--options '{"cache": "lru"}'] [--platform P.xml]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import uuid
from unittest import mock

from engine_run import run_pair, run_proxied
from shared_storage import scheduler as policy_variant

from batloc.analysis.load import read_decisions, read_jobs
from batloc.analysis.memory_model import memory_model
from batloc.analysis.validate import verdict
from batloc.analysis.workflows import WorkflowJobs, gantt, per_workflow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORM = os.path.join(ROOT, "platforms", "rackham.xml")
RECIPES = ("1000genome", "montage", "epigenomics")
PLANNING = {"fcfs", "eft", "lea", "leo", "lem"}
PLAIN = {"cons_tabu", "io_list", "io_pack", "io_pack_char", "io_pack_max", "io_pack_random"}   # no option stats


def generate_instances(folder, tasks, seed, recipes=RECIPES):
    """WfCommons instances of about `tasks` tasks from the package's recipes (seeded): `recipes` names
    them as the package does (1000genome is its GenomeRecipe; blast, bwa, cycles, rnaseq, seismology,
    soykb, srasearch...)."""
    try:
        import numpy as np
        from wfcommons import WorkflowGenerator
        from wfcommons.wfchef import recipes as known
    except ImportError:
        sys.exit("benchmarks/workflows.py: the wfcommons package generates the instances: pip install wfcommons "
                 "(or give --instances FILE...)")
    paths = []
    for i, name in enumerate(recipes):
        recipe = getattr(known, ("Genome" if name == "1000genome" else name.capitalize()) + "Recipe", None)
        if recipe is None:
            sys.exit(f"benchmarks/workflows.py: wfcommons has no recipe {name!r}")
        random.seed(seed + i)
        np.random.seed(seed + i)
        # the package names files and duplicated tasks by uuid4 (os.urandom): seeded here, so that the same
        # arguments give the same instance, file names included
        names = random.Random(seed + i)
        seeded = lambda: uuid.UUID(int=names.getrandbits(128), version=4)   # noqa: E731
        try:
            with mock.patch("uuid.uuid4", seeded), mock.patch("wfcommons.wfchef.duplicate.uuid4", seeded):
                wf = WorkflowGenerator(recipe.from_num_tasks(tasks)).build_workflow()
        except ValueError as e:     # the recipe's smallest graph is larger than asked
            sys.exit(f"benchmarks/workflows.py: recipe {name}: {e} (raise --tasks)")
        path = os.path.join(folder, f"{name}.json")
        wf.write_json(path)
        paths.append(path)
    return paths


def batloc(*args):
    subprocess.run([sys.executable, "-m", "batloc.cli.main", *args], check=True, stdout=subprocess.DEVNULL)


def build(folder, args):
    global PLATFORM
    if args.platform:
        PLATFORM = os.path.abspath(args.platform)
    instances = args.instances or generate_instances(folder, args.tasks, args.seed, args.recipes)
    bg = os.path.join(folder, "background.json")
    wl = os.path.join(folder, "workload.json")
    batloc("workload", "synth", "-o", bg, "--load", str(args.load), "--duration", args.duration,
           "--platform", PLATFORM, "--seed", str(args.seed))
    batloc("workload", "from-wfcommons", *instances, "-o", wl, "--background", bg, "--start", args.start,
           "--every", args.every, "--copies", str(args.copies), "--size-scale", str(args.size_scale),
           "--platform", PLATFORM, *(["--walltime-factor", str(args.walltime_factor)] if args.walltime_factor else []))
    return wl


def on_real_batsim(variant, wl, prefix, options, path=None):
    """`variant` (a policy, or proxy:NAME) on real Batsim 4.2.1 ($BATLOC_REF_BATSIM, a build prefix), over
    ZeroMQ, the scheduler's file `path` if given: run_pair's dict."""
    from batloc.processes import pybatsim_command
    from real_batsim import real_batsim, run

    engine, env = real_batsim(os.environ["BATLOC_REF_BATSIM"])
    name = variant.split(":", 1)[-1]
    path = path or os.path.join(ROOT, "schedulers", name + ".py")
    sched = pybatsim_command() + [path if os.path.exists(path) else name, "-v", "warning", "--timeout=3600000"]
    if variant.startswith("proxy:"):
        if name.split("_")[0] in PLANNING:
            sched += ["-o", json.dumps({"ignore_files": True})]

        def argv(endpoint):
            return [sys.executable, "-m", "batloc.adapters.cli", "-q", "--bind", endpoint, "--export-prefix", prefix,
                    "--cache", options.get("cache", "paper"), "--", *sched]
    else:
        opts = {**options, "export_prefix": prefix}

        def argv(endpoint):
            return sched + ["-o", json.dumps(opts), "-s", endpoint]
    t0 = os.times()
    ok, note, wall, _, _ = run(engine, env, PLATFORM, wl, prefix, argv, True)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return dict(ok=ok, note=note, engine_cpu=cpu, sched_cpu=0.0)


def measure(variant, wl, out, options, real=False):
    prefix = os.path.join(out, ("batsim-" if real else "") + variant.replace(":", "-").replace(",", "-"))
    proxied = variant.startswith("proxy:")
    path, instant = None, False
    if not proxied:     # a policy with shared_storage.py's modifiers (lea:shared,oracle ...)
        name, extra, path = policy_variant(variant, out)
        options = {**options, **extra}
        if name.split("_")[0] not in PLANNING and "write_back" in options:
            # the file-sharing and plain families write outputs back at once (contract §2b): no option
            options = {k: v for k, v in options.items() if k != "write_back"}
            instant = True
    else:
        instant = "write_back" in options       # the staging proxy has no staged write-back either
    if real:
        r = on_real_batsim(variant if proxied else name, wl, prefix, options, path)
        cache = options.get("cache", "paper") if proxied else memory_model({"policy": name, "options": options})
    elif proxied:
        inner = variant.split(":", 1)[1]
        # a planning policy behind the proxy knows no files (the proxy loads them)
        inner_options = {"ignore_files": True} if inner.split("_")[0] in PLANNING else None
        cache = options.get("cache", "paper")
        r = run_proxied(inner, PLATFORM, wl, prefix, ["--cache", cache], inner_options)
    else:
        r = run_pair(name, PLATFORM, wl, prefix, options, in_process=True, stats=name not in PLAIN, path=path)
        cache = memory_model({"policy": name, "options": options})
    if not r["ok"]:
        return dict(variant=variant, ok=False, note=r["note"])
    valid, lines = verdict(prefix, wl, PLATFORM, cache)
    jobs, decisions = read_jobs(prefix + "_jobs.csv"), read_decisions(prefix + "_decisions.csv")
    wf = WorkflowJobs.read(wl)
    table = per_workflow(jobs, decisions, wf)
    wf_ids = set(wf.jobs)
    own = jobs[(jobs["workload_name"] == "w0") & ~jobs["job_id"].isin(wf_ids)]
    return dict(variant=variant, ok=valid["valid"], table=table, prefix=prefix, wf=wf,
                bg_wait=float((own["starting_time"] - own["submission_time"]).mean()),
                cpu=r["engine_cpu"] + (r["sched_cpu"] or 0.0), note="; ".join(lines[:3]),
                violations=valid["violations"], replayed=cache, instant=instant)


def row(m):
    if not m["ok"] and "table" not in m:
        return f"{m['variant']:<9} failed: {m['note']}"
    if m["table"].empty:
        return f"{m['variant']:<9} no workflow ran: {m['note']}"
    t = m["table"]
    reads, hits = t["output_reads"].sum(), t["output_hits"].sum()
    gb = 1e9
    whole = t[t["completed"] == t["tasks"]]      # makespans of the workflows every task of which completed
    return (f"{m['variant']:<18} {whole['makespan'].mean() / 3600:>9.2f} {whole['makespan'].max() / 3600:>8.2f} "
            f"{whole['cp_stretch'].mean():>8.2f} {hits / reads if reads else float('nan'):>7.1%} "
            f"{t['bytes_from_lustre'].sum() / gb:>9.1f} {t['bytes_from_nodes'].sum() / gb:>8.1f} "
            f"{t['bytes_written_back'].sum() / gb:>8.1f} {m['bg_wait'] / 3600:>8.2f} {m['cpu']:>7.0f} "
            f"{'yes' if m['ok'] else 'NO':>5}  {len(whole)}/{len(t)} workflows, "
            f"{int(t['completed'].sum())}/{int(t['tasks'].sum())} tasks"
            + ("" if m["ok"] else f"  {m['violations']}")
            + ("" if m["replayed"] else "  (memory not replayed: value model)")
            + ("  (written back at once: the family has no staged write-back)" if m["instant"] else ""))


HEADER = (f"{'variant':<18} {'makespan':>9} {'max':>8} {'CP str.':>8} {'reuse':>7} {'Lustre':>9} {'nodes':>8} "
          f"{'back':>8} {'bg wait':>8} {'CPU s':>7} {'valid':>5}")
LEGEND = ("makespan: mean over the workflows that completed whole, and max (h); CP str.: mean makespan / critical\n"
          "path; a task killed at its window's end takes its descendants with it (rejected); reuse: output\n"
          "reads served from memory; Lustre, nodes, back: GB the workflows loaded from Lustre, from other nodes'\n"
          "memories, and wrote back; bg wait: the background jobs' mean wait (h); CPU: engine + scheduler")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=["fcfs", "fcfs_bf", "lea", "lea_bf"])
    ap.add_argument("--instances", nargs="+", help="WfFormat files (default: generated from the recipes)")
    ap.add_argument("--tasks", type=int, default=60, help="tasks per generated instance (default 60)")
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES),
                    help=f"wfcommons recipes of the generated instances (default {' '.join(RECIPES)})")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--load", type=float, default=0.85, help="background's offered load (default 0.85)")
    ap.add_argument("--duration", default="12h", help="background's submission period (default 12h)")
    ap.add_argument("--start", default="4h", help="first workflow's arrival (default 4h)")
    ap.add_argument("--every", default="20min", help="time between workflow arrivals (default 20min)")
    ap.add_argument("--copies", type=int, default=2, help="workflows per instance (default 2)")
    ap.add_argument("--size-scale", type=float, default=40.0, help="file sizes x (default 40)")
    ap.add_argument("--walltime-factor", type=float,
                    help="a task's walltime over its run time + loads at the node link (from-wfcommons' default, 2)")
    ap.add_argument("--options", default="{}", help="JSON options for every variant")
    ap.add_argument("--platform", help="platform XML (default platforms/rackham.xml; write_back staged needs one "
                                       "from `batloc platform generate --node-routes`)")
    ap.add_argument("--keep", help="folder to keep the inputs and runs in (default: a temporary one)")
    ap.add_argument("--gantt", help="draw the first workflow of each variant into this folder")
    ap.add_argument("--real-batsim", action="store_true",
                    help="run on real Batsim 4.2.1 (the build prefix in $BATLOC_REF_BATSIM) over ZeroMQ, not the "
                         "embedded engine")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="batloc-workflows-")
    os.makedirs(folder, exist_ok=True)
    wl = build(folder, args)
    with open(wl) as fh:
        meta = json.load(fh)["batloc"]["workflows"]
    print(f"{len(meta)} workflows ({', '.join(sorted({w['instance'] for w in meta}))}), "
          f"{sum(w['tasks'] for w in meta)} tasks, on {os.path.basename(PLATFORM)}; background load {args.load} "
          f"over {args.duration}; arrivals from {args.start} every {args.every}; sizes x {args.size_scale}")
    print(HEADER)
    options = json.loads(args.options)
    for v in args.variants:
        m = measure(v, wl, folder, options, args.real_batsim)
        print(row(m), flush=True)
        if args.gantt and "table" in m:
            os.makedirs(args.gantt, exist_ok=True)
            first = m["table"]["workflow"].iloc[0]
            gantt(read_jobs(m["prefix"] + "_jobs.csv"), read_decisions(m["prefix"] + "_decisions.csv"), m["wf"],
                  first, os.path.join(args.gantt, f"{v}-{first}"), f"{v}: workflow {first} by task")
    print(LEGEND)


if __name__ == "__main__":
    main()
