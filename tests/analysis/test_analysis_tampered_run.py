"""`batloc validate` on a copied robin run folder judges the copy's own files, and fails every copy a hostile
user tampered with: outputs emptied, cut, edited (with run.json's digests kept, or removed as an older robin's
run.json has none), run.json pointed elsewhere. The report leaves such a copy out as well (issue 37).

One real run (robin, FCFS in the engine's process) on tests/data/schedulers/two_nodes.xml, whose ids are cores
0-1 (n000) and 2-3 (n001), then lustre 4, n000_mem 5, n001_mem 6; loads at 1 GB/s; every job a delay.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.analysis import load, validate
from batloc.analysis.checks import RunLeftOut, check_validation

pytestmark = pytest.mark.needs_engine

PLATFORM = Path(__file__).resolve().parents[1] / "data" / "schedulers" / "two_nodes.xml"
FILES = "AABACBAC"


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """A validated run folder: 8 jobs of 1 or 2 cores sharing files A, B, C (misses, one hit, stagings)."""
    base = tmp_path_factory.mktemp("tamper")
    jobs = [{"id": i + 1, "subtime": 1 + 2 * i, "res": 1 + i % 2, "walltime": 100, "profile": "d5" if i == 5 else "d20",
             "input_file": f, "input_size": 5e9 * (1 + "ABC".index(f))} for i, f in enumerate(FILES)]
    (base / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {
        "d20": {"type": "delay", "delay": 20}, "d5": {"type": "delay", "delay": 5}}}))
    desc = {"output-dir": str(base / "out"), "platforms": [str(PLATFORM)], "workloads": [str(base / "w.json")],
            "schedulers": ["fcfs"], "in-process": True, "simulation-timeout": 600, "ready-timeout": 600}
    (base / "sweep.yaml").write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(base / "sweep.yaml"), "--no-report"],
                          capture_output=True, text=True, timeout=900, cwd=base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = base / "out" / "runs" / "two_nodes__w__fcfs"
    assert json.loads((run / "run.json").read_text())["validation"]["valid"] is True
    return run


def lines(path):
    return path.read_text().splitlines(keepends=True)


def edit_row(path, match, **fields):
    """Set `fields` (column: value) on the first row of a CSV whose `match` columns have those values."""
    rows = lines(path)
    header = rows[0].rstrip("\r\n").split(",")
    for i, line in enumerate(rows[1:], start=1):
        end = line[len(line.rstrip("\r\n")):]
        cells = line.rstrip("\r\n").split(",")
        if all(cells[header.index(k)] == v for k, v in match.items()):
            for k, v in fields.items():
                cells[header.index(k)] = v
            rows[i] = ",".join(cells) + end
            path.write_text("".join(rows))
            return
    raise AssertionError(f"no row {match} in {path}")


def drop_row(path, match):
    rows = lines(path)
    header = rows[0].rstrip("\r\n").split(",")
    keep = [r for r in rows[1:] if not all(r.rstrip("\r\n").split(",")[header.index(k)] == v for k, v in match.items())]
    assert len(keep) == len(rows) - 2
    path.write_text("".join([rows[0], *keep]))


def edit_json(path, **changes):
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


JOBS, DECISIONS = "out_jobs.csv", "out_decisions.csv"
W1, STAGE1 = {"job_id": "1", "workload_name": "w0"}, {"job_id": "stage-w0-1-n000"}


# Each tampering of the copy's outputs (the FCFS schedule: job 1 on core 0 [6, 26) after its load [1, 6) of A;
# job 4 hits A on n001 at 28; job 6 (a 5 s delay) on cores 2-3 [58, 63)).
TAMPERED = {
    "jobs.csv emptied": lambda d: (d / JOBS).write_text(""),
    "jobs.csv header only": lambda d: (d / JOBS).write_text(lines(d / JOBS)[0]),
    "a job's row removed": lambda d: drop_row(d / JOBS, W1),
    "a staging's row removed": lambda d: drop_row(d / JOBS, STAGE1),
    "finish before start": lambda d: edit_row(d / JOBS, W1, finish_time="5.000000"),
    "finish earlier, columns kept in step": lambda d: edit_row(
        d / JOBS, W1, finish_time="16.000000", execution_time="10.000000", turnaround_time="15.000000"),
    "start earlier than the load's end": lambda d: edit_row(
        d / JOBS, W1, starting_time="2.000000", finish_time="22.000000", waiting_time="1.000000",
        turnaround_time="21.000000"),
    "allocation moved to a storage": lambda d: edit_row(d / JOBS, W1, allocated_resources="5"),
    "allocation moved onto busy cores": lambda d: edit_row(d / JOBS, {"job_id": "6"}, allocated_resources="0-1"),
    "allocation moved in both files": lambda d: (edit_row(d / JOBS, W1, allocated_resources="1"),
                                                 edit_row(d / DECISIONS, {"job_id": "w0!1"}, alloc="1")),
    "submission moved": lambda d: edit_row(d / JOBS, W1, submission_time="5.000000", waiting_time="1.000000",
                                           turnaround_time="21.000000"),
    "a load made faster": lambda d: edit_row(d / JOBS, STAGE1, execution_time="1.000000", finish_time="2.000000",
                                             turnaround_time="1.000000"),
    "a miss logged as a hit": lambda d: edit_row(d / DECISIONS, {"job_id": "w0!7"}, cache="hit", staging_job=""),
    "a decision's node changed": lambda d: edit_row(d / DECISIONS, {"job_id": "w0!4"}, node="n000"),
    "a decision's file changed": lambda d: edit_row(d / DECISIONS, {"job_id": "w0!4"}, input_file="C"),
    "a decision removed": lambda d: drop_row(d / DECISIONS, {"job_id": "w0!4"}),
    "decision log deleted": lambda d: (d / DECISIONS).unlink(),
    # run.json relabelled: another memory model replayed, another scheduler reported
    "run.json's memory model edited": lambda d: edit_json(d / "run.json", scheduler={
        **json.loads((d / "run.json").read_text())["scheduler"], "options": {"cache": "lru"}}),
}
# Only a digest can tell this from a run: a stock scheduler's run has no decision log.
DIGEST_ONLY = {"decision log deleted"}


def copy_of(original, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    return copy


def check(folder, capsys):
    rc = validate.main([str(folder)])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_an_untouched_copy_validates_and_reads_its_own_files(original, tmp_path, capsys):
    copy = copy_of(original, tmp_path)
    rc, text = check(copy, capsys)
    assert rc == 0 and "ok: 8/8 jobs, 7 stagings, 8 decisions checked" in text, text
    # the copy's files, not those at run.json's export_prefix: the original gone, the copy still validates
    moved = tmp_path / "moved"
    shutil.copytree(original, moved)
    shutil.rmtree(copy)
    shutil.copytree(moved, copy)
    shutil.rmtree(moved)
    assert check(copy, capsys)[0] == 0


@pytest.mark.parametrize("digests", ["kept", "removed"])
@pytest.mark.parametrize("tamper", sorted(TAMPERED))
def test_every_tampered_copy_fails(original, tmp_path, capsys, tamper, digests):
    copy = copy_of(original, tmp_path)
    TAMPERED[tamper](copy)
    if digests == "removed":
        if tamper in DIGEST_ONLY:
            pytest.skip("a possible schedule whose records agree: only run.json's digests tell it from the run")
        meta = json.loads((copy / "run.json").read_text())
        del meta["validation"]["outputs"], meta["inputs"]
        (copy / "run.json").write_text(json.dumps(meta))
    rc, text = check(copy, capsys)
    assert rc != 0, f"{tamper}: {text}"
    assert "Traceback" not in text
    if digests == "kept" and rc == 1:
        assert "file changed since its run" in text
    # the report leaves it out too: run.json's verdict is not on these files
    run = load.discover_runs(copy)
    if digests == "kept" and run:
        with pytest.raises(RunLeftOut, match="run.json's verdict is not this run's"):
            check_validation(run[0].meta, copy / "run.json", run[0].prefix)


def test_a_run_json_pointed_at_the_original_does_not_hide_a_tampered_copy(original, tmp_path, capsys):
    copy = copy_of(original, tmp_path)
    edit_row(copy / JOBS, W1, finish_time="5.000000")
    edit_json(copy / "run.json", export_prefix=str(original / "out"))
    rc, text = check(copy, capsys)
    assert rc == 1 and "w0!1 finishes at 5.000000 before it starts" in text, text


def test_a_folder_whose_outputs_are_elsewhere_is_refused_in_one_line(original, tmp_path, capsys):
    copy = copy_of(original, tmp_path)
    for f in copy.glob("out_*"):
        f.unlink()
    edit_json(copy / "run.json", export_prefix=str(original / "out"))
    rc, text = check(copy, capsys)
    assert rc == 2 and len(text.strip().splitlines()) == 1, text
    assert f"{copy}: no *_jobs.csv in the folder; its run.json's export_prefix {original / 'out'} is outside" in text


def test_run_json_pointed_at_another_workload_fails(original, tmp_path, capsys):
    copy = copy_of(original, tmp_path)
    other = json.loads(Path(json.loads((copy / "run.json").read_text())["workload"]).read_text())
    for j in other["jobs"]:
        j["subtime"] += 1           # every job a second later: the run's own starts stay possible
    (tmp_path / "other.json").write_text(json.dumps(other))
    edit_json(copy / "run.json", workload=str(tmp_path / "other.json"))
    rc, text = check(copy, capsys)
    assert rc == 1 and "is not the workload the run read" in text and "row not its workload job" in text, text
    # without robin's digests the rows still disagree with the workload named
    meta = json.loads((copy / "run.json").read_text())
    del meta["inputs"]
    (copy / "run.json").write_text(json.dumps(meta))
    rc, text = check(copy, capsys)
    assert rc == 1 and "w0!1: submission_time 1.000000 (workload: 2)" in text, text
