"""Bad inputs and misbehaving schedulers: a clear message and a non-zero exit, never a hang."""

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from batloc.processes import free_port
from engine_harness import ENGINE, run, write


def good_workload(tmp_path, name="w.json"):
    return write(tmp_path, name, {"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "profile": "d", "walltime": 10}],
        "profiles": {"d": {"type": "delay", "delay": 100}}})


def engine(*args, timeout=30):
    return subprocess.run(ENGINE + list(args), capture_output=True, text=True, timeout=timeout)


def assert_clean_error(proc, *fragments):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_missing_workload_file(tmp_path, platform):
    assert_clean_error(engine("-p", platform, "-w", str(tmp_path / "nope.json"), "-e", str(tmp_path / "o")),
                       "workload file not found", "nope.json")


def test_malformed_json_names_file_line_and_column(tmp_path, platform):
    wl = write(tmp_path, "bad.json", '{"jobs": [\n  {"id": 1,, "subtime": 0}\n]}')
    assert_clean_error(engine("-p", platform, "-w", wl, "-e", str(tmp_path / "o")), "bad.json:2:12", "malformed JSON")


@pytest.mark.parametrize("jobs, profiles, fragments", [
    ([{"id": 7, "subtime": 0, "res": 1, "profile": "nope"}], {}, ["job '7'", "profile 'nope' is not defined"]),
    ([], {"p": {"type": "quantum"}}, ["profile 'p'", "unknown profile type 'quantum'"]),
    ([{"id": 4, "subtime": -2, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}},
     ["job '4'", "subtime must be >= 0"]),
])
def test_workload_errors_name_the_job_or_profile(tmp_path, platform, jobs, profiles, fragments):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": profiles})
    assert_clean_error(engine("-p", platform, "-w", wl, "-e", str(tmp_path / "o")), "w.json", *fragments)


def test_a_platform_without_simgrid_s_doctype_is_refused_before_simgrid_reads_it(tmp_path, platform):
    # SimGrid stops on it with "Unexpected character `<' in prolog", which hides why (issue 37's probe)
    text = open(platform).read().replace('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">', "")
    bare = write(tmp_path, "bare.xml", text)
    proc = engine("-p", bare, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"))
    assert_clean_error(proc, "bare.xml: no line <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">")
    assert "prolog" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("text, message", [
    # Batsim 4.2.1 refuses a profile defined twice; Python kept the last one and ran it (the probe)
    ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], "profiles": '
     '{"d": {"type": "delay", "delay": 10}, "d": {"type": "delay", "delay": 99}}}',
     "w.json: key 'd' given twice in one object (a profile defined twice: Batsim 4.2.1 refuses the file"),
    # rapidjson reads the first of a key given twice, Python the last: the run would differ from Batsim's
    ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "res": 3, "profile": "d"}], "profiles": '
     '{"d": {"type": "delay", "delay": 10}}}', "w.json: job 1: field 'res' given twice"),
])
def test_a_key_given_twice_in_a_workload_is_refused(tmp_path, platform, text, message):
    wl = write(tmp_path, "w.json", text)
    assert_clean_error(engine("-p", platform, "-w", wl, "-e", str(tmp_path / "o")), message)


