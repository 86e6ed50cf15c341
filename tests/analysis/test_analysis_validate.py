"""`batloc validate` on hand-made jobs.csv files: one test per kind of violation, and bad inputs.

Platform: tests/data/schedulers/two_nodes.xml, whose Batsim 4.2 ids are cores
0-1 (n000) and 2-3 (n001), then storages lustre 4, n000_mem 5, n001_mem 6.
"""

import json
from pathlib import Path

import pytest

from batloc.analysis import validate
from batloc.outputs import DECISIONS_COLUMNS, JOBS_HEADER

PLATFORM = "tests/data/schedulers/two_nodes.xml"
# (id, subtime, res) of the workload
JOBS = [(1, 10, 1), (2, 10, 2), (3, 20, 1)]


def row(jid, start, finish, alloc, res=1, sub=10.0, state="COMPLETED_SUCCESSFULLY", workload="w0"):
    times = f"{start:.6f},{finish - start:.6f},{finish:.6f},{start - sub:.6f},{finish - sub:.6f},1.000000"
    return (f"{jid},{workload},d10,{sub:.6f},{res},60.000000,1,{state},{times},{alloc},0.000000,\"\"")


CLEAN = [row(1, 10, 20, "0"), row(2, 10, 30, "2-3", res=2), row(3, 20, 30, "0", sub=20)]


def run(tmp_path, capsys, rows, jobs=JOBS, platform=PLATFORM):
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + "\n".join(rows) + "\n")
    wl = {"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10}},
          "jobs": [{"id": i, "subtime": s, "res": r, "walltime": 60, "profile": "d10"} for i, s, r in jobs]}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    rc = validate.main([str(tmp_path / "out"), "--workload", str(tmp_path / "w.json"), "--platform", platform])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_a_clean_run_passes(tmp_path, capsys):
    rc, out, _ = run(tmp_path, capsys, CLEAN)
    assert rc == 0 and "ok: 3/3 jobs, 0 stagings" in out


@pytest.mark.parametrize("rows, kind, detail", [
    # storage id 5 (n000_mem) is not a core
    ([row(1, 10, 20, "5"), *CLEAN[1:]], "outside compute ids", "w0!1 runs on 5"),
    # id 7 does not exist at all
    ([row(1, 10, 20, "7"), *CLEAN[1:]], "outside compute ids", "w0!1 runs on 7"),
    ([CLEAN[0], row(2, 10, 30, "2", res=2), CLEAN[2]], "wrong core count", "w0!2 asked for 2 cores and got 1"),
    ([CLEAN[0], CLEAN[1], row(3, 20, 15, "0", sub=20)], "finish before start", "w0!3 finishes at 15.000000"),
    (CLEAN[:2], "job missing", "job 3 of the workload"),
    ([*CLEAN, CLEAN[2]], "job listed twice", "job 3 appears 2 times"),
    ([*CLEAN[:2], row(3, 20, 30, "0", sub=20, state="RUNNING")], "no final state", "'RUNNING'"),
    ([*CLEAN, row(9, 20, 30, "1", sub=20)], "job not in workload", "w0!9"),
    ([row(1, 10, 20, "1"), row(2, 10, 30, "1-2", res=2), CLEAN[2]], "core used twice", "core 1: w0!2"),
    ([row(1, 5, 20, "0"), *CLEAN[1:]], "start before submission", "w0!1 starts at 5.000000"),
    ([*CLEAN, row("stage-w0-1-n000", 1, 2, "0 5", res=2, sub=1, workload="batloc-stage")],
     "staging outside storage ids", "runs on 0"),
    # a staging job's row twice: its load would count twice in every transfer figure
    ([*CLEAN, *[row("stage-w0-1-n000", 1, 2, "4-5", res=2, sub=1, workload="batloc-stage")] * 2],
     "job listed twice", "staging job batloc-stage!stage-w0-1-n000 appears 2 times"),
])
def test_each_violation_kind_is_reported_and_counted(tmp_path, capsys, rows, kind, detail):
    rc, out, _ = run(tmp_path, capsys, rows)
    assert rc == 1
    first, *lines = out.splitlines()
    assert f"{kind} 1" in first
    assert any(line.strip().startswith(f"{kind}:") and detail in line for line in lines), out


def test_counts_per_kind(tmp_path, capsys):
    rows = [row(1, 10, 20, "5"), row(2, 10, 30, "2", res=2)]     # job 3 missing too
    rc, out, _ = run(tmp_path, capsys, rows)
    assert rc == 1
    assert out.splitlines()[0] == "3 violation(s): job missing 1, outside compute ids 1, wrong core count 1"


