"""A run killed with -9 keeps its rows: the engine's journal, replayed by `batloc-batsim --recover PREFIX` (or by
the next run with that prefix), gives exactly the files the engine writes when stopped at the same point by
SIGTERM — every job that had ended with the row it has in the run left to finish (and those rows are that run's
first ones: nothing in between is lost), every other job with its last state — in process and over ZeroMQ, with
stagings, registered jobs and metadata. Before: a killed run left a temporary jobs.csv and nothing else.

Each run hangs its scheduler at one job's submission (a file `hang-at` names it), so that SIGTERM and SIGKILL
meet the engine at the same point."""

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from batloc.outputs import read_rows
from engine_harness import ENGINE, Fifo, platform_xml, serve, write
from test_engine_batsim_time import FLAT
from test_engine_in_process import TWO_NODES, files_workload

pytestmark = pytest.mark.needs_engine

FILES = ("jobs", "schedule", "machine_states")
FINAL = ("SUBMITTED", "RUNNING", "NOT_SUBMITTED")

FCFS_HANG = """
import os, time
from batloc.schedulers.fcfs import Fcfs


class Fcfs_hang(Fcfs):
    def onJobSubmission(self, job):
        if os.path.exists("hang-at") and job.id == "w0!" + open("hang-at").read().strip():
            open("reached", "w").close()
            time.sleep(3600)
        if os.path.exists("raise-at") and job.id == "w0!" + open("raise-at").read().strip():
            raise RuntimeError("stop here")
        super().onJobSubmission(job)
"""


def engine_pid(prefix):
    """The pid of the engine whose journal is left beside `prefix`."""
    for _ in range(100):   # in process, the engine dies with its supervisor, a moment after it
        found = list(Path(prefix).parent.glob(Path(prefix).name + "_journal.*.tmp"))
        if found and not any(Path(f"/proc/{f.name.split('.')[1]}").exists() for f in found):
            return int(found[0].name.split(".")[1])
        time.sleep(0.05)
    raise AssertionError(f"no dead run's journal beside {prefix}")


def wait_for(path, timeout=120):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def outputs(prefix):
    return {name: Path(f"{prefix}_{name}.csv").read_bytes() for name in FILES}


def ended_rows(prefix):
    return [r for r in read_rows(f"{prefix}_jobs.csv")[1] if r["final_state"] not in FINAL]


def check_against_full_run(recovered, full):
    """Every ended row is the full run's row for that job, and they are the full run's first rows."""
    ended = ended_rows(recovered)
    rows = read_rows(f"{full}_jobs.csv")[1]
    assert 0 < len(ended) < len(rows)
    assert ended == rows[:len(ended)]
    lines = Path(f"{recovered}_jobs.csv").read_text().splitlines()
    assert lines[:len(ended) + 1] == Path(f"{full}_jobs.csv").read_text().splitlines()[:len(ended) + 1]