def test_a_job_larger_than_the_platform_is_loaded_with_one_warning_and_can_be_rejected(tmp_path, platform):
    # Batsim 4.2.1 loads it, and pybatsim's stock schedulers reject it: so does the engine, with one warning
    from engine_harness import run

    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 3, "subtime": 1, "res": 5, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 1}}})

    def reject(msg):
        return [{"type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    res = run(tmp_path, platform, [wl], reject)
    assert res.returncode == 0, res.stderr
    assert "job '3': asks for 5 resources but the platform has only 4 compute resources" in res.stderr
    assert res.jobs()["3"]["final_state"] == "REJECTED"


def test_platform_xml_error_names_file_and_line(tmp_path):
    bad = write(tmp_path, "bad.xml", "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id='z'>\n</platform>\n")
    assert_clean_error(engine("-p", bad, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o")),
                       "bad.xml:4", "platform XML error")


def test_a_platform_that_is_a_folder(tmp_path):
    assert_clean_error(engine("-p", str(tmp_path), "-w", good_workload(tmp_path)),
                       f"{tmp_path} (platform) is a directory, not a regular file: not read")


def test_missing_platform_file(tmp_path):
    assert_clean_error(engine("-p", str(tmp_path / "none.xml"), "-w", good_workload(tmp_path)),
                       "platform file not found")


def test_scheduler_that_never_connects_hits_the_ready_timeout(tmp_path, platform):
    started = time.monotonic()
    proc = engine("-p", platform, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"),
                  "-s", f"tcp://127.0.0.1:{free_port()}", "--ready-timeout", "1")
    assert_clean_error(proc, "no scheduler answered", "within 1 s")
    assert time.monotonic() - started < 20


def test_a_scheduler_slow_to_start_gets_the_reply_timeout_not_the_ready_timeout(tmp_path, platform):
    """A ZeroMQ scheduler that takes longer than --ready-timeout over its first
    answer (compiling its planning core, say) is waited for up to --reply-timeout."""
    import zmq
    port = free_port()
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.bind(f"tcp://127.0.0.1:{port}")
    try:
        proc = engine("-p", platform, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"),
                      "-s", f"tcp://127.0.0.1:{port}", "--ready-timeout", "1", "--reply-timeout", "3")
    finally:
        rep.close(0)
        ctx.term()
    assert_clean_error(proc, "sent no Batsim answer within 3 s")


def test_port_held_by_a_program_that_is_not_a_scheduler(tmp_path, platform):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    port = server.getsockname()[1]
    stop = threading.Event()

    def babble():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=babble, daemon=True)
    t.start()
    try:
        proc = engine("-p", platform, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"),
                      "-s", f"tcp://127.0.0.1:{port}", "--ready-timeout", "3")
    finally:
        stop.set()
        t.join()
        server.close()
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "does not speak ZeroMQ" in proc.stderr or "something accepted the connection" in proc.stderr


CRASHING_SCHEDULER = """
import json, os, sys, zmq
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[1])
msg = json.loads(sock.recv())
sock.send(json.dumps({"now": msg["now"], "events": []}).encode())
msg = sock.recv()  # the first submission: die without answering
os._exit(3)
"""


def against(script, tmp_path, platform, timeout=30):
    """The engine against a scheduler written as a Python `script` (it binds the endpoint in its argv)."""
    port = free_port()
    sched = subprocess.Popen([sys.executable, "-c", script, f"tcp://127.0.0.1:{port}"])
    try:
        return engine("-p", platform, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"),
                      "-s", f"tcp://127.0.0.1:{port}", timeout=timeout)
    finally:
        sched.wait(10)


def test_scheduler_that_dies_mid_run(tmp_path, platform):
    proc = against(CRASHING_SCHEDULER, tmp_path, platform)
    assert_clean_error(proc, "scheduler disconnected", "1.000000")
    # the job it never ran is still in jobs.csv
    with open(tmp_path / "o_jobs.csv") as f:
        rows = f.read().splitlines()
    assert len(rows) == 2 and ",SUBMITTED," in rows[1]


@pytest.mark.parametrize("event, fragments", [
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "99"}}, ["w0!1", "resource 99 does not exist"]),
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!42", "alloc": "1"}}, ["job 'w0!42'", "unknown"]),
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "1-2"}}, ["w0!1", "has 2 resources",
                                                                           "requests 1"]),
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "1-x"}}, ["EXECUTE_JOB of 'w0!1'",
                                                                           "cannot read allocation '1-x'"]),
    ({"type": "TELEPORT_JOB", "data": {}}, ["unknown event type 'TELEPORT_JOB'"]),
])
def test_bad_decisions_are_reported_with_job_and_resource(tmp_path, platform, event, fragments):
    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [dict(event)]
        return []

    res = run(tmp_path, platform, [good_workload(tmp_path)], sched)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    for fragment in fragments:
        assert fragment in res.stderr, res.stderr