@pytest.mark.parametrize("setup, message", [
    (lambda d: (d / "out_jobs.csv").unlink(), "out_jobs.csv: cannot read"),
    (lambda d: (d / "out_jobs.csv").write_text("a,b\n1,2\n"), "not a Batsim jobs.csv"),
    (lambda d: (d / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + row(1, 10, 20, "0").replace("20.000000", "x", 1)),
     "out_jobs.csv:2: job 1: cannot read finish_time 'x'"),
    (lambda d: (d / "w.json").write_text("{"), "w.json:1: not valid JSON"),
    (lambda d: (d / "out_jobs.csv").write_bytes(b"\xff\xfe\x00garbage"), "out_jobs.csv: not UTF-8 text (byte 0)"),
    (lambda d: (d / "out_decisions.csv").write_text("time,job_id\n1,w0!1\n"), "not a batloc decision log"),
    (lambda d: (d / "out_decisions.csv").write_text(",".join(DECISIONS_COLUMNS) + "\nsoon,w0!1" + "," * 10 + "\n"),
     "out_decisions.csv:2: job w0!1: cannot read time 'soon'"),
    # an id holding a newline cannot split the one line
    (lambda d: (d / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + row('"a\nb"', 10, 20, "0").replace(
        "20.000000", "x", 1)), "out_jobs.csv:2: job a\\nb: cannot read finish_time 'x'"),
    (lambda d: (d / "w.json").write_text("[]"), "not a Batsim workload"),
])
def test_bad_inputs_are_one_line_without_traceback(tmp_path, capsys, setup, message):
    run(tmp_path, capsys, CLEAN)
    setup(tmp_path)
    rc = validate.main([str(tmp_path / "out"), "--workload", str(tmp_path / "w.json"), "--platform", PLATFORM])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and message in err[0] and "Traceback" not in err[0], err


