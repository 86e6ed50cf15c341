"""`batloc demo`: the whole pipeline in about a minute, on the embedded engine.

Generates a 16-node Rackham-like platform and a saturated synthetic day whose
jobs share input files, runs FCFS, LEA and LEM on it as a robin sweep, writes
the comparison report and prints its headline numbers.
"""

import argparse
import csv
import os
import sys

import yaml

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


def _parser():
    p = argparse.ArgumentParser(prog="batloc demo", description=__doc__.splitlines()[0])
    p.add_argument("--out", default="batloc-demo", help="output folder (default: ./batloc-demo)")
    p.add_argument("--nodes", type=int, default=32, help="cluster size (default 32 nodes x 20 cores)")
    p.add_argument("--duration", default="2d", help="submission period of the synthetic trace (default 2d)")
    p.add_argument("--load", type=float, default=1.1, help="offered load (default 1.1: saturated)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--force", action="store_true", help="redo runs already complete")
    return p


def _step(what, code):
    if code:
        print(f"batloc demo: {what} failed (exit {code})", file=sys.stderr)
        raise SystemExit(code)


def main(argv=None):
    from batloc.robin import cli as robin
    from batloc.platforms import cli as platform_cli
    from batloc.workloads import cli as workload_cli

    args = _parser().parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    platform = os.path.join(out, "platform.xml")
    workload = os.path.join(out, "workload.json")
    print(f"batloc demo: platform of {args.nodes} nodes x 20 cores -> {platform}")
    _step("platform", platform_cli.main(["generate", "-o", platform, "--nodes", str(args.nodes)]))
    print(f"batloc demo: synthetic trace ({args.duration}, load {args.load}, files shared by ~6 jobs)")
    _step("workload", workload_cli.main([
        "synth", "-o", workload, "--platform", platform, "--duration", args.duration,
        "--load", str(args.load), "--jobs-per-file", "6", "--users", "40", "--seed", str(args.seed)]))
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
    print(f"batloc demo: running FCFS, LEA and LEM ({description})")
    robin_args = [description] + (["--force"] if args.force else [])
    _step("the sweep", robin.main(robin_args))
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