def test_two_jobs_on_one_core_is_refused(tmp_path, platform):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "profile": "d"}, {"id": 2, "subtime": 2, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 100}}})

    def sched(msg):
        return [{"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": "1"}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 1
    assert "resource 1 (n000_c01) is already used by job 'w0!1'" in res.stderr


def test_deadlock_is_reported_and_waiting_jobs_are_still_written(tmp_path, platform):
    res = run(tmp_path, platform, [good_workload(tmp_path)], lambda msg: [])
    assert res.returncode == 1 and "deadlock" in res.stderr and "w0!1" in res.stderr
    rows = res.jobs_rows()
    assert [(r["job_id"], r["final_state"]) for r in rows] == [("1", "SUBMITTED")]


def test_a_compute_job_on_a_storage_resource_runs_with_one_warning(tmp_path, platform):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": i, "subtime": 1, "res": 1, "profile": "d"} for i in (1, 2)],
        "profiles": {"d": {"type": "delay", "delay": 5}}})

    def sched(msg):
        return [{"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": str(4 + i)}}
                for i, e in enumerate(e for e in msg["events"] if e["type"] == "JOB_SUBMITTED")]

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("runs on storage resource") == 1 and "lustre" in res.stderr
    assert res.jobs()["1"]["allocated_resources"] == "4"  # lustre: computes 0-3, then storages


DIES_ON_FIRST_MESSAGE = """
import os, sys, zmq
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[1])
sock.recv()  # SIMULATION_BEGINS: die without answering
os._exit(3)
"""


def test_a_scheduler_that_dies_on_its_first_message_is_seen_at_once(tmp_path, platform):
    # It used to stall the engine for the whole reply timeout (600 s), then be blamed on "another program
    # on that port", with no output written: the subprocess timeout below would expire first.
    proc = against(DIES_ON_FIRST_MESSAGE, tmp_path, platform, timeout=120)
    assert_clean_error(proc, "the scheduler disconnected", "at simulated time 0.000000", "died or crashed",
                       "outputs written to", "1 job(s) unfinished")
    assert len(proc.stderr.strip().splitlines()) == 1
    with open(tmp_path / "o_jobs.csv") as f:
        rows = f.read().splitlines()
    assert len(rows) == 2 and ",NOT_SUBMITTED," in rows[1]


# The engine with its output files on a full disk: `open_for_writing` gives files that take `budget`
# characters, then fail as a full disk does (a tiny tmpfs needs root; /dev/full has no rename).
FULL_DISK = """
import errno, sys
import batloc.engine.export as export
from batloc.engine.cli import main
real, budget = export.open_for_writing, {"left": int(sys.argv[1])}

class Full:
    def __init__(self, f):
        self.f = f
    def write(self, text):
        budget["left"] -= len(text)
        if budget["left"] < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.f.write(text)
    def close(self):
        self.f.close()
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.close()

export.open_for_writing = lambda path, buffering=-1: Full(real(path, buffering))
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("budget", [300, 900])   # in jobs.csv's second row; in the last file written
def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(tmp_path, platform, budget):
    from engine_harness import Fifo, serve

    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": i, "subtime": i, "res": 1, "profile": "d"} for i in (1, 2, 3)],
        "profiles": {"d": {"type": "delay", "delay": 5}}})
    (tmp_path / "o_jobs.csv").write_text("an earlier run's\n")
    thread, port = serve(Fifo(), "tcp://127.0.0.1")
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, str(budget), "-p", platform, "-w", wl,
                           "-e", str(tmp_path / "o"), "-s", f"tcp://127.0.0.1:{port}", "-q"],
                          capture_output=True, text=True, timeout=60)
    thread.join(5)
    assert_clean_error(proc, f"cannot write outputs with prefix '{tmp_path / 'o'}': No space left on device; "
                             f"no output written (earlier {tmp_path / 'o'}_*.csv, if any, kept)")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["o_jobs.csv", "p.xml", "w.json"]
    assert (tmp_path / "o_jobs.csv").read_text() == "an earlier run's\n"


def test_in_process_options_that_are_no_json_object_are_one_line(tmp_path, platform):
    # a list reached the scheduler, which failed with "fcfs raised TypeError while loading" (the probe)
    proc = engine("-p", platform, "-w", good_workload(tmp_path), "-e", str(tmp_path / "o"), "--in-process",
                  "schedFcfs", "--scheduler-options", "[1, 2]")
    assert_clean_error(proc, "--scheduler-options is a JSON list, not an object: '[1, 2]'")
