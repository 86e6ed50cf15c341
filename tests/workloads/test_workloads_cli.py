"""`batloc workload ...` end to end, in-process."""

import json
from pathlib import Path

import pytest

from batloc.workloads.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "workloads"


def test_synth_week_offered_load_within_5_percent(tmp_path, capsys):
    out = tmp_path / "week.json"
    assert main(["synth", "-o", str(out), "--load", "0.7", "--duration", "7d", "--seed", "11"]) == 0
    capsys.readouterr()
    assert main(["stats", str(out)]) == 0
    lines = dict(line.split(":", 1) for line in capsys.readouterr().out.splitlines())
    assert int(lines["platform cores"]) == 9720
    assert float(lines["offered load"]) == pytest.approx(0.7, rel=0.05)


def test_from_swf_with_window_then_stats(tmp_path, capsys):
    out = tmp_path / "w.json"
    code = main(["from-swf", str(DATA / "sharing.swf"), "-o", str(out), "--sharing", "consecutive",
                 "--start", "2022-01-03T00:26:40", "--length", "1000s", "--before", "1600s", "--after", "1000s",
                 "--overhead", "120s"])
    assert code == 0
    data = json.loads(out.read_text())
    # Window [1600, 2600) with context [0, 3600): job 8 (3600) falls out.
    assert [j["subtime"] for j in data["jobs"]] == [1, 800, 1601, 1601, 1701, 2001, 2800]
    assert [j["evaluated"] for j in data["jobs"]] == [False, False, True, True, True, True, False]
    assert [j["input_file"] for j in data["jobs"]] == ["f1-1-0", "f1-1-0", "f1-1-1", "f1-2-0", "f2-1-0",
                                                       "f1-1-2", "f1-1-2"]
    assert set(data["profiles"]) == {"d180"}  # 60 s + 120 s overhead
    assert data["batloc"]["window"]["origin_unix"] == 1641168000 - 1
    capsys.readouterr()
    assert main(["stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["evaluated jobs"] == 4 and stats["files"] == 5 and stats["users"] == 2
    # 4 evaluated jobs: 3 x 1 core + 1 x 2 cores, 180 s each, over 1000 s on 9720 cores.
    assert stats["offered load"] == pytest.approx(5 * 180 / (9720 * 1000), abs=1e-4)


def test_file_sizes_fit_the_walltimes_unless_the_papers_are_asked_for(tmp_path, capsys):
    # 60 s jobs of 1 and 2 cores with a 100 s walltime (40 s to spare), on Rackham's 20-core, 128 GB nodes at
    # 0.1 GB/s: the paper's 6.4 and 12.8 GB (64 s and 128 s) do not load in 40 s, the fitted 4 GB do
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{i} {i * 1000} 0 60 {cores} -1 -1 {cores} 100 -1 1 1 1 -1 1 -1 -1 -1\n"
                             for i, cores in ((1, 1), (2, 2), (3, 1))))
    fit, paper = tmp_path / "fit.json", tmp_path / "paper.json"
    assert main(["from-swf", str(trace), "-o", str(fit)]) == 0
    assert main(["from-swf", str(trace), "-o", str(paper), "--file-size", "paper"]) == 0
    assert [j["input_size"] for j in json.loads(fit.read_text())["jobs"]] == [4e9] * 3
    assert [j["input_size"] for j in json.loads(paper.read_text())["jobs"]] == [6.4e9, 12.8e9, 6.4e9]
    capsys.readouterr()
    rackham = str(Path(__file__).resolve().parents[2] / "platforms" / "rackham.xml")
    for workload, over in ((fit, "0 of 3 evaluated jobs (0.0 %)"), (paper, "3 of 3 evaluated jobs (100.0 %)")):
        assert main(["stats", str(workload), "--platform", rackham, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["loads longer than walltime allows"] == over



def test_from_sacct_and_from_gonthier(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["from-sacct", str(DATA / "sacct.txt"), "-o", str(out), "--report", str(tmp_path / "r.csv")]) == 0
    err = capsys.readouterr().err
    assert "7 jobs; dropped 6 line(s)" in err and "repaired 2 line(s) (missing walltime 2)" in err
    assert (tmp_path / "r.csv").read_text().count("\n") == 1 + 8
    assert len(json.loads(out.read_text())["jobs"]) == 7
    out = tmp_path / "g.json"
    assert main(["from-gonthier", str(DATA / "gonthier-keyed.txt"), "-o", str(out)]) == 0
    jobs = json.loads(out.read_text())["jobs"]
    assert [(j["input_file"], j["evaluated"]) for j in jobs] == [("1", False), ("2", True), ("2", True),
                                                                 ("4", False)]


def test_from_gonthier_history_node_starts_at_the_authors_t0(tmp_path):
    # t0 = 1000, job 4's submission (the first of phase 0). Job 1 ran from 400:
    # 600 s gone, 4400 s and 8400 s left, node 3 (1-based) -> 2. Job 2 ran from
    # 200: 800 s gone, nothing left -> 1 s each, node 488 of 486 -> 1. Job 3
    # (queued, -1) is submitted at t0 with no node; job 5 300 s after t0.
    out = tmp_path / "h.json"
    assert main(["from-gonthier", str(DATA / "gonthier-history.txt"), "-o", str(out), "--history-node"]) == 0
    data = json.loads(out.read_text())
    rows = [(j["id"], j["subtime"], j["walltime"], data["profiles"][j["profile"]]["delay"], j.get("history_node"),
             j["evaluated"]) for j in data["jobs"]]
    assert rows == [(1, 0, 8400, 4400, 2, False), (2, 0, 1, 1, 1, False), (3, 0, 100, 60, None, False),
                    (4, 0, 100, 60, None, False), (5, 300, 100, 30, None, True)]
    assert data["batloc"]["authors_t0"] == 1000


@pytest.mark.parametrize("argv, message", [
    (["from-swf", "nowhere.swf", "-o", "x.json"], "nowhere.swf: cannot read"),
    (["from-swf", str(DATA / "small.swf"), "-o", "x.json", "--strict"], "small.swf:11: cancelled before start"),
    (["from-sacct", str(DATA / "small.swf"), "-o", "x.json"], "not sacct --parsable2 output"),
    (["from-gonthier", str(DATA / "sacct.txt"), "-o", "x.json"], "is this a workload in Gonthier"),
    (["from-gonthier", str(DATA / "gonthier-positional.txt"), "-o", "x.json", "--start", "2022-01-01"],
     "does not give its epoch"),
    (["stats", str(DATA / "small.swf")], "small.swf:1: not valid JSON"),
    (["from-gonthier", str(DATA / "gonthier-keyed.txt"), "-o", "x.json", "--history-node"],
     "needs every job's workload, start_time_from_history"),
    # the probe: numpy's "expected non-negative integer"; unbounded generation (inf, 1e9) ran out of memory
    (["synth", "-o", "x.json", "--duration", "1h", "--seed", "-1"], "seed must be a whole number >= 0, not -1"),
    (["synth", "-o", "x.json", "--duration", "1h", "--load", "inf"], "load must be finite and > 0"),
    (["synth", "-o", "x.json", "--duration", "1h", "--burstiness", "inf"], "burstiness must be finite"),  # 1/0
    (["synth", "-o", "x.json", "--duration", "1h", "--users", "1000000000"], "users must be in 1..1000000"),
    (["synth", "-o", "x.json", "--duration", "7d", "--load", "1e6"], "these options make more than 10000000 jobs"),
])
def test_errors_are_one_clear_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("batloc workload: error: ") and message in err[-1]
    assert not any("Traceback" in line for line in err)


def test_usage_errors(capsys):
    assert main(["from-csv", "x"]) == 2
    assert main(["synth", "-o", "x.json", "--duration", "a week"]) == 2
    assert "cannot read duration 'a week'" in capsys.readouterr().err


def test_a_window_keeps_nb_res_and_refuses_a_workload_without_it(tmp_path, capsys):
    # It used to write nb_res 0, which Batsim and the engine refuse
    jobs = [{"id": 1, "subtime": 10, "res": 1, "walltime": 60, "profile": "d60", "user": "u", "input_file": "f",
             "input_size": 1.0, "evaluated": True}]
    source = tmp_path / "w.json"
    for nb_res, expected in ((8, 0), (None, 2)):
        source.write_text(json.dumps({**({"nb_res": nb_res} if nb_res else {}), "jobs": jobs,
                                      "profiles": {"d60": {"type": "delay", "delay": 60}}}))
        code = main(["window", str(source), "-o", str(tmp_path / "c.json"), "--start", "0", "--length", "100s"])
        assert code == expected
    assert json.loads((tmp_path / "c.json").read_text())["nb_res"] == 8
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"batloc workload: error: {source}: nb_res (the machine size, which Batsim requires) is missing; "
        "add it to the workload")


@pytest.mark.parametrize("command", [
    ["from-swf", "t.swf", "-o", "t.swf"], ["window", "t.json", "-o", "./t.json", "--start", "0"]])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, capsys, monkeypatch, command):
    # from-swf -o its own trace wrote the workload over the trace (the probe)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.swf").write_text((DATA / "small.swf").read_text())
    (tmp_path / "t.json").write_text('{"nb_res": 1, "jobs": [], "profiles": {}}')
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert main(command) == 2
    assert f"is {command[1]}, an input of this command: not overwritten" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("job, profiles, message", [
    # Batsim's own test_various_profile_types.json: "missing or bad field invalid literal for int() ... 'delay'"
    ({"id": "delay", "subtime": 0, "res": 1, "profile": "d"}, {"d": {"type": "delay", "delay": 1}},
     "job #0: id 'delay' is not an integer: batloc's workload tools read integer ids only"),
    ({"id": 1, "subtime": 0, "res": 1, "profile": "p"}, {"p": {"type": "parallel_homogeneous"}},
     "job 1: profile 'p' is a 'parallel_homogeneous', not a delay"),
    ({"id": 1, "subtime": 0, "res": 1, "profile": "nope"}, {}, "job #0: profile 'nope' is not defined"),
    ({"id": 1, "res": 1, "profile": "d"}, {"d": {"type": "delay", "delay": 1}}, "job #0: no field 'subtime'"),
])
def test_a_workload_the_tools_cannot_read_says_what_and_why(tmp_path, capsys, job, profiles, message):
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 2, "jobs": [job], "profiles": profiles}))
    assert main(["stats", str(tmp_path / "w.json")]) == 2
    assert f"w.json: {message}" in capsys.readouterr().err
