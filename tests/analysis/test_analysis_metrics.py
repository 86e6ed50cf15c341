"""Metric correctness on the hand-made runs in tests/data/analysis/hand.

Scenario (bandwidth 1e8 B/s, so fA = 1e9 B loads in 10 s, fB = 2e9 in 20 s,
fC = 5e8 in 5 s); job 5 is a context job (not evaluated). Every expected
value below was computed by hand from the CSV rows, not by the code.
"""

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from batloc.analysis import compare, load, sessions
from batloc.analysis.runs import analyse_run

HAND = Path(__file__).resolve().parents[1] / "data" / "analysis" / "hand"


def run_files(name):
    return next(r for r in load.discover_runs(HAND) if r.name == name)


@pytest.fixture(scope="module")
def results():
    cache = {}
    return {name: analyse_run(run_files(name), workload_cache=cache)[0] for name in ("fcfs", "lea")}


def job(results, run, jid):
    t = results[run].jobs.set_index("job_id")
    return t.loc[str(jid)]


def test_reference_bandwidth_from_platform():
    assert load.read_platform_bandwidths(HAND / "platform.xml") == {"n001": 1e8, "n002": 1e8}
    assert load.reference_bandwidth(HAND / "platform.xml") == 1e8
    assert load.reference_bandwidth(HAND / "platform.xml", bandwidth=5.0) == 5.0


def test_per_job_stretch_and_loads(results):
    # FCFS job 4: submitted 15, cores from 40, staging 40→45, computes 45→75.
    j = job(results, "fcfs", 4)
    assert j["flow"] == pytest.approx(60.0)
    assert j["wait"] == pytest.approx(30.0)
    assert j["queue_time"] == pytest.approx(25.0)
    assert j["transfer_time"] == pytest.approx(5.0)
    assert j["file_wait"] == 0.0
    assert j["stretch"] == pytest.approx(60.0 / (5.0 + 30.0))
    assert j["core_time"] == pytest.approx(35.0)
    assert j["bsld"] == pytest.approx(2.0)
    # LEA job 2: cores from 12, waits for job 1's staging (ends 20): file wait 8 s.
    j = job(results, "lea", 2)
    assert j["cache"] == "wait" and bool(j["reuse"]) and not bool(j["hit"])
    assert j["file_wait"] == pytest.approx(8.0)
    assert j["transfer_time"] == 0.0
    assert j["stretch"] == pytest.approx(58.0 / 60.0)
    # LEA job 3 (2 cores): hit, computes 400→460; reference keeps the 20 s load.
    j = job(results, "lea", 3)
    assert bool(j["hit"]) and j["load_time"] == 0.0
    assert j["stretch"] == pytest.approx(0.75)
    assert j["core_time"] == pytest.approx(120.0)
    # job 7 has no decision row: no load, cores held from its start.
    j = job(results, "lea", 7)
    assert j["cache"] == "none" and j["core_time"] == pytest.approx(10.0)


def test_per_run_totals(results):
    f, l = results["fcfs"].summary, results["lea"].summary
    assert f["jobs_evaluated"] == 6  # job 5 is context
    assert f["mean_stretch"] == pytest.approx((5 + 12 / 7) / 6)
    assert f["max_stretch"] == pytest.approx(12 / 7)
    assert f["total_load_time"] == pytest.approx(45.0)
    assert f["total_core_time"] == pytest.approx(385.0)
    assert f["mean_bsld"] == pytest.approx((1.1 + 1.2 + 80 / 60 + 2 + 1 + 1) / 6)
    assert (f["reuses"], f["hits"], f["loads"]) == (0, 0, 4)
    assert l["total_transfer_time"] == pytest.approx(15.0)
    assert l["total_file_wait"] == pytest.approx(8.0)
    assert l["total_load_time"] == pytest.approx(23.0)
    assert l["total_core_time"] == pytest.approx(343.2)
    assert (l["reuses"], l["hits"], l["loads"]) == (2, 1, 2)
    assert l["max_stretch"] == pytest.approx(1.02)


