"""`batloc study paper`: weeks drawn from a trace, the scaled platform, the sweep, and the closing note
on a hand-computed case through the real engine; the committed study on KTH-SP2 when the shared
traces are there."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.study import windows

ROOT = Path(__file__).resolve().parents[2]
KTH = ROOT.parent / "shared" / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
SUNDAY = 1704585600   # 2024-01-07 00:00 UTC
DAY = 86400


def batloc(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "batloc.cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_candidate_weeks_start_on_mondays_and_keep_their_context_inside_the_trace():
    # trace from Wednesday 2024-01-10 to Wednesday 2024-02-07 (28 days)
    first, last = 3 * DAY, 31 * DAY
    starts = windows.candidate_weeks(first, last, SUNDAY, before=2 * DAY, after=2 * DAY)
    # Mondays 01-15 (context from 01-13 >= 01-10), 01-22, 01-29 (ends 02-05 + 2 d = 02-07 <= last)
    assert [windows.label(s, SUNDAY) for s in starts] == ["2024-01-15", "2024-01-22", "2024-01-29"]
    assert windows.candidate_weeks(first, last, SUNDAY, before=6 * DAY, after=0) == [15 * DAY, 22 * DAY]


def test_a_smaller_draw_is_part_of_a_larger_one_and_too_many_weeks_is_one_line():
    candidates = [float(i) for i in range(30)]
    two, twelve = windows.draw(candidates, 2, seed=7), windows.draw(candidates, 12, seed=7)
    assert len(set(twelve)) == 12 and set(two) <= set(twelve) and twelve == sorted(twelve)
    with pytest.raises(windows.WindowError, match="the trace has 30 whole weeks with their context, fewer than the 31"):
        windows.draw(candidates, 31, seed=7)


def swf(path: Path, jobs) -> Path:
    """A Standard Workload Format file: (submit, run, procs, requested time, user)."""
    lines = ["; UnixStartTime: %d" % SUNDAY, "; MaxProcs: 40"]
    for i, (submit, run, procs, req, user) in enumerate(jobs, 1):
        lines.append(f"{i} {submit} 0 {run} {procs} -1 -1 {procs} {req} -1 1 {user} 1 -1 -1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def two_jobs_one_file(tmp_path: Path) -> Path:
    """Two full-node jobs of one user 10 s apart share a 128 GB file (1 280 s at 0.1 GB/s); two 1-core
    jobs of another user bound the trace outside the evaluated Monday."""
    return swf(tmp_path / "trace.swf", [
        (3600, 60, 1, 600, 9),                  # Sunday: before the window
        (DAY + 100, 100, 20, 10000, 1),         # Monday: J1, file F
        (DAY + 110, 100, 20, 10000, 1),         # J2, same user and cores within 800 s: file F
        (8 * DAY + 3600, 60, 1, 600, 9),        # next Monday: after the window
    ])


def study_file(tmp_path: Path, trace: Path, **changes) -> Path:
    desc = yaml.safe_load((ROOT / "experiments" / "paper-study.yaml").read_text())
    desc.update({"output-dir": str(tmp_path / "study"), "trace": str(trace), "windows": 1, "length": "1d",
                 "before": 0, "after": 0, **changes})
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def test_prepare_scales_rackham_to_the_trace_and_writes_a_sweep(tmp_path):
    trace = two_jobs_one_file(tmp_path)
    proc = batloc("study", "paper", study_file(tmp_path, trace, options={"scheduling_period": 30}), "--prepare-only")
    assert proc.returncode == 0, proc.stderr
    assert "week 2024-01-08: 2 jobs, 2 evaluated" in proc.stdout
    out = tmp_path / "study"
    sweep = yaml.safe_load((out / "sweep.yaml").read_text())
    (platform,) = sweep["platforms"]
    assert Path(platform).name == "rackham-2n.xml"    # MaxProcs 40 / 20 cores
    shown = batloc("platform", "show", platform).stdout
    assert "2 nodes" in shown and "20 cores" in shown
    (workload,) = sweep["workloads"]
    jobs = json.loads(Path(workload).read_text())["jobs"]
    assert len(jobs) == 2 and jobs[0]["input_file"] == jobs[1]["input_file"]
    assert jobs[0]["input_size"] == 128e9
    lea_bf = next(s for s in sweep["schedulers"] if s["name"] == "lea-bf")
    assert lea_bf["options"] == {"backfilling": True, "scheduling_period": 30}
    assert sweep["baseline"] == "fcfs" and len(sweep["schedulers"]) == 10
    assert json.loads((out / "study.json").read_text())["weeks"][0]["label"] == "2024-01-08"


def test_weeks_can_be_named_instead_of_drawn_and_must_fit_with_their_context(tmp_path):
    trace = two_jobs_one_file(tmp_path)
    proc = batloc("study", "paper", study_file(tmp_path, trace, weeks=["2024-01-08"], windows=5), "--prepare-only")
    assert proc.returncode == 0 and "week 2024-01-08: 2 jobs, 2 evaluated" in proc.stdout, proc.stderr
    proc = batloc("study", "paper", study_file(tmp_path, trace, weeks=["2024-01-08"], before="1d"), "--prepare-only")
    assert proc.returncode == 2   # the Sunday job at 01:00 is the trace's first: one day before does not fit
    assert proc.stderr.strip().splitlines() == [f"batloc study: {trace}: week 2024-01-08 with its context does not "
                                                "fit in the trace"]


@pytest.mark.needs_engine
def test_study_note_puts_a_hand_computed_table_ii_beside_the_papers(tmp_path):
    # FCFS and EFT start J2 at once on the idle node: it loads F again (2 x 1 280 s of loads).
    # LEA waits for the node holding F (W x 1 280 s outweighs J1's walltime): one load, -50 %.
    trace = two_jobs_one_file(tmp_path)
    proc = batloc("study", "paper", study_file(tmp_path, trace, schedulers=["fcfs", "eft", "lea"]), "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = ("| file-wait reduction vs FCFS | EFT | LEA |\n|---|---|---|\n"
             "| paper (12 Rackham weeks) | 0.9 % | 17.1 % |\n| batloc (this study) | 0.0 % | 50.0 % |")
    assert table in proc.stdout
    note = (tmp_path / "study" / "study.md").read_text()
    assert table in note
    assert "Rackham's node (20 cores, 128 GB, 0.1 GB/s FATPIPE link) × 2 nodes" in note
    assert (tmp_path / "study" / "report.html").exists()
    # complete runs are kept: a second invocation runs nothing and writes the same tables
    again = batloc("study", "paper", study_file(tmp_path, trace, schedulers=["fcfs", "eft", "lea"]))
    assert "3 already complete, 0 to run" in again.stdout and table in again.stdout


def test_a_missing_trace_or_a_bad_study_is_one_line(tmp_path):
    proc = batloc("study", "paper", "--trace", tmp_path / "nowhere.swf.gz", "--prepare-only", "-o", tmp_path / "o")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"batloc study: trace not found: {tmp_path / 'nowhere.swf.gz'} (a Standard Workload Format log, e.g. "
        "KTH-SP2 from the Parallel Workloads Archive; give its path with --trace)"]
    bad = study_file(tmp_path, two_jobs_one_file(tmp_path), windows=3)
    proc = batloc("study", "paper", bad, "--prepare-only")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "the trace has 1 whole weeks with their context, fewer than the 3 windows asked for" in proc.stderr


def test_an_output_folder_that_is_a_file_or_cannot_be_written_is_one_line(tmp_path):
    # a traceback ending in FileExistsError, and one in WorkloadError on a full disk (the probe)
    trace = two_jobs_one_file(tmp_path)
    (tmp_path / "st").write_text("a file")
    proc = batloc("study", "paper", study_file(tmp_path, trace, windows=1), "--prepare-only", "-o", tmp_path / "st")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"batloc study: output-dir {tmp_path / 'st'}: {tmp_path / 'st'} is a file, not a folder"], proc.stderr
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "inputs").write_text("in the way of the study's inputs folder")
    proc = batloc("study", "paper", study_file(tmp_path, trace, windows=1), "--prepare-only", "-o", tmp_path / "ro")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("batloc study: "), proc.stderr


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} not available")
def test_the_committed_study_on_kth_draws_two_of_the_full_studys_twelve_weeks(tmp_path):
    small = batloc("study", "paper", "--prepare-only", "-o", tmp_path / "small")
    full = batloc("study", "paper", "--full", "--prepare-only", "-o", tmp_path / "full")
    assert small.returncode == 0 and full.returncode == 0, small.stderr + full.stderr
    weeks = [json.loads((tmp_path / name / "study.json").read_text())["weeks"] for name in ("small", "full")]
    assert len(weeks[0]) == 2 and len(weeks[1]) == 12
    assert {w["label"] for w in weeks[0]} <= {w["label"] for w in weeks[1]}
    info = json.loads((tmp_path / "small" / "study.json").read_text())
    assert info["nodes"] == 5 and all(w["evaluated"] > 300 for w in weeks[1])   # KTH-SP2: 100 processors
