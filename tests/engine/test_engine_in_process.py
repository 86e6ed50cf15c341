"""`batloc-batsim --in-process`: the scheduler inside the engine's process gives the outputs of a ZeroMQ run, byte
for byte, for a planning scheduler and for pybatsim's stock ones; a scheduler that stops or fails ends the run in
one line, the outputs written."""

import json
import subprocess
from pathlib import Path

import pytest

import policy_run
from engine_harness import ENGINE, platform_xml, run_pybatsim, write
from test_engine_pybatsim import sample_workload

pytestmark = pytest.mark.needs_engine

TWO_NODES = Path(__file__).resolve().parents[1] / "data" / "schedulers" / "two_nodes.xml"
OUTPUTS = ("jobs", "schedule", "machine_states")
PLANNING_OUTPUTS = OUTPUTS + ("decisions", "predictions")


def in_process(tmp_path, scheduler, platform, workload, prefix, options=None, check=True, dynamic=True):
    """As robin runs batloc's schedulers (`dynamic`: with --enable-dynamic-jobs) or pybatsim's stock ones."""
    proc = subprocess.run(ENGINE + ["-p", str(platform), "-w", str(workload), "-e", prefix, "-q",
                                    *(["--enable-dynamic-jobs"] if dynamic else []), "--in-process", scheduler,
                                    "--scheduler-options", json.dumps(options or {})],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def same_outputs(a, b, names):
    for name in names:
        assert Path(f"{a}_{name}.csv").read_bytes() == Path(f"{b}_{name}.csv").read_bytes(), name


def files_workload(n=60):
    """Jobs sharing six files on two 2-core nodes: loads, hits, evictions, and a job past its walltime."""
    jobs = []
    for i in range(n):
        delay = 5 + (i * 7) % 40
        jobs.append({"id": i, "subtime": 2 * i, "res": 1 + i % 2, "walltime": delay + 20, "profile": f"d{delay}",
                     "user": f"u{i % 3}", "input_file": f"f{(i * 5) % 6}", "input_size": (1 + i % 4) * 1e10,
                     "evaluated": True})
    jobs[7]["walltime"] = 3          # ends at its walltime (or at its window's end, still loading)
    return {"nb_res": 4, "jobs": jobs,
            "profiles": {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}}


@pytest.mark.parametrize("policy,options", [("lea", {"predictions": True}), ("eft_bf", {"cache": "lru"})])
def test_planning_scheduler_in_process_matches_zeromq(tmp_path, policy, options):
    wl = write(tmp_path, "w.json", files_workload())
    zmq_run = policy_run.simulate(tmp_path, policy, TWO_NODES, wl, options, name="zmq")
    prefix = str(tmp_path / "local")
    in_process(tmp_path, str(policy_run.REPO / "schedulers" / f"{policy}.py"), TWO_NODES, wl, prefix,
               {"export_prefix": prefix, **options})
    rows = zmq_run.rows
    assert len(rows) > 60 and any(k.startswith("stage-") for k in rows)   # stagings went through both links
    assert any(r["final_state"] == "COMPLETED_KILLED" or r["final_state"] == "COMPLETED_WALLTIME_REACHED"
               for r in rows.values())
    same_outputs(zmq_run.prefix, prefix, PLANNING_OUTPUTS)


@pytest.mark.parametrize("scheduler", ["schedFcfs", "easyBackfill"])
def test_stock_scheduler_in_process_matches_zeromq(tmp_path, scheduler):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    proc, _ = run_pybatsim(tmp_path, platform, wl, scheduler, tmp_path / "zmq")
    assert proc.returncode == 0, proc.stderr
    prefix = str(tmp_path / "local")
    in_process(tmp_path, scheduler, platform, wl, prefix, dynamic=False)
    same_outputs(tmp_path / "zmq", prefix, OUTPUTS)


CRASHES = """
from batsim.batsim import BatsimScheduler

class Crashes(BatsimScheduler):
    def onJobSubmission(self, job):
        if job.id.endswith("!3"):
            raise ValueError("no room for job 3")
        self.bs.reject_jobs([job])
"""


def test_a_scheduler_that_fails_ends_the_run_in_one_line_outputs_written(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    scheduler = write(tmp_path, "crashes.py", CRASHES)
    prefix = str(tmp_path / "out")
    proc = in_process(tmp_path, scheduler, platform, wl, prefix, check=False, dynamic=False)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("batloc-batsim: error: the in-process scheduler ") and "failed at simulated time 9.000000: " \
        "ValueError" in last and "outputs written" in last, proc.stderr
    assert "ValueError: no room for job 3" in proc.stderr   # its traceback, as its own process would print it
    states = {r["job_id"]: r["final_state"] for r in policy_run.read_rows(f"{prefix}_jobs.csv")[1]}
    assert states["0"] == states["2"] == "REJECTED" and states["3"] == "SUBMITTED"


def test_scheduler_options_refused_before_anything_runs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    prefix = str(tmp_path / "out")
    proc = in_process(tmp_path, str(policy_run.REPO / "schedulers" / "lea.py"), platform, wl, prefix,
                      {"cache": "nope"}, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("batloc scheduler: ") and "cache" in lines[0], proc.stderr
    assert lines[1].startswith("batloc-batsim: error: the in-process scheduler ") and "did not start" in lines[1]
    assert not Path(f"{prefix}_jobs.csv").exists()
    proc = in_process(tmp_path, "schedulers/nothing_here.py", platform, wl, prefix, check=False)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        "batloc-batsim: error: --in-process: no scheduler file schedulers/nothing_here.py"]


SCRIPT = """
import sys
from batloc.engine.cli import main

print("before", flush=True)
status = main(sys.argv[1:])
print("after", status, flush=True)
"""


@pytest.mark.parametrize("scheduler,status", [("schedFcfs", 0), ("crashes.py", 1)])
def test_a_script_calling_the_engine_runs_its_own_body_once(tmp_path, scheduler, status):
    """The in-process engine is a fork of its caller: it ends there, and only the caller goes on (it used to
    return into the script too, whose rest then ran twice), whether the run succeeds or fails."""
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    write(tmp_path, "crashes.py", CRASHES)
    script = write(tmp_path, "script.py", SCRIPT)
    proc = subprocess.run([policy_run.sys.executable, script, "-p", platform, "-w", wl, "-e", "out", "-q",
                           "--in-process", scheduler], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["before", f"after {status}"], proc.stderr
    assert (tmp_path / "out_jobs.csv").exists()


def test_robin_names_run_in_process_with_the_decision_log_beside_jobs_csv(tmp_path):
    """`--in-process lea-bf` is schedulers/lea.py with backfilling, as robin and `batloc scheduler` name it; a
    batloc policy given no export_prefix writes its logs with the engine's -e, so the run analyses as robin's."""
    wl = write(tmp_path, "w.json", files_workload(30))
    named = str(tmp_path / "named")
    in_process(tmp_path, "lea-bf", TWO_NODES, wl, named)
    by_file = str(tmp_path / "file")
    in_process(tmp_path, str(policy_run.REPO / "schedulers" / "lea.py"), TWO_NODES, wl, by_file,
               {"backfilling": True, "export_prefix": by_file})
    same_outputs(named, by_file, PLANNING_OUTPUTS)


def test_only_batloc_policies_are_given_the_export_prefix(tmp_path):
    from batloc.schedulers.loading import batloc_policy

    assert batloc_policy("lea") and batloc_policy("lea-bf") and batloc_policy("fcfs_bf")
    assert batloc_policy(str(policy_run.REPO / "schedulers" / "lea.py"))
    assert not batloc_policy("schedFcfs") and not batloc_policy("easyBackfill")
    assert not batloc_policy("base") and not batloc_policy(str(policy_run.REPO / "schedulers" / "base.py"))
    assert not batloc_policy(write(tmp_path, "lea.py", CRASHES))   # a file of one's own, named like a policy