def test_sessions_five_minute_window():
    wl = load.read_workload(HAND / "workload.json")
    s = sessions.assign_sessions(wl.jobs)
    # a: jobs 1, 2 (t=10, 12) then job 3 at t=400 ≥ 10 + 300 opens a new session.
    assert s["1"] == s["2"] != s["3"]
    assert "5" not in s.index  # context job
    assert len(set(s.values)) == 5
    # docs/scheduler-semantics.md, Metrics: a job exactly 300 s after the session's first joins it;
    # one later than that opens the next session (counted from that job, not from the window's end)
    jobs = pd.DataFrame({"job_id": ["x", "y", "z", "w", "v"], "user": "u",
                         "subtime": [0.0, 299.0, 300.0, 300.5, 600.5], "evaluated": True})
    s = sessions.assign_sessions(jobs)
    assert s["x"] == s["y"] == s["z"] == "u#1"
    assert s["w"] == s["v"] == "u#2"


def test_sessions_from_workload_field():
    jobs = pd.DataFrame({"job_id": ["1", "2", "3", "4"], "user": ["u", "u", "u", "v"],
                         "subtime": [0.0, 10.0, 20.0, 0.0], "evaluated": [True, True, True, False],
                         "session": ["s0", "s0", "s1", "s9"]})
    s = sessions.assign_sessions(jobs)
    assert s.to_dict() == {"1": "u#s0", "2": "u#s0", "3": "u#s1"}


def test_session_stretch(results):
    f = results["fcfs"].sessions.set_index("user")["stretch"]
    assert results["fcfs"].sessions.loc["a#1", "stretch"] == pytest.approx(2.0)
    assert results["fcfs"].sessions.loc["a#2", "stretch"] == pytest.approx(1.0)
    assert f["b"] == pytest.approx(12 / 7)
    assert results["lea"].sessions.loc["a#1", "stretch"] == pytest.approx(1 + 58 / 60)


def test_improvements_and_tables(results):
    comp = compare.compare(list(results.values()), baseline="fcfs")
    imp = comp.improvements.set_index("session")["improvement"]
    assert imp["a#1"] == pytest.approx(2.0 / (1 + 58 / 60))
    assert imp["a#2"] == pytest.approx(1.0 / 0.75)
    assert imp["b#1"] == pytest.approx(12 / 7)
    assert imp["c#1"] == pytest.approx(1 / 1.02)
    assert imp["d#1"] == pytest.approx(1.0)
    row = comp.per_run.iloc[0]
    assert (row["faster"], row["slower"], row["equal"]) == (3, 1, 1)
    assert row["mean_improvement_faster"] == pytest.approx((2 / (1 + 58 / 60) + 4 / 3 + 12 / 7) / 3)
    assert row["mean_improvement_slower"] == pytest.approx(1 / 1.02)
    assert comp.transfer_table.loc["all", "lea"] == pytest.approx(100 * (45 - 23) / 45)
    assert comp.core_time_table.loc["all", "lea"] == pytest.approx(100 * (385 - 343.2) / 385)
    assert comp.transfer_table.loc["platform / workload", "lea"] == pytest.approx(100 * 22 / 45)


def test_equal_band_edges():
    c = compare.count_faster(pd.Series([1.0101, 1.0099, 0.9901, 0.9899]))
    assert (c["faster"], c["equal"], c["slower"]) == (1, 2, 1)


def _run(name, policy, backfilling=None):
    options = {} if backfilling is None else {"backfilling": backfilling}
    return compare.RunResult(name=name, scheduler=name, group=("p", "w"), summary={}, sessions=pd.DataFrame(),
                             policy=policy, options=options)


