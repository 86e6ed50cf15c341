"""`batloc demo`: the whole pipeline in about a minute, on the embedded engine.

Generates a 32-node Rackham-like platform and a saturated synthetic day whose
jobs share input files, runs FCFS, LEA and LEM on it as a robin sweep, writes
the comparison report and prints its headline numbers.
"""

import argparse
import csv
import os
import sys

import yaml

from batloc.platforms.units import parse_duration

HEADLINE = [
    ("scheduler", "scheduler", "{}"),
    ("jobs_evaluated", "jobs", "{:.0f}"),
    ("mean_stretch", "mean stretch", "{:.3f}"),
    ("mean_wait", "mean wait (s)", "{:,.0f}"),
    ("loads", "file loads", "{:.0f}"),
    ("reuses", "reuses", "{:.0f}"),
    ("total_transfer_time", "transfer time (s)", "{:,.0f}"),
    ("transfer_reduction_pct", "transfer cut", "{:.1f} %"),
]


def _duration(text):
    try:
        parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _parser():
    p = argparse.ArgumentParser(prog="batloc demo", description=__doc__.splitlines()[0])
    p.add_argument("--out", default="batloc-demo", help="output folder (default: ./batloc-demo)")
    p.add_argument("--nodes", type=int, default=32, help="cluster size (default 32 nodes x 20 cores)")
    p.add_argument("--duration", default="2d", type=_duration, help="submission period of the synthetic trace (default 2d)")
    p.add_argument("--load", type=float, default=1.1, help="offered load (default 1.1: saturated)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--force", action="store_true", help="redo runs already complete")
    return p


def _step(what, code):
    if code:
        print(f"batloc demo: {what} failed (exit {code})", file=sys.stderr)
        raise SystemExit(code)


def main(argv=None):
    from batloc.platforms import rackham
    from batloc.platforms.generator import PlatformSpec, write
    from batloc.processes import pybatsim_missing
    from batloc.robin.cli import run_sweep
    from batloc.workloads import pipeline
    from batloc.workloads.errors import WorkloadError

    args = _parser().parse_args(argv)
    missing = pybatsim_missing()
    if missing:
        print(f"batloc demo: {missing}", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    platform = os.path.join(out, "platform.xml")
    workload = os.path.join(out, "workload.json")
    step = "platform"
    try:
        print(f"batloc demo: platform of {args.nodes} nodes x 20 cores -> {platform}")
        spec = PlatformSpec(memory_mix=((args.nodes, rackham.NODE_MEMORY),), cores=20,
                            node_bandwidth=rackham.NODE_BANDWIDTH)
        write(spec, platform)
        print(f"wrote {platform}: {spec.nodes} nodes x {spec.cores} cores")
        step = "workload"
        print(f"batloc demo: synthetic trace ({args.duration}, load {args.load}, files shared by ~6 jobs)")
        sizes = pipeline.platform_sizes(platform)
        synth = pipeline.synth_spec(sizes, duration=parse_duration(args.duration), load=args.load,
                                    jobs_per_file=6.0, users=40, seed=args.seed)
        table = pipeline.synthesize(synth)
        nb_res = synth.nodes * synth.cores_per_node
        pipeline.write(table, workload, nb_res)
        print(f"wrote {workload}: {len(table)} jobs, nb_res {nb_res}")
    except (WorkloadError, ValueError, OSError) as exc:   # PlatformError is a ValueError
        print(f"batloc demo: {step} failed: {exc}", file=sys.stderr)
        return 2
    sweep = {
        "output-dir": os.path.join(out, "runs"),
        "platforms": [platform],
        "workloads": [workload],
        "schedulers": ["fcfs", "lea", "lem"],
        "baseline": "fcfs",
        "simulation-timeout": 1800,
        "ready-timeout": 60,
        "success-timeout": 60,
        "failure-timeout": 10,
    }
    description = os.path.join(out, "sweep.yaml")
    with open(description, "w") as f:
        yaml.safe_dump(sweep, f, sort_keys=False)
    print(f"batloc demo: running FCFS, LEA and LEM ({description}; `robin {description}` runs it again)")
    _step("the sweep", run_sweep(sweep, os.cpu_count() or 1, args.force, True, lambda msg: print(msg, flush=True)))
    summary = os.path.join(sweep["output-dir"], "summary.csv")
    with open(summary) as f:
        rows = list(csv.DictReader(f))
    print()
    print("  ".join(f"{title:>17}" for _, title, _ in HEADLINE))
    for row in rows:
        cells = []
        for key, _, fmt in HEADLINE:
            value = row.get(key, "")
            try:
                cells.append(fmt.format(float(value)) if fmt != "{}" else value)
            except ValueError:
                cells.append(value or "-")
        print("  ".join(f"{c:>17}" for c in cells))
    print(f"\nReport with tables and figures: {os.path.join(sweep['output-dir'], 'report.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
