"""How long `batloc report` takes on a week-long run (~150 000 jobs).

Synthesises the outputs of two runs (baseline fcfs and lea) of one
Rackham-sized week — workload JSON, jobs.csv with staging jobs, decision
logs, run.json — then times build_report on them and prints the seconds.
The target is under 60 s. Not a test: run it by hand.

    python benchmarks/report_speed.py [--jobs 150000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from batloc.outputs import JOBS_COLUMNS

WEEK = 7 * 86400.0
NODES, CORES = 486, 20
BANDWIDTH = 1e8


def synth_workload(n: int, rng) -> pd.DataFrame:
    sub = np.sort(rng.uniform(1, WEEK, n)).round(0)
    cores = rng.choice([1, 2, 4, 5, 8, 10, 16, 20], n, p=[.4, .12, .12, .04, .08, .06, .06, .12])
    users = rng.integers(0, 1000, n)
    run = rng.lognormal(np.log(1800), 1.0, n).clip(10, 86400).round(0)
    files = [f"f{u}-{c}-{int(s // 800)}" for u, c, s in zip(users, cores, sub)]
    return pd.DataFrame({"id": np.arange(1, n + 1), "subtime": sub, "res": cores, "walltime": (run * 2).round(0),
                         "profile": [f"d{int(r)}" for r in run], "user": [f"u{u:04d}" for u in users],
                         "input_file": files, "input_size": cores / 20 * 128e9,
                         "evaluated": (sub > WEEK * 2 / 7) & (sub < WEEK * 5 / 7), "run": run})


def synth_run(wl: pd.DataFrame, policy: str, rng, out: Path, workload_path: Path, platform: Path):
    n = len(wl)
    out.mkdir(parents=True)
    queue = rng.exponential(600 if policy == "fcfs" else 500, n).round(3)
    res_start = wl["subtime"].to_numpy() + queue
    cache = rng.choice(["miss", "hit", "wait"], n, p=[.6, .3, .1] if policy == "fcfs" else [.4, .45, .15])
    load = wl["input_size"].to_numpy() / BANDWIDTH
    start = res_start + np.where(cache == "miss", load, np.where(cache == "wait", load / 3, 0.0))
    finish = start + wl["run"].to_numpy()
    nodes = rng.integers(1, NODES + 1, n)
    node = [f"n{k:03d}" for k in nodes]
    ids = wl["id"].astype(str).to_numpy()
    stage_ids = np.array([f"stage-w0-{i}-{k}" for i, k in zip(ids, node)], dtype=object)
    # a `wait` job waits for some earlier miss; which one does not matter for timing the report
    misses = np.flatnonzero(cache == "miss")
    staging_job = np.where(cache == "miss", "batloc-stage!" + stage_ids, "")
    waits = np.flatnonzero(cache == "wait")
    staging_job[waits] = "batloc-stage!" + stage_ids[misses[np.searchsorted(misses, waits).clip(0, len(misses) - 1)]]
    alloc = [f"{(k - 1) * 20}-{(k - 1) * 20 + c - 1}" for k, c in zip(nodes, wl["res"])]
    jobs = pd.DataFrame({
        "job_id": ids, "workload_name": "w0", "profile": wl["profile"], "submission_time": wl["subtime"],
        "requested_number_of_resources": wl["res"], "requested_time": wl["walltime"], "success": 1,
        "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": start, "execution_time": finish - start,
        "finish_time": finish, "waiting_time": start - wl["subtime"], "turnaround_time": finish - wl["subtime"],
        "stretch": (finish - wl["subtime"]) / (finish - start), "allocated_resources": alloc,
        "consumed_energy": -1.0, "metadata": ""})
    m = cache == "miss"
    staging = pd.DataFrame({
        "job_id": stage_ids[m], "workload_name": "batloc-stage", "profile": stage_ids[m],
        "submission_time": res_start[m], "requested_number_of_resources": 2, "requested_time": -1.0, "success": 1,
        "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": res_start[m], "execution_time": load[m],
        "finish_time": res_start[m] + load[m], "waiting_time": 0.0, "turnaround_time": load[m], "stretch": 1.0,
        "allocated_resources": [f"{9720 + k} 10206" for k in nodes[m]], "consumed_energy": -1.0, "metadata": ""})
    all_jobs = pd.concat([jobs, staging]).sort_values("finish_time", kind="stable")[list(JOBS_COLUMNS)]
    all_jobs.to_csv(out / "out_jobs.csv", index=False, float_format="%.6f")
    pd.DataFrame({"time": res_start, "job_id": "w0!" + pd.Series(ids), "policy": policy, "node": node,
                  "alloc": alloc, "cores": wl["res"], "planned_start": start, "input_file": wl["input_file"],
                  "input_size": wl["input_size"], "cache": cache, "staging_job": staging_job, "score": ""}
                 ).sort_values("time").to_csv(out / "out_decisions.csv", index=False, float_format="%.6f")
    (out / "run.json").write_text(json.dumps({"name": out.name, "scheduler": {"name": policy, "policy": policy},
                                              "platform": str(platform), "workload": str(workload_path),
                                              "status": "success"}))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=150_000)
    ap.add_argument("--keep", type=Path, help="write the synthetic outputs here and keep them")
    args = ap.parse_args(argv)
    from batloc.analysis.report import build_report
    from batloc.robin.description import resolve_input

    root = args.keep or Path(tempfile.mkdtemp(prefix="batloc-report-speed-"))
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    wl = synth_workload(args.jobs, rng)
    workload_path = root / "week.json"
    profiles = {p: {"type": "delay", "delay": float(p[1:])} for p in wl["profile"].unique()}
    records = wl.drop(columns="run").to_dict("records")
    workload_path.write_text(json.dumps({"nb_res": NODES * CORES, "jobs": records, "profiles": profiles,
                                         "batloc": {"source": "benchmarks/report_speed.py"}}))
    platform = resolve_input("platforms/rackham.xml")
    for policy in ("fcfs", "lea"):
        synth_run(wl, policy, rng, root / "runs" / policy, workload_path, platform)
    print(f"synthesised {args.jobs} jobs x 2 runs in {time.perf_counter() - t0:.1f} s under {root}")
    rep = build_report(root)
    print(f"report built in {rep.seconds:.1f} s (target < 60 s): {rep.html}")
    if not args.keep:
        shutil.rmtree(root)
    return 0 if rep.seconds < 60 else 1


if __name__ == "__main__":
    sys.exit(main())
