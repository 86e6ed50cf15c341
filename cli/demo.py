"""`batloc demo`: the whole pipeline in about a minute, on the embedded engine.

Generates a 32-node Rackham-like platform and a saturated synthetic trace whose
jobs share input files, runs FCFS, LEA and LEM on it as a robin sweep (runs in
OUT/runs/, the report in OUT/report.html), and prints the report's headline:
the same labels, units and changes as its first table.
"""

import argparse
import csv
import os
import sys

import yaml

from batloc.platforms.units import parse_duration

# The report's headline columns (analysis.headline), in its labels and units; each value's change from the
# run it is compared with follows it.
SHOWN = ("mean_wait", "mean_flow", "total_load_time", "bytes_staged", "jobs_killed")


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
    # named for what they are: the report names a comparison by its files
    platform = os.path.join(out, f"rackham-{args.nodes}n.xml")
    workload = os.path.join(out, f"synth-{args.duration}-load{args.load:g}-seed{args.seed}.json")
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
        "output-dir": out,
        "platforms": [platform],
        "workloads": [workload],
        "schedulers": ["fcfs", "lea", "lem"],
        "baseline": "fcfs",
        "simulation-timeout": 1800,
        "success-timeout": 60,
        "failure-timeout": 10,
    }
    description = os.path.join(out, "sweep.yaml")
    with open(description, "w") as f:
        yaml.safe_dump(sweep, f, sort_keys=False)
    print(f"batloc demo: running FCFS, LEA and LEM ({description}; `robin {description}` runs it again)")
    _step("the sweep", run_sweep(sweep, os.cpu_count() or 1, args.force, True, lambda msg: print(msg, flush=True)))
    print()
    print(headline_text(out))
    print(f"\nReport with tables and figures: {os.path.join(out, 'report.html')}")
    return 0


def headline_text(out) -> str:
    """The report's headline table as text: its columns' labels and units, each value with its change."""
    from batloc.analysis import headline
    from batloc.analysis.tables import change

    with open(os.path.join(out, "summary.csv")) as f:
        rows = {r["scheduler"]: r for r in csv.DictReader(f)}
    metrics = [m for key in SHOWN for m in headline.METRICS if m.column.key == key]
    header = ["scheduler", "against", "mean stretch"] + [m.column.header for m in metrics]
    lines = [header]
    for name, row in rows.items():
        base = rows.get(row.get("baseline") or "")
        cells = [name, row.get("baseline") or "–", _show(row.get("mean_stretch"), base and base.get("mean_stretch"))]
        for m in metrics:
            text = m.column.show(row.get(m.column.key))
            if m.column.key == "jobs_killed" and row.get("jobs_killed_by_load"):
                text += f" ({float(row['jobs_killed_by_load']):.0f}) · {float(row['killed_pct']):.1f} %"
            delta = change(row.get(m.column.key), base.get(m.column.key), counts=m.counts) if base else ""
            cells.append(f"{text} {delta}".strip())
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in lines)


def _show(value, base) -> str:
    from batloc.analysis.tables import change, number

    try:
        text = number(float(value))
    except (TypeError, ValueError):
        return "–"
    delta = change(value, base) if base else ""
    return f"{text} {delta}".strip()


if __name__ == "__main__":
    sys.exit(main())