def test_bf_runs_compare_with_bf_baseline():
    # Backfilling is read from the recorded options, whatever the names say.
    runs = {r.name: r for r in (_run("fcfs", "fcfs"), _run("base-cbf", "fcfs", True), _run("lea", "lea", False),
                                _run("mine", "lea", True), _run("lea-bf", "lea"))}
    base = compare.baseline_of
    assert base(runs["mine"], runs, "fcfs").name == "base-cbf"
    assert base(runs["lea"], runs, "fcfs").name == "fcfs"
    assert base(runs["lea-bf"], runs, "fcfs").name == "fcfs"     # named -bf, but run without backfilling
    assert base(runs["base-cbf"], runs, "fcfs").name == "fcfs"   # the backfilling baseline vs the plain one
    assert base(runs["fcfs"], runs, "fcfs") is None
    # without a backfilling baseline a backfilling run is compared with nothing, never silently across the
    # line; a declared pair is kept, and compare.crosses says it spans the line
    del runs["base-cbf"]
    assert base(runs["mine"], runs, "fcfs") is None
    runs["mine"].against = "fcfs"
    assert base(runs["mine"], runs, "fcfs").name == "fcfs" and compare.crosses(runs["mine"], runs["fcfs"])
    assert not compare.crosses(runs["lea"], runs["fcfs"])


def test_a_staged_stock_backfilling_scheduler_is_compared_with_the_backfilling_baseline():
    runs = {r.name: r for r in (_run("fcfs", "fcfs"), _run("fcfs-bf", "fcfs", True),
                                _run("easyBackfill-staged", None), _run("schedFcfs-staged", None))}
    runs["easyBackfill-staged"].uses_backfilling = True     # robin's record: its name says it backfills
    base = compare.baseline_of
    assert base(runs["easyBackfill-staged"], runs, "fcfs").name == "fcfs-bf"
    assert base(runs["schedFcfs-staged"], runs, "fcfs").name == "fcfs"


def test_robin_records_which_stock_schedulers_backfill():
    from batloc.robin import description as rd

    specs = [rd.parse_scheduler(e) for e in ({"command": "pybatsim easyBackfill", "staging": True},
                                             {"command": "pybatsim schedFcfs", "staging": True},
                                             {"command": "my-sched --x", "backfilling": True},
                                             "lea-bf", "lea")]
    assert [s.uses_backfilling for s in specs] == [True, False, True, True, False]
    assert specs[0].name == "easyBackfill-staged"


def test_options_come_from_run_json(tmp_path):
    shutil.copytree(HAND, tmp_path / "hand")
    meta_path = tmp_path / "hand" / "lea" / "run.json"
    meta = json.loads(meta_path.read_text())
    meta["scheduler"]["options"] = {"backfilling": True, "W": 500}
    meta_path.write_text(json.dumps(meta))
    lea = next(r for r in load.discover_runs(tmp_path / "hand") if r.name == "lea")
    assert (lea.policy, lea.options) == ("lea", {"backfilling": True, "W": 500})
    res, _ = analyse_run(lea)
    assert res.backfilling


def test_without_decision_log_every_job_is_no_load(tmp_path):
    shutil.copytree(HAND, tmp_path / "hand")
    (tmp_path / "hand" / "fcfs" / "out_decisions.csv").unlink()
    run = next(r for r in load.discover_runs(tmp_path / "hand") if r.name == "fcfs")
    res, _ = analyse_run(run)
    assert res.summary["total_load_time"] == 0.0
    assert not res.summary["has_decision_log"]
    # core time from computing start: Σ cores × run time = 100+50+2·60+30+10+10
    assert res.summary["total_core_time"] == pytest.approx(320.0)
    assert math.isclose(res.jobs.set_index("job_id").loc["4", "stretch"], 60 / 35)


def test_rejected_job_is_counted_not_measured(tmp_path):
    shutil.copytree(HAND, tmp_path / "hand")
    p = tmp_path / "hand" / "lea" / "out_jobs.csv"
    lines = p.read_text().splitlines()
    lines = [ln for ln in lines if not ln.startswith("7,")]
    lines.append("7,w0,d10,50.000000,1,200.000000,0,REJECTED,,,,,,,,-1.000000,\"\"")
    p.write_text("\n".join(lines) + "\n")
    run = next(r for r in load.discover_runs(tmp_path / "hand") if r.name == "lea")
    res, _ = analyse_run(run)
    assert res.summary["jobs_not_completed"] == 1
    assert res.summary["jobs_completed"] == 5
    assert "d#1" not in res.sessions.index  # incomplete session is not compared
