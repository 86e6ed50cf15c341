"""robin's process handling with stand-in processes (no engine needed).

Each scheduler also starts a grandchild `sleep MARKER`; after robin returns,
no process whose command line holds MARKER may remain.
"""

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import yaml

from engine_harness import platform_xml
from batloc.robin.runs import PortAllocator

DATA = Path(__file__).resolve().parents[1] / "data" / "analysis"
PY = sys.executable


def processes_with(marker: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(pid))
    return pids


def run_robin(tmp_path, mode, **timeouts):
    port = PortAllocator().take()
    marker = f"{500 + random.random():.9f}"  # a unique `sleep` argument
    desc = {
        "output-dir": str(tmp_path / "out"),
        "batcmd": f"{PY} {DATA / 'fake_engine.py'} -s tcp://127.0.0.1:{port}",
        "schedcmd": f"{PY} {DATA / 'fake_sched.py'} {mode} {marker} -s tcp://127.0.0.1:{port}",
        "simulation-timeout": 30, "ready-timeout": 10, "success-timeout": 10, "failure-timeout": 10,
        **timeouts,
    }
    path = tmp_path / "desc.yaml"
    path.write_text(yaml.safe_dump(desc))
    t0 = time.monotonic()
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path)], capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - t0, marker


def test_success_keeps_logs_and_leaves_no_process(tmp_path):
    proc, elapsed, marker = run_robin(tmp_path, "ok")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    assert "got:" in (out / "log" / "sched.stdout").read_text()
    assert "reply:" in (out / "log" / "batsim.stdout").read_text()
    assert (out / "cmd" / "sched.bash").exists() and (out / "cmd" / "batsim.bash").exists()
    run = yaml.safe_load((out / "run.json").read_text())
    assert run["status"] == "success" and run["batsim_returncode"] == 0 and run["sched_returncode"] == 0
    assert processes_with(marker) == []  # the scheduler's grandchild was stopped with its group


def test_scheduler_that_never_connects(tmp_path):
    proc, elapsed, marker = run_robin(tmp_path, "never", **{"ready-timeout": 2})
    assert proc.returncode != 0
    assert "did not listen" in proc.stderr and "ready-timeout" in proc.stderr
    assert elapsed < 2 + 10  # ready-timeout + start-up and kill grace, far below simulation-timeout
    assert processes_with(marker) == []


def test_scheduler_that_hangs(tmp_path):
    proc, elapsed, marker = run_robin(tmp_path, "hang", **{"simulation-timeout": 3})
    assert proc.returncode != 0
    assert "simulation-timeout (3 s)" in proc.stderr
    assert 3 <= elapsed < 3 + 10
    assert processes_with(marker) == []


def test_scheduler_that_crashes(tmp_path):
    proc, elapsed, marker = run_robin(tmp_path, "crash", **{"failure-timeout": 1})
    assert proc.returncode != 0
    assert "sched returned 3" in proc.stderr and "failure-timeout (1 s)" in proc.stderr
    assert "crashing on purpose" in proc.stderr  # tail of its log is shown
    assert elapsed < 30
    assert processes_with(marker) == []