class InProcess:
    """FCFS in the engine's process, stagings and all, on the two-node platform. The engine's own stop at the
    point is its scheduler raising there (its supervisor would end a hung call with the journal: no test)."""

    hang = 17   # submitted at t = 34: jobs run, wait and are yet to come
    stop_code = 1

    def __init__(self, tmp_path):
        self.folder = tmp_path
        self.workload = write(tmp_path, "w.json", files_workload())
        self.scheduler = write(tmp_path, "fcfs_hang.py", FCFS_HANG)

    def start(self, prefix, hang_at=None, extra=(), raise_at=None):
        for name, at in (("hang-at", hang_at), ("raise-at", raise_at)):
            marker = self.folder / name
            if at is None:
                marker.unlink(missing_ok=True)
            else:
                marker.write_text(str(at))
        (self.folder / "reached").unlink(missing_ok=True)
        return subprocess.Popen(
            ENGINE + ["-p", str(TWO_NODES), "-w", self.workload, "-e", prefix, "-q", "--enable-dynamic-jobs",
                      "--in-process", self.scheduler, "--scheduler-options", json.dumps({"export_prefix": prefix}),
                      *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.folder)

    def hung(self):
        wait_for(self.folder / "reached")

    def stop_there(self, prefix):
        return self.start(prefix, raise_at=self.hang)


class OverZeroMQ:
    """A scripted scheduler over ZeroMQ that registers a job and sets metadata (with a comma and a quote)."""

    hang = 24   # submitted at t = 48: the registered job runs

    def __init__(self, tmp_path):
        self.folder = tmp_path
        self.platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
        jobs = [{"id": i, "subtime": 2 * i, "res": 1 + i % 3, "walltime": 60 if i != 4 else 5,
                 "profile": f"d{i % 4}"} for i in range(30)]
        profiles = {f"d{k}": {"type": "delay", "delay": 7.5 + 4 * k} for k in range(4)}
        self.workload = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": profiles})
        self.release = threading.Event()
        self.reached = threading.Event()

    def start(self, prefix, hang_at=None):
        fifo = Fifo(dynamic=True)
        self.reached.clear()
        release = self.release

        def scheduler(msg):
            extra = []
            for e in msg["events"]:
                if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == f"w0!{hang_at}":
                    self.reached.set()
                    release.wait(120)
                if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!6":
                    extra += [{"type": "REGISTER_PROFILE", "data": {"workload_name": "dyn", "profile_name": "p",
                                                                     "profile": {"type": "delay", "delay": 3}}},
                              {"type": "REGISTER_JOB", "data": {"job_id": "dyn!a,1", "job": {"id": "dyn!a,1", "subtime": msg["now"], "res": 1, "profile": "p",
                                                                                             "walltime": 20}}},
                              {"type": "SET_JOB_METADATA", "data": {"job_id": "w0!2", "metadata": 'tag,"x"'}}]
            return extra + fifo(msg)

        _, port = serve(scheduler, "tcp://127.0.0.1", timeout=30)
        return subprocess.Popen(
            ENGINE + ["-p", self.platform, "-w", self.workload, "-e", prefix, "-q", "-s", f"tcp://127.0.0.1:{port}",
                      "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.folder)

    stop_code = 128 + signal.SIGTERM

    def hung(self):
        assert self.reached.wait(120)

    def stop_there(self, prefix):
        proc = self.start(prefix, hang_at=self.hang)
        self.hung()
        proc.send_signal(signal.SIGTERM)   # the engine waits for the answer: it writes its outputs itself
        return proc


class TimedOverZeroMQ(OverZeroMQ):
    """The same over a platform whose messages take time (the engine's timed mode, Batsim's own timing): a job's
    end reaches the server by a message, later than the job ended."""

    hang = 12

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.platform = write(tmp_path, "flat.xml", FLAT)
        jobs = [{"id": i, "subtime": 2 * i, "res": 1, "walltime": 60 if i != 4 else 5, "profile": f"d{i % 4}"}
                for i in range(30)]
        profiles = {f"d{k}": {"type": "delay", "delay": 7.5 + 4 * k} for k in range(4)}
        self.workload = write(tmp_path, "w.json", {"nb_res": 2, "jobs": jobs, "profiles": profiles})


@pytest.mark.parametrize("mode", [InProcess, OverZeroMQ, TimedOverZeroMQ])
def test_kill_9_then_recover_gives_the_files_of_a_sigterm_at_the_same_point(tmp_path, mode):
    run = mode(tmp_path)
    full = str(tmp_path / "full")
    proc = run.start(full)
    assert proc.wait(120) == 0, proc.stderr.read()

    stopped = str(tmp_path / "stopped" / "out")
    proc = run.stop_there(stopped)
    assert proc.wait(60) == run.stop_code
    stopped_files = outputs(stopped)

    killed = str(tmp_path / "killed" / "out")
    proc = run.start(killed, hang_at=run.hang)
    run.hung()
    proc.kill()
    proc.wait(60)
    if isinstance(run, OverZeroMQ):
        run.release.set()
    assert not Path(f"{killed}_jobs.csv").exists()
    engine = engine_pid(killed)                       # in process: the supervisor's child, killed with it
    left = sorted(p.name for p in Path(killed).parent.iterdir() if p.name.endswith(".tmp"))
    assert left == [f"out_jobs.csv.{engine}.tmp", f"out_journal.{engine}.tmp"], left

    res = subprocess.run(ENGINE + ["--recover", killed], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    unfinished = sum(1 for r in read_rows(f"{killed}_jobs.csv")[1] if r["final_state"] in FINAL)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"batloc-batsim: recovered the run of pid {engine}, killed after "
                                                   f"t={2 * run.hang}.0") and lines[0].endswith(
        f"from its journal: outputs written to {killed}_*.csv, {unfinished} job(s) unfinished"), lines
    assert outputs(killed) == stopped_files           # all three files, byte for byte
    assert not list(Path(killed).parent.glob("*.tmp"))
    check_against_full_run(killed, full)
    states = {r["final_state"] for r in read_rows(f"{killed}_jobs.csv")[1]}
    assert {"RUNNING", "SUBMITTED", "NOT_SUBMITTED", "COMPLETED_SUCCESSFULLY"} <= states, states
    if isinstance(run, OverZeroMQ):
        rows = {r["job_id"]: r for r in read_rows(f"{killed}_jobs.csv")[1]}
        assert rows["a,1"]["workload_name"] == "dyn" and rows["2"]["metadata"] == 'tag,"x"'
    else:
        assert any(r["workload_name"] == "batloc-stage" for r in ended_rows(killed))


def test_the_next_run_with_the_prefix_recovers_a_killed_one_and_a_live_one_is_left_alone(tmp_path):
    run = InProcess(tmp_path)
    prefix = str(tmp_path / "out" / "run")
    proc = run.start(prefix, hang_at=17)
    run.hung()
    # the engine still runs: its journal is not a dead run's
    res = subprocess.run(ENGINE + ["--recover", prefix], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "no journal of a killed run" in res.stderr
    proc.kill()
    proc.wait(60)
    engine = engine_pid(prefix)
    # the next start with that prefix recovers it first, whatever becomes of its own run
    res = subprocess.run(ENGINE + ["-p", str(TWO_NODES), "-w", str(tmp_path / "missing.json"), "-e", prefix],
                         capture_output=True, text=True, timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 2, lines
    assert lines[0].startswith(f"batloc-batsim: recovered the run of pid {engine}, killed after t=34.000000")
    assert lines[1] == f"batloc-batsim: error: workload file not found: {tmp_path / 'missing.json'}"
    assert len(ended_rows(prefix)) > 0 and not list(Path(prefix).parent.glob("*.tmp"))


def test_without_a_journal_a_killed_run_leaves_nothing_to_recover(tmp_path):
    run = InProcess(tmp_path)
    prefix = str(tmp_path / "out" / "run")
    proc = run.start(prefix, hang_at=17, extra=["--no-journal"])
    run.hung()
    proc.kill()
    proc.wait(60)
    time.sleep(0.5)   # the engine dies with its supervisor
    left = [f for f in sorted(os.listdir(tmp_path / "out")) if f.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith("run_jobs.csv."), left
    res = subprocess.run(ENGINE + ["--recover", prefix], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "no journal of a killed run" in res.stderr


def test_an_in_process_engine_killed_for_its_memory_is_recovered_by_its_supervisor(tmp_path):
    # as the OOM killer would: the engine (the scheduler in it) gets SIGKILL; the command writes every row at once
    run = InProcess(tmp_path)
    prefix = str(tmp_path / "out" / "run")
    proc = run.start(prefix, hang_at=17)
    run.hung()
    engine = int(Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()[0])
    os.kill(engine, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    unfinished = sum(1 for r in read_rows(f"{prefix}_jobs.csv")[1] if r["final_state"] in FINAL)
    assert err.strip().splitlines()[-1] == (
        f"batloc-batsim: error: the in-process scheduler {run.scheduler} died at simulated time 34.000000 (killed by "
        f"SIGKILL: out of memory?); outputs written to {prefix}_*.csv, {unfinished} job(s) unfinished")
    assert len(ended_rows(prefix)) > 0 and not list(Path(prefix).parent.glob("*.tmp"))