def test_bad_platform_and_bad_arguments(tmp_path, capsys):
    rc, _, err = run(tmp_path, capsys, CLEAN, platform=str(tmp_path / "nowhere.xml"))
    assert rc == 2 and "nowhere.xml: cannot read platform" in err and "Traceback" not in err
    assert validate.main([str(tmp_path / "out"), "--workload", str(tmp_path / "w.json")]) == 2
    assert validate.main([str(tmp_path / "out"), "--workload", "w.json", "--platform", PLATFORM,
                          "--cache", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "give --platform" in err and "invalid choice" in err and "Traceback" not in err


@pytest.mark.parametrize("walltime, start, finish, state, late", [
    # its window [10, 15) ended during its load [10, 20): executed and killed in one answer at 15
    (5, 15.0, 15.0, "COMPLETED_KILLED", False),             # both at once (the instant mode)
    (5, 15.0, 15.00001, "COMPLETED_KILLED", False),         # Batsim's 1e-5 s for a job computed in no time
    (5, 15.0024, 15.003, "COMPLETED_KILLED", False),        # the kill a few link latencies after (timed mode)
    (5, 14.999999, 14.999999, "COMPLETED_KILLED", False),   # a timer is due within 1 µs of the window's end
    (5, 14.9, 15.0, "COMPLETED_KILLED", True),              # it computed within its window without its file
    (5, 15.0, 15.0, "COMPLETED_SUCCESSFULLY", True),
    (60, 15.0, 15.0, "COMPLETED_KILLED", True),             # killed at once, but long before its window's end
])
def test_only_a_job_executed_at_its_window_end_may_start_before_its_file(tmp_path, walltime, start, finish, state,
                                                                         late):
    # Job 1 missed file A on n000 at 10; its staging loads [10, 20).
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + "\n".join([
        row("stage-w0-1-n000", 10, 20, "4 5", res=2, sub=10, workload="batloc-stage"),
        row(1, start, finish, "0", state=state)]) + "\n")
    rows = validate.read_jobs_csv(str(tmp_path / "out_jobs.csv"))
    decisions = [{"time": "10.000000", "job_id": "w0!1", "node": "n000", "cache": "miss", "input_file": "A",
                  "input_size": "1000.000000", "staging_job": "batloc-stage!stage-w0-1-n000"}]
    jobs = {"1": {"id": 1, "subtime": 10, "res": 1, "walltime": walltime, "input_file": "A", "input_size": 1000}}
    found = validate.check_files_and_memory(rows, decisions, {"n000": 1e9}, "paper", jobs)
    assert [kind for kind, _ in found] == ([validate.FILE_LATE] if late else [])


def test_batsims_epsilon_run_holds_no_core_and_is_killed_as_it_starts(tmp_path, capsys):
    # Batsim 4.2.1 (and the engine) write a job that ran in no time with an execution time of 1e-5 s and its
    # finish 1e-5 s after its start (contract §5): job 1, executed and killed at 15, held core 0 for no time, so
    # job 3 starting there at 15 uses no core twice. (A job that really ran 10 us reads the same: six decimals
    # cannot tell them apart.)
    rows = [row(1, 15, 15.00001, "0", state="COMPLETED_KILLED"), CLEAN[1], row(3, 15, 30, "0", sub=10)]
    assert ",0.000010,15.000010," in rows[0]
    rc, out, _ = run(tmp_path, capsys, rows, jobs=[(1, 10, 1), (2, 10, 2), (3, 10, 1)])
    assert rc == 0, out
    parsed = validate.read_jobs_csv(str(tmp_path / "out_jobs.csv"))
    assert parsed[0]["_finish"] == parsed[0]["_start"]   # held its core for no time
    # 2e-5 s is a run: the core is used twice
    rows[0] = row(1, 15, 15.00002, "0", state="COMPLETED_KILLED")
    rc, out, _ = run(tmp_path, capsys, rows, jobs=[(1, 10, 1), (2, 10, 2), (3, 10, 1)])
    assert rc == 1 and "core used twice 1" in out


@pytest.mark.parametrize("model", ["strict", "authors"])
def test_a_load_ending_in_its_last_users_end_instant_serves_a_start_then(tmp_path, model):
    # Issue 32's false "hit not in memory" (LEA, authors profile, saturated oracle), rebuilt small:
    # job 1 misses file A on n000 at 10, its staging loads [10, 20), and job 1's window ends at 20,
    # the instant the load completes (killed as it starts); job 3 starts there at 20 and finds A loaded (kept through the
    # instant of its last user's end). The replay must complete the load before that end.
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + "\n".join([
        row("stage-w0-1-n000", 10, 20, "4 5", res=2, sub=10, workload="batloc-stage"),
        row(1, 20, 20, "0", state="COMPLETED_KILLED"),
        row(3, 20, 30, "0", sub=20)]) + "\n")
    rows = validate.read_jobs_csv(str(tmp_path / "out_jobs.csv"))
    decisions = [{"time": "10.000000", "job_id": "w0!1", "node": "n000", "cache": "miss", "input_file": "A",
                  "input_size": "1000.000000", "staging_job": "batloc-stage!stage-w0-1-n000"},
                 {"time": "20.000000", "job_id": "w0!3", "node": "n000", "cache": "hit", "input_file": "A",
                  "input_size": "1000.000000", "staging_job": ""}]
    assert validate.check_files_and_memory(rows, decisions, {"n000": 1e9}, model) == []
    # a second later the file is gone: the same start logged as a hit is a false hit
    late = [dict(decisions[0]), dict(decisions[1], time="21.000000")]
    rows[-1]["_start"] = 21.0
    assert [kind for kind, _ in validate.check_files_and_memory(rows, late, {"n000": 1e9}, model)] == [
        validate.FALSE_HIT]


def test_a_run_folder_is_read_from_its_run_json(tmp_path, capsys):
    # the outputs, workload, platform and memory model robin recorded; an impossible schedule still fails
    run(tmp_path, capsys, CLEAN)
    meta = {"name": "r", "workload": str(tmp_path / "w.json"), "platform": str(Path(PLATFORM).resolve()),
            "export_prefix": str(tmp_path / "out"), "scheduler": {"name": "x", "policy": "lea", "options": {}}}
    (tmp_path / "run.json").write_text(json.dumps(meta))
    assert validate.main([str(tmp_path)]) == 0 and "ok: 3/3 jobs" in capsys.readouterr().out
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + "\n".join([row(1, 5, 20, "0"), *CLEAN[1:]]) + "\n")
    assert validate.main([str(tmp_path)]) == 1 and "start before submission" in capsys.readouterr().out
    (tmp_path / "run.json").unlink()
    assert validate.main([str(tmp_path)]) == 2
    assert "folder without run.json" in capsys.readouterr().err


# A plain Batsim platform: hosts without batloc's properties, a storage of Batsim's own, a master
# (ids: a0 0, a1 1, pfs 2; the master has none).
PLAIN = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
 <zone id="AS0" routing="Full">
   <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
   <host id="a0" speed="1Gf"/>
   <host id="a1" speed="1Gf"/>
   <host id="pfs" speed="1Gf"><prop id="role" value="storage"/></host>
 </zone>
