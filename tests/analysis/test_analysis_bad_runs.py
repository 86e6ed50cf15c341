"""`batloc report` checks each run before using it (issue 21, item 2).

One run of the hand-made pair (lea) is damaged in one way per case; the
report leaves it out with one line naming the file (no traceback), exits 1,
and still reports the intact run (fcfs).
"""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from batloc.analysis.cli import main as report_main

HAND = Path(__file__).resolve().parents[1] / "data" / "analysis" / "hand"


def cut_mid_line(run: Path) -> str:
    p = run / "out_jobs.csv"
    text = p.read_text()
    p.write_text(text[: text.index("\n2,w0,") + 12])   # a copy cut inside job 2's row
    return str(p)


def drop_last_rows(run: Path) -> str:
    p = run / "out_jobs.csv"
    lines = p.read_text().splitlines(keepends=True)
    p.write_text("".join(lines[:-3]))                   # whole lines: only the row count can tell
    return str(p)


def binary_jobs(run: Path) -> str:
    p = run / "out_jobs.csv"
    p.write_bytes(bytes(range(256)) * 8)
    return str(p)


def binary_decisions(run: Path) -> str:
    p = run / "out_decisions.csv"
    p.write_bytes(b"time,job_id\n\xff\xfe\x00\x01garbage\n")
    return str(p)


def garbage_run_json(run: Path) -> str:
    p = run / "run.json"
    p.write_bytes(b'{"name": "lea", \x00\x9c')
    return str(p)


def invalid_schedule(run: Path) -> str:
    p = run / "run.json"
    meta = json.loads(p.read_text())
    meta["validation"] = {"valid": False, "violations": {"memory over capacity": 3}}
    p.write_text(json.dumps(meta))
    return str(p)


def robin_failed_it(run: Path) -> str:
    """run.json as robin writes it for an impossible schedule: a failed run with the validator's counts."""
    p = run / "run.json"
    meta = json.loads(p.read_text())
    meta.update(status="failure", reason="invalid schedule: 1 violation(s)",
                validation={"valid": False, "violations": {"core used twice": 1}})
    p.write_text(json.dumps(meta))
    return str(p)


def garbage_workload(run: Path) -> str:
    p = run / "workload.json"
    p.write_bytes(b"\x00\x01 not json")
    meta = (run / "run.json").read_text().replace("../workload.json", "workload.json")
    (run / "run.json").write_text(meta)
    return str(p)


CASES = {
    "jobs.csv cut mid-line": (cut_mid_line, "cut short"),
    "jobs.csv missing its last rows": (drop_last_rows, "rows for 4 of the workload's 7 jobs"),
    "jobs.csv binary": (binary_jobs, "not a CSV file"),
    "decisions.csv binary": (binary_decisions, "not a CSV file"),
    "run.json garbage": (garbage_run_json, "unreadable run.json"),
    "validator found violations": (invalid_schedule, "memory over capacity 3"),
    "robin failed it as invalid": (robin_failed_it, "core used twice 1"),
    "workload garbage": (garbage_workload, "cannot read the workload"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_run_is_left_out_in_one_line(tmp_path, case):
    from batloc.analysis.report import gather

    damage, words = CASES[case]
    root = tmp_path / "hand"
    shutil.copytree(HAND, root)
    bad_file = damage(root / "lea")
    messages = []
    results, _, left_out = gather(root, None, messages.append)
    assert [r.name for r in results] == ["fcfs"]      # the intact run is still analysed
    assert list(left_out) == ["lea"]
    assert len(messages) == 1 and "\n" not in messages[0], messages
    assert bad_file in messages[0] and words in messages[0], messages[0]


def test_report_names_each_left_out_run_and_exits_1(tmp_path, capsys):
    root = tmp_path / "hand"
    shutil.copytree(HAND, root)
    for name, damage in (("cut", cut_mid_line), ("binary", binary_jobs), ("invalid", invalid_schedule)):
        shutil.copytree(root / "lea", root / name)
        (root / name / "run.json").write_text((root / name / "run.json").read_text().replace('"lea"', f'"{name}"'))
        damage(root / name)
    assert report_main([str(root)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for name, words in (("cut", "cut short"), ("binary", "not a CSV file"), ("invalid", "memory over capacity 3")):
        lines = [ln for ln in err.splitlines() if f"run {name}:" in ln]
        assert len(lines) == 1 and str(root / name) in lines[0] and words in lines[0], err
    assert sorted(pd.read_csv(root / "summary.csv")["run"]) == ["fcfs", "lea"]
    page = (root / "report.html").read_text()
    start = page.index("Runs left out")
    end = page.index("<h2", start)
    assert all(f">{name}<" in page[start:end] for name in ("cut", "binary", "invalid"))
    assert ">cut<" not in page[end:] and ">binary<" not in page[end:]


def test_a_report_made_again_compares_against_the_baseline_its_sweep_recorded(tmp_path):
    # robin writes the sweep's baseline: into every run.json; `batloc report` without --baseline reads it,
    # so that the report made again matches the sweep's own (it used fcfs, whatever the sweep said)
    from batloc.analysis.cli import recorded_baseline

    assert recorded_baseline(tmp_path) == "fcfs"
    for name, base in (("a", "stock"), ("b", "stock")):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "run.json").write_text(json.dumps({"baseline": base}))
        (tmp_path / "runs" / name / "out_jobs.csv").write_text("")      # a run is a jobs.csv (load.discover_runs)
    assert recorded_baseline(tmp_path) == "stock"
    (tmp_path / "runs" / "b" / "run.json").write_text(json.dumps({"baseline": "other"}))
    assert recorded_baseline(tmp_path) == "fcfs"      # two sweeps disagree: the documented default
