"""`batloc study rackham`: synthetic weeks named by their seed, the sweep, the cost in study.md, and a
1-week study of the ten variants in CI size (one node), run to the end and resumed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.study import cost

ROOT = Path(__file__).resolve().parents[2]
TEN = ["fcfs", "eft", "lea", "leo", "lem", "fcfs-bf", "eft-bf", "lea-bf", "leo-bf", "lem-bf"]


def batloc(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "batloc.cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def small_study(tmp_path, **keys) -> Path:
    desc = {"output-dir": str(tmp_path / "out"), "weeks": 1, "seed": 5, "nodes": 1, "load": 1.2,
            "length": "7d", "before": "12h", "after": "12h", "schedulers": TEN, "baseline": "fcfs",
            "ready-timeout": 120, **keys}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def test_weeks_are_named_by_their_seed_and_drawn_alike_each_time(tmp_path):
    study = small_study(tmp_path, weeks=2)
    first = batloc("study", "rackham", study, "--prepare-only")
    assert first.returncode == 0, first.stderr
    made = json.loads((tmp_path / "out" / "study.json").read_text())
    assert [w["label"] for w in made["weeks"]] == ["01", "02"] and made["nodes"] == 1
    paths = [Path(w["workload"]) for w in made["weeks"]]
    before = [p.read_bytes() for p in paths]
    assert before[0] != before[1]                          # seeds 5 and 6: two different weeks
    week = json.loads(before[0])
    evaluated = [j for j in week["jobs"] if j["evaluated"]]
    assert 0 < len(evaluated) < len(week["jobs"])          # context before and after the week
    assert all(j["input_file"] and j["input_size"] > 0 for j in week["jobs"])
    again = batloc("study", "rackham", study, "--prepare-only", "--weeks", "1")
    assert again.returncode == 0, again.stderr
    assert paths[0].read_bytes() == before[0]               # week 1 of a 1-week study is week 1 of a 2-week one
    sweep = yaml.safe_load((tmp_path / "out" / "sweep.yaml").read_text())
    assert [s["name"] for s in sweep["schedulers"]] == TEN and sweep["baseline"] == "fcfs"


def test_a_bad_rackham_study_is_one_line(tmp_path):
    r = batloc("study", "rackham", small_study(tmp_path, load=-1), "--prepare-only")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "load must be a positive number" in r.stderr
    r = batloc("study", "rackham", "--trace", "x.swf", "--prepare-only", "-o", tmp_path / "o")
    assert r.returncode == 2 and "rackham's weeks are synthetic" in r.stderr


def test_the_cost_sums_the_runs_cpu_and_bounds_the_time_on_sixteen_workers(tmp_path):
    for name, cpu, wall in (("a", {"batsim": 100.0, "sched": 500.0}, 700.0), ("b", {"batsim": 10.0, "sched": 20.0},
                                                                                 40.0), ("c", {}, 5.0)):
        run = tmp_path / name
        run.mkdir()
        (run / "out_jobs.csv").write_text("")
        (run / "run.json").write_text(json.dumps({"name": name, "cpu_seconds": cpu, "wall_seconds": wall}))
    c = cost.measure(tmp_path)
    assert (c.runs, c.measured, c.cpu, c.longest_name, c.longest_cpu) == (3, 2, 630.0, "a", 600.0)
    assert c.projected(16) == 600.0 and c.projected(1) == 630.0   # the longest run, or the total on one worker
    text = cost.describe(c, 900.0, "2 run(s) at a time on this machine")
    assert "10.5 min of CPU in all" in text and "`a`, used 10.0 min of CPU" in text
    assert "would take at least 10.0 min" in text and "1 run(s) recorded no CPU" in text


@pytest.mark.needs_engine
def test_a_one_week_study_of_the_ten_variants_runs_resumes_and_says_what_it_cost(tmp_path):
    study = small_study(tmp_path)
    r = batloc("study", "rackham", study, "-j", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = tmp_path / "out"
    runs = [json.loads(p.read_text()) for p in out.rglob("run.json")]
    assert len(runs) == 10 and all(m["status"] == "success" and m["validation"]["valid"] for m in runs)
    assert all(set(m["cpu_seconds"]) == {"batsim", "sched"} and min(m["cpu_seconds"].values()) > 0 for m in runs)
    note = (out / "study.md").read_text()
    assert "## What it cost" in note and "of CPU in all" in note and "Table II" in note
    assert "| 01 |" in note and "nan" not in note
    assert (out / "report.html").is_file()
    again = batloc("study", "rackham", study, "-j", "2")       # resumable: every run is kept
    assert again.returncode == 0, again.stderr[-2000:]
    assert "10 already complete, 0 to run" in again.stdout
