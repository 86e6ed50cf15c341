"""The seed schedulers' metrics: utilisation, idle ratio, NUWT, Jeannot's stretch — hand-computed,
then in `batloc report` on scenario Kl's outputs from the real engine."""

import csv
import json

import pandas as pd
import pytest

from batloc.analysis.fairness import nuwt_per_user, nuwt_summary
from batloc.analysis.io_stretch import stretch_summary, stretches
from batloc.analysis.report import build_report
from batloc.analysis.runs import Inputs
from batloc.analysis.utilisation import idle_ratio, steady_utilisation, utilisation_over_time
from batloc.platforms.generator import PlatformSpec, write
from policy_run import simulate


def table(rows):
    """rows: (job_id, user, cores, submission, start, finish)."""
    df = pd.DataFrame(rows, columns=["job_id", "user", "cores", "submission_time", "starting_time", "finish_time"])
    df["reservation_start"] = df["starting_time"]
    df["run_time"] = df["finish_time"] - df["starting_time"]
    df["queue_time"] = df["reservation_start"] - df["submission_time"]
    df["completed"] = df["ended"] = True
    df["evaluated"] = True
    return df


def test_utilisation_and_idle_ratio():
    # P = 4: J1 2 cores [0, 10), J2 2 cores [5, 10): 30 of 40 core-seconds used.
    jobs = table([("1", "a", 2, 0.0, 0.0, 10.0), ("2", "a", 2, 0.0, 5.0, 10.0)])
    assert idle_ratio(jobs, 4) == pytest.approx(0.25)
    u = utilisation_over_time(jobs, 4, windows=2)
    assert list(u["utilisation"]) == pytest.approx([0.5, 1.0])
    assert list(u["begin"]) == [0.0, 5.0]
    # half of the jobs have completed at the median finish, 10: the whole run here
    assert steady_utilisation(jobs, 4) == pytest.approx(0.75)
    three = table([("1", "a", 4, 0.0, 0.0, 4.0), ("2", "a", 2, 0.0, 4.0, 8.0), ("3", "a", 1, 0.0, 8.0, 20.0)])
    assert steady_utilisation(three, 4) == pytest.approx((16 + 8) / (4 * 8))


def test_nuwt_per_user_and_spread():
    # a: waits 0 + 100 over 2 x 100 s of 1 core -> 0.5; b: wait 199 over 10 s -> 19.9
    jobs = table([("1", "a", 1, 1.0, 1.0, 101.0), ("2", "a", 1, 1.0, 101.0, 201.0),
                  ("3", "b", 1, 2.0, 201.0, 211.0)])
    per = nuwt_per_user(jobs)
    assert list(per["user"]) == ["a", "b"] and list(per["nuwt"]) == pytest.approx([0.5, 19.9])
    summary = nuwt_summary(per)
    assert summary["nuwt_mean"] == pytest.approx(10.2) and summary["nuwt_std"] == pytest.approx(9.7)
    assert summary["users"] == 2


def test_jeannot_stretch_uses_the_run_time_alone():
    jobs = table([("1", "a", 1, 1.0, 1.0, 31.0), ("2", "a", 1, 1.0, 11.0, 31.0)])
    io = {"alpha": 0.4, "jobs": {"1": [10, 10.0, 5.0, 15.0], "2": [10, 10.0, 5.0, 10.0]}}
    st = stretches(jobs, io)
    assert list(st["stretch"]) == pytest.approx([2.0, 2.0]) and list(st["flow_stretch"]) == pytest.approx([2.0, 3.0])
    assert stretch_summary(io, st) == pytest.approx({"alpha": 0.4, "io_max_stretch": 2.0, "io_mean_stretch": 2.0,
                                                     "io_mean_flow_stretch": 2.5})


@pytest.mark.needs_engine
def test_report_shows_the_fairness_of_scenario_kl(tmp_path):
    jobs = ([{"id": i, "subtime": 1, "res": 1, "walltime": 100, "profile": "d100", "user": "u1"} for i in range(1, 5)]
            + [{"id": 5, "subtime": 2, "res": 1, "walltime": 10, "profile": "d10", "user": "u2"}])
    workload = {"nb_res": 2, "jobs": jobs, "profiles": {"d100": {"type": "delay", "delay": 100.0},
                                                        "d10": {"type": "delay", "delay": 10.0}}}
    wl = tmp_path / "kl.json"
    wl.write_text(json.dumps(workload))
    platform = tmp_path / "kl.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=1), platform)
    for name, opts in (("cons", {"tabu": False}), ("tabu", {"tabu_period": 2})):
        (tmp_path / "runs" / name).mkdir(parents=True)
        simulate(tmp_path / "runs" / name, "cons_tabu", platform, wl, opts, name=name)
    build_report(tmp_path / "runs", baseline="cons", inputs=Inputs(workload=wl, platform=platform), log=lambda m: None)
    with open(tmp_path / "runs" / "summary.csv") as f:
        summary = {r["run"]: r for r in csv.DictReader(f)}
    # CONS: NUWT u1 = 200/400, u2 = 199/10; after the move u1 = 210/400, u2 = 99/10
    assert float(summary["cons"]["nuwt_std"]) == pytest.approx(9.7)
    assert float(summary["tabu"]["nuwt_std"]) == pytest.approx((9.9 - 0.525) / 2)
    assert float(summary["cons"]["idle_ratio"]) == pytest.approx(1 - 410 / (2 * 210), abs=1e-6)
    assert list((tmp_path / "runs" / "figures").glob("nuwt_*.png"))
    assert "NUWT per user" in (tmp_path / "runs" / "report.html").read_text()
