"""Job ids and profile names holding commas, quotes, newlines or non-ASCII text survive every output.

JSON allows any text in a job id or a profile name; Batsim 4.2.1 writes them
raw, which shifts every later column of jobs.csv. batloc quotes them
(``batloc.outputs``), and every reader — the validator, the analysis, evalys —
reads back what the workload said. Through the engine with a scripted FIFO,
with pybatsim's stock ``schedFcfs`` (whose ids must be integer-like, so the
odd text is in its profile names) and with a batloc scheduler (MET), each run
validated and reported.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batloc import outputs
from batloc.analysis import load
from engine_harness import Fifo, platform_xml, run, run_pybatsim, write
from policy_run import simulate

ODD = ["a,b", 'say "hi"', "two\nlines", "caf\u00e9 \u65e5\u672c", "cr\rhere", ' "," ', "plain"]
LONG = "x" * 200_000   # beyond the csv module's default limit on one field (128 KiB)


def odd_workload(ids, profiles):
    """One 1-core job per id, each on its own profile (delays 2, 3, …), submitted one second apart."""
    jobs = [{"id": jid, "subtime": 1 + i, "res": 1, "walltime": 100, "profile": p,
             "input_file": f"f{i}", "input_size": 1e6}
            for i, (jid, p) in enumerate(zip(ids, profiles))]
    return {"nb_res": 4, "jobs": jobs, "profiles": {p: {"type": "delay", "delay": 2 + i} for i, p in enumerate(profiles)}}


def test_a_field_is_quoted_only_when_it_must_be_and_reads_back(tmp_path):
    assert outputs.text("w0") == "w0" and outputs.text(3) == "3"
    assert outputs.text('a,"b"') == '"a,""b"""'
    assert outputs.text("x\ry") == '"x\ry"'   # the csv module leaves CR bare when lines end in LF
    assert outputs.quoted("") == '""'
    path = tmp_path / "t.csv"
    with outputs.open_for_writing(path) as f:
        f.write(outputs.row(["id", "name"]))
        for value in ODD:
            f.write(outputs.row([value, value[::-1]]))
    columns, rows = outputs.read_rows(path, "_line")
    assert columns == ["id", "name"]
    assert [(r["id"], r["name"]) for r in rows] == [(v, v[::-1]) for v in ODD]
    assert [r["_line"] for r in rows][:4] == [2, 3, 4, 7]   # "two\nlines" and its reverse: lines 4 to 6
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    assert list(frame["id"]) == ODD


def check_outputs(prefix, workload_path, platform, ids, profiles):
    """jobs.csv read back as the workload said, by every reader; the validator says ok."""
    rows = outputs.read_rows(f"{prefix}_jobs.csv")[1]
    mine = {r["job_id"]: r for r in rows if r["workload_name"] == "w0"}
    assert sorted(mine) == sorted(ids)
    assert {mine[j]["profile"] for j in ids} == set(profiles)
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    frame = load.read_jobs(f"{prefix}_jobs.csv")
    assert sorted(frame[frame["workload_name"] == "w0"]["job_id"]) == sorted(ids)
    assert frame["execution_time"].notna().all()   # no column shifted into another
    from evalys.jobset import JobSet

    assert len(JobSet.from_csv(f"{prefix}_jobs.csv").df) == len(rows)
    check = subprocess.run([sys.executable, "-m", "batloc.cli.main", "validate", prefix, "--workload",
                            str(workload_path), "--platform", str(platform)], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.startswith("ok: "), check.stdout + check.stderr


def test_odd_ids_and_profile_names_through_the_engine(tmp_path):
    ids = ODD + [LONG]
    profiles = [f"p{i},{name}" for i, name in enumerate(ids)]
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", odd_workload(ids, profiles))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    check_outputs(res.prefix, wl, platform, ids, profiles)
    # every row ends in Batsim's always-quoted metadata; the fields that need no quoting are as Batsim writes them
    text = Path(res.prefix + "_jobs.csv").read_text(encoding="utf-8")
    assert "\nplain,w0,\"p6,plain\",7.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY," in text


def report(folder, runs):
    """`batloc report` over run folders described as robin describes them (run.json)."""
    for name, (prefix, workload, platform) in runs.items():
        meta = {"name": name, "workload": str(workload), "platform": str(platform), "scheduler": {"name": name}}
        (Path(prefix).parent / "run.json").write_text(json.dumps(meta))
    proc = subprocess.run([sys.executable, "-m", "batloc.cli.main", "report", str(folder), "--baseline", "met"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    summary = outputs.read_rows(folder / "summary.csv")[1]
    assert sorted(r["run"] for r in summary) == sorted(runs)


@pytest.mark.needs_engine
def test_odd_names_through_a_stock_and_a_batloc_scheduler_validated_and_reported(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    profiles = [f"p{i},{name}" for i, name in enumerate(ODD)]
    runs = {}

    # pybatsim's schedFcfs: integer-like ids (contract §5), the odd text in profile names
    stock_dir = tmp_path / "runs" / "stock"
    stock_dir.mkdir(parents=True)
    ids = [str(i) for i in range(len(ODD))]
    wl = write(stock_dir, "w.json", odd_workload(ids, profiles))
    proc, sched_rc = run_pybatsim(stock_dir, platform, wl, "schedFcfs", stock_dir / "out")
    assert proc.returncode == 0 and sched_rc == 0, proc.stderr + (stock_dir / "sched.log").read_text()
    check_outputs(stock_dir / "out", wl, platform, ids, profiles)
    runs["schedFcfs"] = (stock_dir / "out", wl, platform)

    # batloc's MET: the odd text in ids and profile names, staged files and a decision log
    met_dir = tmp_path / "runs" / "met"
    met_dir.mkdir()
    wl = write(met_dir, "w.json", odd_workload(ODD, profiles))
    out = simulate(met_dir, "met", platform, wl)
    check_outputs(out.prefix, wl, platform, ODD, profiles)
    decisions = outputs.read_rows(f"{out.prefix}_decisions.csv")[1]
    assert sorted(d["job_id"] for d in decisions) == sorted(f"w0!{j}" for j in ODD)
    runs["met"] = (out.prefix, wl, platform)

    report(tmp_path / "runs", runs)
