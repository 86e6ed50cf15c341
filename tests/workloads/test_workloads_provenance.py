"""A converted job can be traced back to its log line (issue 11): SWF job numbers kept, as ids where they can be.

Also: a conversion without a window never submits a job at t = 0 (stock pybatsim
schedulers fail there, docs/contract.md §4b); the epoch moves with the times.
"""

import json
from pathlib import Path

import pandas as pd

from batloc.analysis import load, metrics
from batloc.workloads.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "workloads"


def convert(tmp_path, capsys, *argv):
    out = tmp_path / "w.json"
    assert main([*argv, "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return json.loads(out.read_text())


def test_swf_job_numbers_are_the_ids_when_unique(tmp_path, capsys):
    wl = convert(tmp_path, capsys, "from-swf", str(DATA / "sharing.swf"))
    assert [(j["id"], j["source_id"]) for j in wl["jobs"]] == [(i, str(i)) for i in range(1, 9)]
    assert wl["batloc"]["ids"] == "the trace's job numbers"
    # job 1 was submitted at t = 0 in the trace: every job moves 1 s later, and so does t = 0's date
    assert [j["subtime"] for j in wl["jobs"]][:3] == [1, 800, 1601]
    assert wl["batloc"]["epoch"] == 1641168000 - 1
    assert wl["batloc"]["lead_in"] == {"shift": 1.0, "origin": -1.0}


def test_split_jobs_are_renumbered_and_keep_their_swf_number(tmp_path, capsys):
    # small.swf: job 3 asks for 45 processors, split into 20 + 20 + 5 on 20-core nodes
    wl = convert(tmp_path, capsys, "from-swf", str(DATA / "small.swf"))
    ids = [j["id"] for j in wl["jobs"]]
    assert ids == list(range(1, len(ids) + 1))
    assert [j["source_id"] for j in wl["jobs"]].count("3") == 3
    assert wl["batloc"]["ids"].startswith("1..n in submission order")
    assert min(j["subtime"] for j in wl["jobs"]) >= 1


def test_a_window_keeps_the_swf_numbers(tmp_path, capsys):
    wl = convert(tmp_path, capsys, "from-swf", str(DATA / "sharing.swf"), "--start", "1600", "--length", "1000",
                 "--before", "0")
    assert [(j["id"], j["subtime"], j["evaluated"]) for j in wl["jobs"]][:2] == [(3, 1, True), (4, 1, True)]
    again = tmp_path / "again.json"
    assert main(["window", str(tmp_path / "w.json"), "-o", str(again), "--start", "1", "--length", "101"]) == 0
    assert [j["source_id"] for j in json.loads(again.read_text())["jobs"]] == ["3", "4", "5"]


def test_sacct_and_gonthier_keep_their_job_ids(tmp_path, capsys):
    wl = convert(tmp_path, capsys, "from-sacct", str(DATA / "sacct.txt"))
    assert "107_3" in [j["source_id"] for j in wl["jobs"]]               # array task: not integer-like
    assert [j["id"] for j in wl["jobs"]] == list(range(1, len(wl["jobs"]) + 1))
    wl = convert(tmp_path, capsys, "from-gonthier", str(DATA / "gonthier-keyed.txt"))
    assert all(str(j["id"]) == j["source_id"] for j in wl["jobs"])


def test_the_analysis_can_join_on_the_source_id(tmp_path, capsys):
    convert(tmp_path, capsys, "from-swf", str(DATA / "sharing.swf"))
    wl = load.read_workload(tmp_path / "w.json")
    jobs = pd.DataFrame({"job_id": ["1"], "workload_name": ["w0"], "requested_number_of_resources": [1],
                         "submission_time": [1.0], "starting_time": [1.0], "finish_time": [61.0],
                         "full_id": ["w0!1"]})
    table = metrics.per_job(jobs, wl, None, 1e8)
    assert table.set_index("source_id").loc["1", "finish_time"] == 61.0