def test_port_in_use_is_reported(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        desc = {"output-dir": str(tmp_path / "out"), "batcmd": f"true -s tcp://localhost:{port}",
                "schedcmd": "true", "ready-timeout": 1}
        path = tmp_path / "desc.yaml"
        path.write_text(yaml.safe_dump(desc))
        proc = subprocess.run([PY, "-m", "batloc.robin", str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and f"port {port} still in use" in proc.stderr


def test_invalid_description(tmp_path):
    path = tmp_path / "desc.yaml"
    path.write_text("output-dir: x\nsimulation-timeout: soon\nbatcmd: true\n")
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "simulation-timeout must be a number" in proc.stderr


def test_sweep_goes_on_after_a_failed_run_and_skips_complete_ones(tmp_path):
    marker = f"{500 + random.random():.9f}"
    (tmp_path / "p.xml").write_text(platform_xml(nodes=1))   # validated after the run: a real platform
    (tmp_path / "w.json").write_text('{"jobs": []}')
    desc = {
        "output-dir": str(tmp_path / "sweep"), "platforms": [str(tmp_path / "p.xml")],
        "workloads": [str(tmp_path / "w.json")], "engine": f"{PY} {DATA / 'fake_engine.py'}",
        "schedulers": [{"name": "good", "command": f"{PY} {DATA / 'fake_sched.py'} ok {marker}"},
                       {"name": "bad", "command": f"{PY} {DATA / 'fake_sched.py'} crash {marker}"}],
        "simulation-timeout": 30, "ready-timeout": 10, "failure-timeout": 1,
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(desc))
    cmd = [PY, "-m", "batloc.robin", str(path), "--jobs", "2", "--no-report"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "run p__w__bad FAILED" in proc.stderr and "crashing on purpose" in proc.stderr
    assert "p__w__good succeeded" in proc.stdout
    good = yaml.safe_load((tmp_path / "sweep" / "runs" / "p__w__good" / "run.json").read_text())
    assert good["status"] == "success" and "fake_sched.py ok" in good["schedcmd"]
    # the engine got the embedded-engine flags, without --enable-dynamic-jobs for a command scheduler
    assert " -p " in good["batcmd"] and "--enable-dynamic-jobs" not in good["batcmd"]
    assert processes_with(marker) == []
    # 'good' succeeded, its (empty) jobs.csv is valid: it is complete, 'bad' is run again
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert "1 already complete, 1 to run" in proc.stdout
    proc = subprocess.run(cmd + ["--force"], capture_output=True, text=True, timeout=60)
    assert "1 already complete, 2 to run" in proc.stdout


def test_cpu_leases_give_parallel_runs_distinct_cpus_and_share_when_short(tmp_path):
    from batloc.processes import CpuLeases

    leases = CpuLeases(directory=str(tmp_path / "leases"))
    leases.enabled, leases.cpus = True, [0, 1]
    a, b = leases.take(), leases.take()
    assert {a, b} == {0, 1}
    c = leases.take()  # more runs than CPUs: the least used one, lowest first
    assert c == 0
    leases.give_back(b)
    assert leases.take() == b
    leases.enabled = False
    assert leases.take() is None


def test_cpu_leases_are_shared_out_between_processes(tmp_path):
    """Two robins (or two Dask workers) on one machine must not both start at the first CPU."""
    from batloc.processes import CpuLeases

    directory = str(tmp_path / "leases")
    mine = CpuLeases(directory=directory)
    mine.enabled, mine.cpus = True, [0, 1]
    assert mine.take() == 0
    other = ("from batloc.processes import CpuLeases\n"
             f"l = CpuLeases(directory={directory!r}); l.enabled, l.cpus = True, [0, 1]\n"
             "print(l.take(), l.take())")
    seen = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=60)
    assert seen.stdout.split() == ["1", "0"], seen.stderr   # CPU 1 was free; then CPU 0 is shared
    mine.give_back(0)   # and a lease ends with its process: the other one's are free again
    assert [mine.take(), mine.take()] == [0, 1]


def test_both_processes_of_a_run_share_one_cpu(tmp_path):
    from batloc.robin.process import CPUS, Stop, Timeouts, run_simulation

    if not CPUS.enabled:
        pytest.skip("no CPU affinity on this system")
    show = "import os; print(sorted(os.sched_getaffinity(0)), flush=True)"
    # not a Batsim endpoint: robin then starts both at once, without waiting for a port
    batcmd = f"python3 -c '{show}' -s ipc:///nowhere"
    out = run_simulation(tmp_path, batcmd, f"python3 -c '{show}'",
                         Timeouts(simulation=20, ready=5, success=5, failure=5),
                         stop=Stop())   # robin's global STOP may be left set by a test of a stopped sweep before it
    seen = [(tmp_path / "log" / f"{name}.stdout").read_text().strip() for name in ("batsim", "sched")]
    assert seen[0] == seen[1] and len(eval(seen[0])) == 1, (seen, out.reason)
