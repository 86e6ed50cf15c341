"""robin against signals and hostile descriptions (issue 11): prompt stop, loopback binding, contained names.

Stand-in processes (tests/data/analysis/fake_*.py) play the engine and the schedulers.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from engine_harness import platform_xml
from batloc.robin import description as rd
from batloc.robin.runs import sweep_runs

DATA = Path(__file__).resolve().parents[1] / "data" / "analysis"
PY = sys.executable
FAKE_SCHED = DATA / "fake_sched.py"


def processes_with(marker: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if marker in cmdline:
            pids.append(int(pid))
    return pids


def sweep(tmp_path, schedulers, **more):
    (tmp_path / "p.xml").write_text(platform_xml(nodes=1))   # validated after the run: a real platform
    (tmp_path / "w.json").write_text('{"jobs": []}')
    desc = {"output-dir": str(tmp_path / "sweep"), "platforms": [str(tmp_path / "p.xml")],
            "workloads": [str(tmp_path / "w.json")], "engine": f"{PY} {DATA / 'fake_engine.py'}",
            "schedulers": schedulers, "simulation-timeout": 600, "ready-timeout": 10, **more}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def run_dir(tmp_path, name):
    return tmp_path / "sweep" / "runs" / f"p__w__{name}"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_sweep_stops_within_5_s_of_a_signal_and_keeps_finished_runs(tmp_path, sig):
    marker = f"{500 + random.random():.9f}"
    path = sweep(tmp_path, [{"name": "good", "command": f"{PY} {FAKE_SCHED} ok {marker}"},
                            {"name": "hung", "command": f"{PY} {FAKE_SCHED} hang {marker}"},
                            {"name": "later", "command": f"{PY} {FAKE_SCHED} hang {marker}"}])
    robin = subprocess.Popen([PY, "-m", "batloc.robin", str(path), "--jobs", "1", "--no-report"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung_log = run_dir(tmp_path, "hung") / "log" / "sched.stdout"
    deadline = time.monotonic() + 60
    while not (hung_log.exists() and "got:" in hung_log.read_text()):   # the hung run is under way
        assert robin.poll() is None and time.monotonic() < deadline, robin.communicate()
        time.sleep(0.1)
    sent = time.monotonic()
    robin.send_signal(sig)
    out, err = robin.communicate(timeout=30)
    assert time.monotonic() - sent < 5.0, err
    assert robin.returncode == 128 + sig, err
    assert f"stopped by {sig.name}" in err and "1 run(s) finished and kept" in err and "1 not started" in err
    good = json.loads((run_dir(tmp_path, "good") / "run.json").read_text())
    hung = json.loads((run_dir(tmp_path, "hung") / "run.json").read_text())
    assert good["status"] == "success"
    assert hung["status"] == "failure" and hung["reason"].startswith(f"stopped by {sig.name}")
    assert not run_dir(tmp_path, "later").exists()
    assert processes_with(marker) == []   # every child's process group was stopped


def test_launched_schedulers_bind_loopback_unless_told_otherwise(tmp_path):
    marker = f"{500 + random.random():.9f}"
    path = sweep(tmp_path, [{"name": "one", "command": f"{PY} {FAKE_SCHED} ok {marker}"}])
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path), "--no-report"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "bound: tcp://127.0.0.1:" in (run_dir(tmp_path, "one") / "log" / "sched.stdout").read_text()

    path = sweep(tmp_path, [{"name": "one", "command": f"{PY} {FAKE_SCHED} ok {marker}"}],
                 **{"scheduler-address": "*"})
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path), "--no-report", "--force"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "bound: tcp://0.0.0.0:" in (run_dir(tmp_path, "one") / "log" / "sched.stdout").read_text()


def test_policies_and_the_staging_proxy_are_told_loopback(tmp_path):
    lea = rd.parse_scheduler("lea").command_line(4242, tmp_path / "out")
    assert " -s tcp://127.0.0.1:4242 " in lea and "tcp://*" not in lea
    staged = rd.parse_scheduler({"command": "pybatsim schedFcfs", "staging": True}).command_line(4242, tmp_path)
    assert "--bind tcp://127.0.0.1:4242 " in staged and "tcp://*" not in staged
    assert "-s tcp://localhost:4242" in rd.embedded_batcmd(["batsim"], Path("p"), Path("w"), Path("o"), 4242,
                                                           False, [])
    with pytest.raises(rd.DescriptionError, match="scheduler-address"):
        rd.scheduler_address({"scheduler-address": "1.2.3.4; rm -rf /"})


@pytest.mark.parametrize("name", ["../../escape", "a/b", "..", ".hidden", "x y"])
def test_a_scheduler_name_cannot_leave_the_output_directory(tmp_path, name):
    path = sweep(tmp_path, [{"name": name, "command": "true"}])
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "must be a plain file name" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.xml", "sweep.yaml", "w.json"]


def test_derived_names_are_made_plain(tmp_path):
    (tmp_path / "..odd name.xml").write_text("<platform/>")
    (tmp_path / "w.json").write_text('{"jobs": []}')
    desc = {"output-dir": str(tmp_path / "sweep"), "platforms": [str(tmp_path / "..odd name.xml")],
            "workloads": [str(tmp_path / "w.json")],
            "schedulers": [{"command": "pybatsim ../../../tmp/evil"}, {"command": "x /etc/..", "staging": True}]}
    out, specs, _ = sweep_runs(desc)
    for spec in specs:
        assert spec.output_dir.parent == out / "runs" and "/" not in spec.name and not spec.name.startswith(".")
    assert [s.name for s in specs] == ["odd_name__w___.._.._tmp_evil", "odd_name__w___etc_..-staged"]
