"""Engine + scheduler end to end, on the tiny platform tests/data/schedulers/two_nodes.xml
(2 nodes x 2 cores, 100 GB, 1 GB/s, no latency: a 10 GB load takes 10 s).
Skipped when the engine or SimGrid is not installed."""

import csv
from pathlib import Path

import pytest

import policy_run
from batloc.analysis import validate

DATA = Path(__file__).resolve().parents[1] / "data" / "schedulers"
pytestmark = pytest.mark.needs_engine


def simulate(tmp_path, policy, workload, options=None):
    """`policy` on two_nodes.xml; its jobs.csv rows by (workload, job id), the run validated."""
    run = policy_run.simulate(tmp_path, policy, DATA / "two_nodes.xml", workload, options)
    rows = list(csv.DictReader(open(f"{run.prefix}_jobs.csv")))
    assert validate.main([run.prefix, "--workload", f"{run.prefix}_w.json", "--platform", str(DATA / "two_nodes.xml"),
                          "--cache", (options or {}).get("cache", "paper")]) == 0
    return {(r["workload_name"], r["job_id"]): r for r in rows}


def job(i, t, cores, wall, delay, file, size_gb):
    return {"id": i, "subtime": t, "res": cores, "walltime": wall, "profile": f"d{delay}", "user": "u",
            "input_file": file, "input_size": size_gb * 1e9, "evaluated": True}


def workload(jobs):
    return {"nb_res": 4, "jobs": jobs,
            "profiles": {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}}


def test_lea_waits_where_eft_loads_elsewhere_on_the_engine(tmp_path):
    # As in test_schedulers_policies: J1 (2 cores, A) loads [1,11) on n000, computes [11,61);
    # J2 (2 cores, A) at t=2: LEA waits for n000 (starts 61, hit), EFT loads on n001 (computes from 12).
    jobs = [job(1, 1, 2, 100, 50, "A", 10), job(2, 2, 2, 100, 10, "A", 10)]
    rows = simulate(tmp_path, "lea", workload(jobs))
    assert float(rows[("w0", "2")]["starting_time"]) == 61.0
    assert sum(1 for k in rows if k[0] == "batloc-stage") == 1
    rows = simulate(tmp_path, "eft", workload(jobs))
    assert float(rows[("w0", "2")]["starting_time"]) == 12.0
    assert sum(1 for k in rows if k[0] == "batloc-stage") == 2


def test_two_jobs_share_one_staging_on_the_engine(tmp_path):
    # J1, J2 (1 core each, file A) on n000: one staging [1,11), both compute from 11.
    jobs = [job(1, 1, 1, 100, 10, "A", 10), job(2, 2, 1, 100, 10, "A", 10)]
    rows = simulate(tmp_path, "eft", workload(jobs))
    assert [float(rows[("w0", i)]["starting_time"]) for i in "12"] == [11.0, 11.0]
    assert [k for k in rows if k[0] == "batloc-stage"] == [("batloc-stage", "stage-w0-1-n000")]


def test_backfilling_on_the_engine(tmp_path):
    # One 2-core node used (n001 filled by a long job first): see the dry-run test for the derivation.
    jobs = [job(0, 1, 2, 1000, 1000, "Z", 0.000001),   # fills n000 (load 1 µs) -> everything else on n001
            job(1, 1, 1, 100, 100, "A", 0.000001), job(2, 2, 2, 50, 50, "A", 0.000001),
            job(3, 3, 1, 90, 90, "A", 0.000001), job(4, 4, 1, 100, 100, "A", 0.000001)]
    rows = simulate(tmp_path, "fcfs_bf", workload(jobs))
    starts = {i: round(float(rows[("w0", str(i))]["starting_time"]), 3) for i in range(1, 5)}
    # J1 [1,101) on n001 (+1 µs load); J2 reserved after it; J3 backfilled at 3; J4 after J2.
    assert starts[3] < 5 and starts[2] >= 101 and starts[4] >= starts[2] + 50
