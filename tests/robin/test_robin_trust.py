"""robin results users can trust: every run validated, "complete" meaning "same inputs", one robin
per folder, a scheduler's own files kept in its run, one-line refusals.

Most sweeps here run tests/data/robin/permissive_engine.py (robin's `engine:` key), an engine
that trusts its scheduler blindly and needs no SimGrid: fast, and able to write the impossible
schedule that robin's validation must catch.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.robin import description as rd
from batloc.robin.cli import _parser
from batloc.robin.lock import OutputLock
from engine_harness import platform_xml, write

DATA = Path(__file__).resolve().parents[1] / "data" / "robin"
PY = sys.executable


def inputs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "profiles": {"d5": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": i, "subtime": 1, "res": 1, "walltime": 100, "profile": "d5"} for i in (1, 2)]})
    return platform, wl


def sweep(tmp_path, schedulers=("honest",), name="sweep"):
    platform, wl = inputs(tmp_path)
    desc = {"output-dir": str(tmp_path / name), "platforms": [platform], "workloads": [wl],
            "engine": f"{PY} {DATA / 'permissive_engine.py'}",
            "schedulers": [{"name": s, "command": f"{PY} {DATA / 'core_zero.py'} {s}"} for s in schedulers],
            "ready-timeout": 30, "success-timeout": 30, "failure-timeout": 10}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def robin(*args, cwd=None):
    return subprocess.run([PY, "-m", "batloc.robin", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def run_json(tmp_path, scheduler, name="sweep"):
    return json.loads((tmp_path / name / "runs" / f"p__w__{scheduler}" / "run.json").read_text())


def test_an_impossible_run_is_reported_invalid_and_counts_as_failed(tmp_path):
    res = robin(sweep(tmp_path, ("honest", "overlap")), "--no-report", "--jobs", "2")
    assert res.returncode == 1, res.stdout + res.stderr
    honest, overlap = run_json(tmp_path, "honest"), run_json(tmp_path, "overlap")
    assert honest["status"] == "success" and honest["validation"]["valid"] and not honest["validation"]["violations"]
    assert (overlap["validation"]["valid"], overlap["validation"]["violations"]) == (False, {"core used twice": 1})
    # the verdict names the files it judged (a copy edited since is no longer the run robin checked)
    assert set(overlap["validation"]["outputs"]) == {"out_jobs.csv"}
    assert overlap["status"] == "failure" and overlap["reason"].startswith("invalid schedule: 1 violation(s): "
                                                                          "core used twice 1")
    run = tmp_path / "sweep" / "runs" / "p__w__overlap"
    assert (run / "out_jobs.csv").exists()                     # outputs kept
    assert "core 0: w0!2 starts at 1.000000 while w0!1 runs" in (run / "log" / "validate.txt").read_text()
    assert f"robin: run p__w__overlap INVALID: 1 violation(s): core used twice 1 (outputs kept; every " \
           f"violation in {run / 'log' / 'validate.txt'})" in res.stderr
    assert res.stderr.strip().splitlines()[-1] == "robin: 1 of 2 runs failed: p__w__overlap (1 invalid: p__w__overlap)"
    # an invalid run is not complete: the next invocation runs it again (and finds it invalid again)
    res = robin(sweep(tmp_path, ("honest", "overlap")), "--no-report")
    assert res.returncode == 1 and "(1 already complete, 1 to run" in res.stdout


def test_complete_means_same_contents_and_a_change_reruns_or_is_refused(tmp_path):
    desc = sweep(tmp_path)
    assert robin(desc, "--no-report").returncode == 0
    first = run_json(tmp_path, "honest")
    assert set(first["inputs"]) == {"platform", "workload", "scheduler"}
    assert list(first["inputs"]["scheduler"]) == [str(DATA / "core_zero.py")]   # the script, not python
    res = robin(desc, "--no-report")
    assert "(1 already complete, 0 to run" in res.stdout
    # the workload is edited in place: same path, new contents
    wl = tmp_path / "w.json"
    wl.write_text(wl.read_text().replace('"subtime": 1', '"subtime": 0.5'))
    res = robin(desc, "--no-report", "--refuse-changed")
    assert res.returncode == 1
    assert res.stderr.strip() == (f"robin: run p__w__honest: its inputs changed since it ran: workload {wl} "
                                  "(without --refuse-changed robin re-runs it)")
    assert run_json(tmp_path, "honest") == first                 # refused: nothing ran
    res = robin(desc, "--no-report")
    assert res.returncode == 0
    assert f"robin: p__w__honest: inputs changed since it ran (workload {wl}): running it again" in res.stdout
    assert run_json(tmp_path, "honest")["inputs"]["workload"] != first["inputs"]["workload"]


def test_an_output_folder_in_use_is_refused_in_one_line(tmp_path):
    desc = sweep(tmp_path)
    with OutputLock(tmp_path / "sweep"):
        res = robin(desc, "--no-report")
    assert res.returncode == 1
    assert res.stderr.startswith(f"robin: output folder {tmp_path / 'sweep'} is in use by another robin (pid ")
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "sweep" / "runs").exists()
    assert robin(desc, "--no-report").returncode == 0             # the lock went with its holder


def test_a_schedulers_own_files_land_in_its_run_folder(tmp_path):
    res = robin(sweep(tmp_path, ("honest", "overlap")), "--no-report", cwd=tmp_path)
    assert not (tmp_path / "out_events.csv").exists(), res.stdout + res.stderr
    for s in ("honest", "overlap"):
        assert (tmp_path / "sweep" / "runs" / f"p__w__{s}" / "out_events.csv").read_text().startswith("0")


@pytest.mark.parametrize("args, error", [
    (["--output-dir", "{file}", "--platform", "{p}", "--workload", "{w}", "--schedulers", "fcfs"],
     "robin: output-dir {file}: {file} is a file, not a folder"),
    (["--output-dir", "{file}/sub", "--platform", "{p}", "--workload", "{w}", "--schedulers", "fcfs"],
     "robin: output-dir {file}/sub: {file} is a file, not a folder"),
    (["--output-dir", "{file}", "--batcmd", "true"], "robin: output-dir {file}: {file} is a file, not a folder"),
    (["--output-dir", "{dir}", "--platform", "{p}", "--schedulers", "fcfs"],
     "robin: a sweep from the command line needs --output-dir, --platform, --workload and --schedulers, "
     "and no description file (missing: --workload)"),
    (["--output-dir", "{dir}", "--platform", "{tmp}", "--workload", "{w}", "--schedulers", "fcfs"],
     "robin: input {tmp} is a folder, not a file"),
    (["--output-dir", "{dir}", "--platform", "{p}", "--workload", "/dev/zero", "--schedulers", "fcfs"],
     "robin: input /dev/zero is not a regular file"),
    (["--output-dir", "{dir}", "--platform", "{p}", "--workload", "{w}", "--schedulers", "fcfs,../x"],
     "robin: scheduler name '../x' must be a plain file name"),
])
def test_bad_command_lines_are_one_line(tmp_path, args, error):
    platform, wl = inputs(tmp_path)
    (tmp_path / "afile").write_text("x")
    subs = {"file": tmp_path / "afile", "dir": tmp_path / "out", "tmp": tmp_path, "p": platform, "w": wl}
    res = robin(*[a.format(**subs) for a in args])
    assert res.returncode == 1
    assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith(error.format(**subs)), res.stderr


def test_every_robin_option_says_what_it_takes():
    for action in _parser()._actions:
        assert action.help, action.option_strings
    helps = {a.dest: a.help for a in _parser()._actions}
    for key in ("simulation_timeout", "ready_timeout", "success_timeout", "failure_timeout"):
        assert "seconds" in helps[key]
    assert "runs at once" in helps["jobs"]


def test_pybatsim_schedulers_log_at_warning_unless_asked(tmp_path):
    lea = rd.parse_scheduler("lea").command_line(4242, tmp_path / "out")
    assert " -v warning " in lea
    # stock ones through batloc's launcher, which makes -v hold for pybatsim's high-level API too
    launcher = f"{sys.executable} -m batloc.robin.pybatsim_launcher"
    stock = rd.parse_scheduler({"command": "pybatsim schedFcfs"}).command_line(4242, tmp_path)
    assert stock == f"{launcher} schedFcfs -v warning -s tcp://127.0.0.1:4242"
    staged = rd.parse_scheduler({"command": "pybatsim easyBackfill", "staging": True}).command_line(4242, tmp_path)
    assert staged.endswith(f"-- {launcher} easyBackfill -v warning")
    own = rd.parse_scheduler({"command": "pybatsim schedFcfs -v debug"}).command_line(4242, tmp_path, verbosity="info")
    assert own == f"{launcher} schedFcfs -v debug -s tcp://127.0.0.1:4242"
    assert " -v info " in rd.parse_scheduler("fcfs").command_line(1, tmp_path, verbosity="info")
    with pytest.raises(rd.DescriptionError, match="pybatsim-verbosity must be one of"):
        rd.pybatsim_verbosity({"pybatsim-verbosity": "loud"})


def test_a_commands_relative_files_are_made_absolute_since_it_runs_in_its_run_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("")
    line = rd.parse_scheduler({"command": "python3 mine.py --opts=mine.py -x notafile"}).command_line(7, tmp_path)
    assert line.startswith(f"python3 {tmp_path / 'mine.py'} --opts={tmp_path / 'mine.py'} -x notafile")


def test_threads_and_dask_give_the_same_tally(tmp_path):
    pytest.importorskip("distributed")
    results = {}
    for executor, extra in (("threads", ["--jobs", "2"]), ("dask", ["--dask", "local:1"])):
        res = robin(sweep(tmp_path, ("honest", "overlap"), name=executor), "--no-report", *extra)
        statuses = {s: (run_json(tmp_path, s, executor)["status"], run_json(tmp_path, s, executor)["validation"])
                    for s in ("honest", "overlap")}
        results[executor] = (res.returncode, statuses, res.stderr.strip().splitlines()[-1])
    assert results["threads"] == results["dask"]
    assert results["dask"][2] == "robin: 1 of 2 runs failed: p__w__overlap (1 invalid: p__w__overlap)"


@pytest.mark.parametrize("schedulers, error", [
    ([{"command": ""}], "robin: a scheduler command is empty"),
    ([{"command": 'pybatsim "x'}], "robin: scheduler command 'pybatsim \"x': No closing quotation"),
    ([{"policy": "lea", "options": [1]}], "robin: scheduler 'lea': options must be a mapping, not [1]"),
    ([{"policy": "../../x"}], "robin: unknown policy '../../x': no "),
    (["nosuch-bf"], "robin: unknown policy 'nosuch': no "),
    ([{"command": 5}], "robin: a scheduler command is a string, not 5"),
])
def test_bad_scheduler_entries_are_one_line(tmp_path, schedulers, error):
    platform, wl = inputs(tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"output-dir": str(tmp_path / "o"), "platforms": [platform], "workloads": [wl],
                                    "schedulers": schedulers}))
    res = robin(path)
    assert res.returncode == 1 and res.stderr.startswith(error) and len(res.stderr.strip().splitlines()) == 1, \
        res.stderr


def test_a_description_that_is_not_text_is_one_line(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00garbage")
    res = robin(tmp_path / "bin.yaml")
    assert res.returncode == 1 and res.stderr == f"robin: {tmp_path / 'bin.yaml'}: not a text file (a description " \
                                                 "is YAML in UTF-8)\n"


def test_outputs_the_validator_cannot_read_fail_the_run_not_robin(tmp_path):
    from batloc.robin.validation import validate_run
    (tmp_path / "out_jobs.csv").write_bytes(b"job_id,\x00\xff\n\x00")
    platform, wl = inputs(tmp_path)
    verdict, lines = validate_run(tmp_path / "out", wl, platform, {"name": "x", "command": "x"})
    assert verdict == {"valid": False, "violations": {"unreadable outputs": 1}}
    assert len(lines) == 1 and lines[0].startswith("unreadable outputs: ")


def test_robins_scheduler_names_reach_batloc_scheduler():
    # `batloc scheduler lea-bf` starts what robin's `lea-bf` runs: schedulers/lea.py with backfilling
    from batloc.shipped import policy_named

    path, options = policy_named("lea-bf")
    assert (path.name, options) == ("lea.py", {"backfilling": True})
    assert policy_named("fcfs_bf")[0].name == "fcfs_bf.py"
    assert policy_named("schedFcfs") is None and policy_named("base") is None
