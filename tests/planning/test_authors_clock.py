"""The authors' clock (R2-R4 of docs/authors-simulator.md) end to end, on the
tiny platform tests/data/schedulers/two_nodes.xml (2 nodes x 2 cores, 1 GB/s):
what the `authors` profile starts, and when, against the same profile with
one rule switched off."""

import csv
from pathlib import Path

import pytest

import policy_run

PLATFORM = Path(__file__).resolve().parents[1] / "data" / "schedulers" / "two_nodes.xml"
pytestmark = pytest.mark.needs_engine


def job(i, t, cores, wall, delay, **extra):
    return {"id": i, "subtime": t, "res": cores, "walltime": wall, "profile": f"d{delay}", "user": "u",
            "input_file": f"f{i}", "input_size": 1e3, "evaluated": True, **extra}


def starts(tmp_path, jobs, **options):
    """Job id -> (start second, node) of a FCFS run under the authors' profile and ``options``."""
    workload = {"nb_res": 4, "jobs": jobs,
                "profiles": {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}}
    run = policy_run.simulate(tmp_path, "fcfs", PLATFORM, workload, {"profile": "authors", **options})
    decisions = {r["job_id"].split("!")[-1]: r["node"] for r in csv.DictReader(open(f"{run.prefix}_decisions.csv"))}
    return {r["job_id"]: (int(float(r["starting_time"])), decisions[r["job_id"]])
            for r in csv.DictReader(open(f"{run.prefix}_jobs.csv")) if r["workload_name"] == "w0"}


def test_cores_freed_early_stay_reserved_until_a_full_pass(tmp_path):
    # Ticks every 30 s. J1 and J2 (2 cores each, walltime 100) are placed by the
    # tick at 30 (a submission) and end at 40. J3, submitted at 60, is placed by
    # a new-jobs pass on the plan as the tick at 30 left it: the cores stay
    # reserved until 130, where J3 starts on its own (R3). Re-planning from the
    # actual state at the tick (R2 off) starts it at 60. (With FCFS's pass stop,
    # R14, the pass at 60 would plan nothing: no core is free on that plan.)
    jobs = [job(1, 30, 2, 100, 10), job(2, 30, 2, 100, 10), job(3, 60, 2, 100, 10)]
    assert starts(tmp_path, jobs, pass_stop="never") == {"1": (30, "n000"), "2": (30, "n001"), "3": (130, "n000")}
    r2_off = starts(tmp_path, jobs, pass_stop="never", tick_events="since_last_tick", submission_pass="full")
    assert r2_off["3"] == (60, "n000")


def test_a_job_running_at_t0_starts_on_its_historical_node(tmp_path):
    # J1 ran on n001 before t0 (history_node 1): it starts there at 0 (R4). Not
    # pinned, it waits for a pass, and the first one (at 30, a submission) puts it
    # on the first free node, n000, like J2.
    jobs = [job(1, 0, 1, 100, 50, history_node=1), job(2, 30, 1, 100, 10)]
    assert starts(tmp_path, jobs) == {"1": (0, "n001"), "2": (30, "n000")}
    assert starts(tmp_path, jobs, pin_history_node=False)["1"] == (30, "n000")
