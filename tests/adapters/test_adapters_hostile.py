"""The staging proxy between the embedded engine and hostile wrapped schedulers: one line, no lingering."""

import os
import signal
import subprocess
import sys
import time

import engine_harness
from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

PROXY = [sys.executable, "-m", "batloc.adapters.cli"]
GB = 1e9

HANGS = """
import json, sys, time, zmq
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[sys.argv.index("-s") + 1])
msg = json.loads(sock.recv())
sock.send(json.dumps({"now": msg["now"], "events": []}).encode())
sock.recv()
open(sys.argv[1], "w").write("thinking")
time.sleep(3600)
"""


def one_job(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d5", "input_file": "A", "input_size": GB}],
        "profiles": {"d5": {"type": "delay", "delay": 5}}})
    return platform, wl


def test_the_proxy_exits_at_once_when_its_engine_goes_away_while_the_scheduler_hangs(tmp_path):
    platform, wl = one_job(tmp_path)
    script, marker = write(tmp_path, "hang.py", HANGS), tmp_path / "thinking"
    port = free_port()
    # both sides would wait 600 s for an answer: only the engine's disappearance can end this early
    proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{port}", "--reply-timeout", "600", "--",
                                      sys.executable, script, str(marker)], stderr=subprocess.PIPE, text=True)
    engine = subprocess.Popen(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                        "--reply-timeout", "600", "-s", f"tcp://127.0.0.1:{port}",
                                        "--enable-dynamic-jobs"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if marker.exists() or proxy.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), "the wrapped scheduler never got its second message"
        engine.send_signal(signal.SIGKILL)
        engine.wait(10)
        _, err = proxy.communicate(timeout=60)   # far below the 600 s the reply timeout would take
    finally:
        for p in (engine, proxy):
            if p.poll() is None:
                p.kill()
    assert proxy.returncode == 1
    assert err.strip().splitlines()[-1] == (
        "batloc-stage-proxy: error: the engine disconnected at simulated time 1.000000 while the wrapped "
        "scheduler was deciding (did the engine crash or get stopped? see its output)"), err
    assert "Traceback" not in err


def test_a_double_execution_by_the_wrapped_scheduler_is_refused_in_one_line(tmp_path):
    platform, wl = one_job(tmp_path)
    p_engine, p_sched = free_port(), free_port()

    def twice(msg):   # executes job 1 on both cores, in two events of one answer
        return [{"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": str(core)}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED" for core in (0, 1)]

    thread = engine_harness.serve(twice, f"tcp://127.0.0.1:{p_sched}")[0]
    proxy = subprocess.Popen(PROXY + ["-q", "--bind", f"tcp://127.0.0.1:{p_engine}", "--connect",
                                      f"tcp://127.0.0.1:{p_sched}", "--export-prefix", str(tmp_path / "out")],
                             stderr=subprocess.PIPE, text=True)
    engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                      "-s", f"tcp://127.0.0.1:{p_engine}", "--enable-dynamic-jobs"],
                            capture_output=True, text=True, timeout=60)
    _, err = proxy.communicate(timeout=30)
    thread.join(5)
    assert proxy.returncode == 1
    assert err.strip() == ("batloc-stage-proxy: error: the wrapped scheduler executed job w0!1 twice "
                           "(at t=1.000000 and again at t=1.000000); refused"), err
    assert engine.returncode != 0 and "executed job w0!1 twice" in engine.stderr
    assert "Traceback" not in engine.stderr
    assert os.path.exists(tmp_path / "out_jobs.csv")   # the engine wrote what it had


def test_a_decision_log_that_cannot_be_written_is_one_line_before_anything_runs(tmp_path):
    (tmp_path / "afile").write_text("")
    for args, error in (
            (["--decisions", str(tmp_path / "afile" / "d.csv")], f"{tmp_path / 'afile'} is a file, not a folder"),
            (["--export-prefix", str(tmp_path / "afile" / "out")], f"{tmp_path / 'afile'} is a file, not a folder"),
            (["--decisions", str(tmp_path)], "Is a directory")):
        res = subprocess.run(PROXY + ["--bind", f"tcp://127.0.0.1:{free_port()}", *args], capture_output=True,
                             text=True, timeout=30)
        assert res.returncode == 1 and res.stderr.startswith("batloc-stage-proxy: error: cannot write the decision "
                                                             "log ") and error in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_a_daemon_the_wrapped_scheduler_leaves_outside_its_group_ends_with_the_proxy():
    # setsid took it out of the scheduler's process group: it outlived the proxy (the probe)
    marker = f"{700 + time.monotonic() % 1:.9f}"
    # Popen returns once the child has left the group and become `sleep` (it waits for the exec): a shell's
    # `setsid sleep &; exit 3` could exit first on a loaded machine, the daemon still in the group
    daemon = (f"import subprocess, sys; d = subprocess.DEVNULL; subprocess.Popen(['sleep', '{marker}'], "
              f"start_new_session=True, stdin=d, stdout=d, stderr=d); sys.exit(3)")
    proc = subprocess.run(PROXY + ["--bind", "tcp://127.0.0.1:0", "--ready-timeout", "5", "--", sys.executable, "-c",
                                   daemon],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (f"batloc-stage-proxy: ended 1 process(es) the wrapped scheduler left outside its process group: "
            f"sleep {marker}") in proc.stderr
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == f"sleep {marker}"]
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    assert left == []


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