</platform>
"""


@pytest.mark.parametrize("rows, violation", [
    ([row(1, 10, 20, "0"), row(2, 20, 30, "0-1", res=2), row(3, 30, 40, "1", sub=20)], None),
    # a stock scheduler's job on Batsim's storage, or on a host another job holds
    ([row(1, 10, 20, "2"), row(2, 20, 30, "0-1", res=2), row(3, 30, 40, "1", sub=20)],
     "outside compute ids: w0!1 runs on 2"),
    ([row(1, 10, 20, "0"), row(2, 15, 30, "0-1", res=2, sub=10), row(3, 30, 40, "1", sub=20)],
     "core used twice: core 0"),
])
def test_a_plain_batsim_platform_is_checked_by_its_compute_hosts(tmp_path, capsys, rows, violation):
    (tmp_path / "plain.xml").write_text(PLAIN)
    rc, out, err = run(tmp_path, capsys, rows, platform=str(tmp_path / "plain.xml"))
    assert err.strip().endswith("out_decisions.csv: file checks skipped")     # a stock scheduler's run
    if violation is None:
        assert rc == 0 and "ok: 3/3 jobs, 0 stagings" in out
    else:
        assert rc == 1 and violation in out


def test_a_long_delay_worn_down_microseconds_early_is_no_short_run():
    # The saturated oracle under Batsim's timing: w0!9, a 448 532 s delay started at 1 280.000001, completed at
    # 449 811.999998 (3 µs early: a sleep worn down over tens of thousands of clock steps, each rounded to its
    # double). A whole second short is no drift: the row was made up.
    from batloc.analysis import records

    def rows(finish):
        r = {"job_id": "9", "workload_name": "w0", "final_state": "COMPLETED_SUCCESSFULLY", "_start": 1280.000001,
             "_finish": finish, "_submit": 0.0, "finish_time": f"{finish:.6f}", "submission_time": "0.000000",
             "requested_number_of_resources": "1", "requested_time": "707732.000000",
             "execution_time": f"{finish - 1280.000001:.6f}", "waiting_time": "1280.000001",
             "turnaround_time": f"{finish:.6f}"}
        return [r]

    jobs = {"9": {"id": 9, "subtime": 0, "res": 1, "walltime": 707732, "profile": "d"}}
    profiles = {"d": {"type": "delay", "delay": 448532}}
    assert records.check_rows_against_workload(rows(449811.999998), jobs, profiles) == []
    short = records.check_rows_against_workload(rows(449811.0), jobs, profiles)
    assert [k for k, _ in short] == ["shorter than its delay"], short


def test_paper_a_hit_on_a_file_whose_last_user_ended_in_its_instant_is_no_false_hit(tmp_path):
    # The saturated day under Batsim's message timing (LEA, n091, t = 57 681), in small: job 1 (file A, loaded
    # [0, 10) on n000) ends at 20; at 20 job 2 starts there without a file, then job 3 hits A. Replayed ends
    # first, job 2's start drops A (paper) and job 3's hit was false; but job 1's end may reach the scheduler
    # after both starts (they print alike), A then still in use: accepted. A second later A is gone.
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + "\n".join([
        row("stage-w0-1-n000", 0, 10, "4 5", res=2, sub=0, workload="batloc-stage"),
        row(1, 10, 20, "0", sub=0), row(2, 20, 30, "1", sub=20), row(3, 20, 30, "0", sub=20)]) + "\n")
    rows = validate.read_jobs_csv(str(tmp_path / "out_jobs.csv"))
    decisions = [{"time": "0.000000", "job_id": "w0!1", "node": "n000", "cache": "miss", "input_file": "A",
                  "input_size": "1000.000000", "staging_job": "batloc-stage!stage-w0-1-n000"},
                 {"time": "20.000000", "job_id": "w0!2", "node": "n000", "cache": "none", "input_file": "",
                  "input_size": "", "staging_job": ""},
                 {"time": "20.000000", "job_id": "w0!3", "node": "n000", "cache": "hit", "input_file": "A",
                  "input_size": "1000.000000", "staging_job": ""}]
    assert validate.check_files_and_memory(rows, decisions, {"n000": 1e9}, "paper") == []
    late = decisions[:2] + [dict(decisions[2], time="21.000000")]
    rows[-1]["_start"] = 21.0
    assert [kind for kind, _ in validate.check_files_and_memory(rows, late, {"n000": 1e9}, "paper")] == [
        validate.FALSE_HIT]
