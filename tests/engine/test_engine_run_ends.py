"""A run ends when it ends (issue 37): what an in-process scheduler leaves running (a thread that is no daemon,
a process) ends with the run, in one line; the processes it starts get the signals unblocked; a signal while
it loads, or while the engine loads its inputs, is a signal, not a broken scheduler."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from batloc.processes import descendants
from engine_harness import ENGINE, write

pytestmark = pytest.mark.needs_engine

LEAKY = '''
import os, subprocess, threading, time
from batsim.batsim import BatsimScheduler


class Leaky(BatsimScheduler):
    def onSimulationBegins(self):
        out = self.options["out"]
        threading.Thread(target=time.sleep, args=(3600,), name="forever", daemon=False).start()
        child = subprocess.Popen(["sleep", "3600"])
        with open(out + "/child.pid", "w") as f:
            f.write(str(child.pid))
        # what a process the scheduler starts inherits: the signals it may be stopped by
        subprocess.run(["sh", "-c", "grep SigBlk /proc/self/status > " + out + "/exec.mask"])
        pid = os.fork()
        if pid == 0:
            with open("/proc/self/status") as f, open(out + "/fork.mask", "w") as g:
                g.write(next(line for line in f if line.startswith("SigBlk")))
            os._exit(0)
        os.waitpid(pid, 0)

    def onJobSubmission(self, job):
        self.bs.reject_jobs([job])
'''

SLOW_LOAD = '''
import time
from batsim.batsim import BatsimScheduler

end = time.monotonic() + 60
while time.monotonic() < end:   # a long import (numba compiling a planning pass), in Python
    pass


class Slow(BatsimScheduler):
    pass
'''

STOPPED = (1 << (signal.SIGHUP - 1)) | (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))


def workload(tmp_path):
    return write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                                      "profiles": {"d": {"type": "delay", "delay": 5}}})


def rss(pid):
    """Resident bytes of `pid` and the processes below it (the engine under its supervisor)."""
    total = 0
    for p in [pid] + descendants(pid):
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_threads_and_processes_a_scheduler_leaves_end_with_the_run(tmp_path, platform):
    sched = write(tmp_path, "leaky.py", LEAKY)
    proc = subprocess.run(ENGINE + ["-p", platform, "-w", workload(tmp_path), "-e", str(tmp_path / "o"),
                                    "--in-process", sched, "--scheduler-options", json.dumps({"out": str(tmp_path)})],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("batloc-batsim: simulation ended at t=1.000000"), proc.stderr
    assert lines[1:] == [lines[1]] and "left 1 thread(s) (forever) and 1 process(es)" in lines[1], proc.stderr
    child = int((tmp_path / "child.pid").read_text())
    assert not alive(child)
    for started in ("exec.mask", "fork.mask"):
        mask = int((tmp_path / started).read_text().split()[1], 16)
        assert mask & STOPPED == 0, (started, hex(mask))


def test_a_signal_while_the_scheduler_loads_is_a_signal(tmp_path, platform):
    sched = write(tmp_path, "slow.py", SLOW_LOAD)
    proc = subprocess.Popen(ENGINE + ["-p", platform, "-w", workload(tmp_path), "-e", str(tmp_path / "o"),
                                      "--in-process", sched], stderr=subprocess.PIPE, text=True)
    time.sleep(3)   # the engine is loading the scheduler
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert "interrupted by SIGINT before the simulation started" in err and "cannot load" not in err, err
    assert len(err.strip().splitlines()) == 1, err


CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-149999" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
"""


@pytest.mark.parametrize("mode", [[], ["--in-process", "schedFcfs"]])
def test_a_signal_while_simgrid_builds_a_large_platform_ends_the_engine_at_once(tmp_path, mode):
    # 150 000 hosts: SimGrid takes seconds to build them in one call that holds the interpreter
    plat = write(tmp_path, "p.xml", CLUSTER)
    proc = subprocess.Popen(ENGINE + ["-p", plat, "-w", workload(tmp_path), "-e", str(tmp_path / "o"),
                                      *(mode or ["-s", "tcp://127.0.0.1:9"])], stderr=subprocess.PIPE, text=True)
    loading = time.monotonic() + 60
    while rss(proc.pid) < 200 << 20 and time.monotonic() < loading:   # SimGrid is building the hosts
        time.sleep(0.05)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 3, err
    assert proc.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM), err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err
    if mode:
        assert "interrupted by SIGTERM before the simulation started" in err, err


SLOW = '''
import time
from batsim.batsim import BatsimScheduler


class Slow(BatsimScheduler):
    def onJobSubmission(self, job):
        time.sleep(0.1)   # each call takes a while: a signal comes during one, in the simulation's thread
        self.bs.reject_jobs([job])
'''


def test_a_signal_to_the_engine_while_it_calls_its_scheduler_stops_the_run_with_outputs(tmp_path, platform):
    # the simulation's thread has the signals unblocked (for what the scheduler starts): a signal it takes is
    # still the engine's, acted on at the next instant
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": i, "subtime": i, "res": 1, "profile": "d"}
                                                          for i in range(1, 200)],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})
    proc = subprocess.Popen(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "o"), "--in-process",
                                      write(tmp_path, "slow.py", SLOW)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not descendants(proc.pid) or not list(tmp_path.glob("o_journal.*.tmp")):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(1)
    os.kill(descendants(proc.pid)[0], signal.SIGTERM)   # the engine itself, not its supervisor
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted by SIGTERM at t=" in err and "outputs written to" in err, err
