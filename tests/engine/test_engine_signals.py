"""A signal or a failed re-run never loses results: every finished job keeps its row, old outputs survive."""

import csv
import os
import signal
import subprocess
import sys
import threading

import pytest

from batloc.processes import free_port
from engine_harness import ENGINE, Fifo, run, serve, write

SUFFIXES = ("_jobs.csv", "_schedule.csv", "_machine_states.csv")


def long_workload(tmp_path, n=3000):
    return write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": i, "subtime": i, "res": 1 + i % 2, "profile": "d"} for i in range(n)],
        "profiles": {"d": {"type": "delay", "delay": 3}}})


@pytest.mark.parametrize("signum, scheduler_hangs", [
    (signal.SIGTERM, False),   # the engine is simulating: it stops at its next instant
    (signal.SIGINT, False),    # Ctrl-C: the same, never a KeyboardInterrupt inside SimGrid
    (signal.SIGINT, True),     # the engine waits for a scheduler that thinks: it stops at its next poll
    (signal.SIGHUP, True),
])
def test_signal_mid_run_writes_every_job_with_a_final_state(tmp_path, platform, signum, scheduler_hangs):
    wl = long_workload(tmp_path)
    fifo, completed, hang = Fifo(), [], threading.Event()
    holder = {}

    def sched(msg):
        completed.extend(e["data"]["job_id"] for e in msg["events"] if e["type"] == "JOB_COMPLETED")
        if len(completed) >= 50 and "sent" not in holder:
            holder["sent"] = True
            holder["proc"].send_signal(signum)
            if scheduler_hangs:
                hang.wait(30)      # never answers in time: the engine must give up on its own
        return fifo(msg)

    thread, port = serve(sched, "tcp://127.0.0.1", timeout=30)
    prefix = str(tmp_path / "out")
    holder["proc"] = proc = subprocess.Popen(
        ENGINE + ["-p", platform, "-w", wl, "-e", prefix, "-s", f"tcp://127.0.0.1:{port}"],
        stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        hang.set()
        thread.join(5)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"batloc-batsim: interrupted by {name} at t=" in err and f"outputs written to {prefix}_*.csv" in err
    with open(prefix + "_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["job_id"]) for r in rows) == list(range(3000))   # every job, once
    done = {r["job_id"]: r for r in rows if r["final_state"] == "COMPLETED_SUCCESSFULLY"}
    assert {f"w0!{j}" for j in done} >= set(completed) and len(completed) >= 50
    assert all(r["execution_time"] == "3.000000" for r in done.values())
    left = [r for r in rows if r["job_id"] not in done]
    assert left and {r["final_state"] for r in left} <= {"SUBMITTED", "RUNNING", "NOT_SUBMITTED"}
    assert f"{len(left)} job(s) unfinished" in err
    for suffix in SUFFIXES[1:]:
        assert os.path.getsize(prefix + suffix) > 0
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


@pytest.mark.parametrize("how", ["no scheduler", "SIGTERM while waiting for it"])
def test_a_rerun_that_cannot_reach_its_scheduler_keeps_the_earlier_outputs(tmp_path, platform, how):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})
    first = run(tmp_path, platform, [wl], Fifo())
    assert first.returncode == 0, first.stderr
    before = {s: first.file(s) for s in SUFFIXES}
    cmd = ENGINE + ["-p", platform, "-w", wl, "-e", first.prefix, "-s", f"tcp://127.0.0.1:{free_port()}"]
    if how == "no scheduler":
        proc = subprocess.run(cmd + ["--ready-timeout", "1"], capture_output=True, text=True, timeout=60)
        err, expected = proc.stderr, 1
        assert "no scheduler answered" in err
    else:
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        threading.Timer(1.5, proc.send_signal, (signal.SIGTERM,)).start()
        _, err = proc.communicate(timeout=60)
        expected = 128 + signal.SIGTERM
        assert "interrupted by SIGTERM at t=0.000000" in err
    assert proc.returncode == expected, err
    assert "nothing simulated, no output written" in err and "Traceback" not in err
    assert {s: first.file(s) for s in SUFFIXES} == before
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_a_hung_scheduler_ends_the_run_at_the_reply_timeout_with_outputs_written(tmp_path, platform):
    from batloc.engine.cli import parse_args

    assert parse_args(["-p", "p", "-w", "w"]).reply_timeout == 600.0     # a default limit, not none
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": i, "subtime": i, "res": 1, "profile": "d"} for i in (1, 2, 3)],
        "profiles": {"d": {"type": "delay", "delay": 1.5}}})
    fifo, hang = Fifo(), threading.Event()

    def sched(msg):
        if msg["now"] >= 3:
            hang.wait(30)      # thinks forever from t=3 on
        return fifo(msg)

    try:
        res = run(tmp_path, platform, [wl], sched, args=["--reply-timeout", "1"])
    finally:
        hang.set()
    assert res.returncode == 1, res.stderr
    assert "the scheduler did not answer within 1 s at simulated time 3.000000 (see --reply-timeout)" in res.stderr
    assert "outputs written to" in res.stderr and "Traceback" not in res.stderr
    assert [(r["job_id"], r["final_state"]) for r in res.jobs_rows()] == [
        ("1", "COMPLETED_SUCCESSFULLY"), ("2", "RUNNING"), ("3", "SUBMITTED")]


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_timeouts_must_be_finite_seconds(tmp_path, platform, value):
    proc = subprocess.run(ENGINE + ["-p", platform, "-w", "w.json", "--reply-timeout", value],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "a timeout is a finite number of seconds >= 0 (0: no limit)" in proc.stderr


HERALDED = '''
import os, signal, sys, time
from batloc.engine import signals
signals.HERALD = sys.argv[1] == "herald"
signals.StopOnSignal()   # the engine's setting: the signals blocked but around the long call
with signals.ending_at_once("SimGrid was building the platform"):
    if sys.argv[2] == "signal":
        os.kill(os.getpid(), signal.SIGTERM)   # as inside SimGrid's call: no Python runs until it returns
        time.sleep(30)
print("returned")
'''


@pytest.mark.parametrize("herald, signalled, status, err", [
    ("herald", "signal", -signal.SIGTERM, "batloc-batsim: interrupted by SIGTERM before the simulation started "
                                          "(SimGrid was building the platform); no output written"),
    ("herald", "none", 0, ""),            # a call that returns: the herald ends in silence
    ("supervised", "signal", -signal.SIGTERM, ""),   # in process the supervisor tells it
])
def test_a_signal_inside_a_long_loading_call_ends_the_engine_at_once_with_its_line(tmp_path, herald, signalled,
                                                                                 status, err):
    # over ZeroMQ it ended with status 143 and not a word (the probe)
    proc = subprocess.run([sys.executable, write(tmp_path, "h.py", HERALDED), herald, signalled],
                          capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stderr.strip()) == (status, err)
    assert proc.stdout == ("" if status else "returned\n")


MID_PARSE = '''
import os, signal, sys
from batloc.engine import cli, workload
hook = workload._unique_keys
def first_object(pairs):   # a signal in the middle of the parse, which holds the interpreter but for the hook
    if not sent or sys.argv[1] == "again":   # again: a signal at each object, as an impatient user's Ctrl-C
        sent.append(os.kill(os.getpid(), signal.SIGTERM))
    return hook(pairs)
sent = []
workload._unique_keys = first_object
sys.exit(cli.main(sys.argv[2:]))
'''


@pytest.mark.parametrize("times", ["once", "again"])
def test_a_signal_while_the_workload_is_parsed_ends_the_engine_with_its_line(tmp_path, platform, times):
    # the parse ran with the default action: status 143, not a word; a second signal while the first unwound
    # printed a traceback (the probe)
    proc = subprocess.run([sys.executable, write(tmp_path, "m.py", MID_PARSE), times, "-p", platform, "-w",
                           long_workload(tmp_path, 10), "-e", str(tmp_path / "o"), "-s", "tcp://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == (128 + signal.SIGTERM, "batloc-batsim: interrupted by SIGTERM "
                                                      "before the simulation started; no output written")
