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


# SIGHUP: a closed terminal or ssh session killed robin on the spot, run.json unwritten (the probe)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
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


def test_a_signal_during_the_sweeps_report_stops_it_at_once(tmp_path, monkeypatch, capsys):
    # the report went on to its end with the signal held, and robin then said nothing and exited 0 (the probe)
    from batloc.analysis import report as report_module
    from batloc.robin.sweep import run_sweep

    marker = f"{500 + random.random():.9f}"
    desc = rd.load_description(sweep(tmp_path, [{"name": "fcfs", "command": f"{PY} {FAKE_SCHED} ok {marker}"}]))
    drawn = []

    def report_signalled(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        drawn.append("whole")

    monkeypatch.setattr(report_module, "build_report", report_signalled)
    assert run_sweep(desc, 1, False, True, lambda msg: None) == 128 + signal.SIGTERM
    assert drawn == []
    err = capsys.readouterr().err
    assert "robin: sweep stopped by SIGTERM while its report was written: 1 run(s) finished and kept" in err
    assert json.loads((run_dir(tmp_path, "fcfs") / "run.json").read_text())["status"] == "success"


@pytest.mark.parametrize("text, message", [
    # PyYAML's seven lines naming "<unicode string>", as one line naming the file
    ("output-dir: x\nplatforms: [p.xml\nworkloads: a: b\n", "invalid YAML at d.yaml:3:10: expected ',' or ']'"),
    # a key given twice: PyYAML kept the last in silence
    ("output-dir: x\nworkloads: [a.json]\nschedulers: [fcfs]\nworkloads: [b.json]\n",
     "invalid YAML at d.yaml:4:1: key 'workloads' given twice (line 2 and line 4): keep one"),
    # nine aliases of nine aliases, eleven deep: 3.1e10 values from 400 bytes, walked for ever
    ("output-dir: x\nengine-args:\n  - &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 12)),
     "d.yaml: its YAML aliases expand to more than 1000000 values"),
])
def test_a_description_robin_cannot_take_is_one_line(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.yaml").write_text(text)
    with pytest.raises(rd.DescriptionError) as caught:
        rd.load_description("d.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_yaml_merge_keys_may_be_given_again(tmp_path):
    (tmp_path / "d.yaml").write_text("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\n")
    assert rd.load_description(str(tmp_path / "d.yaml"))["x"] == {"a": 1, "b": 3}


@pytest.mark.parametrize("value", [".nan", "-.inf", "0"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(value):
    desc = yaml.safe_load(f"simulation-timeout: {value}")
    with pytest.raises(rd.DescriptionError, match="simulation-timeout must be a positive number of seconds"):
        rd.read_timeouts(desc)


def test_an_output_dir_in_a_symlink_loop_is_one_line(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(rd.DescriptionError, match="output-dir .*a: cannot be resolved"):
        rd.output_folder(tmp_path / "a")


def test_a_workload_edited_while_its_run_runs_fails_the_run_saying_so(tmp_path):
    # validated against the new contents, the old contents' outputs read as "job not in workload" (the probe)
    editing = tmp_path / "editing_engine.py"
    editing.write_text(f"import runpy, sys\nw = sys.argv[sys.argv.index('-w') + 1]\nopen(w, 'a').write(' ')\n"
                       f"runpy.run_path({str(DATA / 'fake_engine.py')!r}, run_name='__main__')\n")
    marker = f"{500 + random.random():.9f}"
    path = sweep(tmp_path, [{"name": "one", "command": f"{PY} {FAKE_SCHED} ok {marker}"}],
                 engine=f"{PY} {editing}")
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path), "--no-report"], capture_output=True, text=True,
                          timeout=60)
    meta = json.loads((run_dir(tmp_path, "one") / "run.json").read_text())
    assert proc.returncode == 1 and meta["status"] == "failure", proc.stderr
    assert meta["reason"] == (f"its inputs changed while it ran (workload {tmp_path / 'w.json'}): not validated "
                              "against contents it may not have read; the next invocation runs it again")
    assert meta["validation"] is None


def test_a_daemon_a_scheduler_leaves_outside_its_group_ends_with_its_run(tmp_path):
    # setsid took it out of the scheduler's process group: it outlived robin (the probe)
    marker = f"{500 + random.random():.9f}"
    wrapper = tmp_path / "daemon_sched.sh"
    wrapper.write_text(f"setsid sleep 1{marker} < /dev/null > /dev/null 2>&1 &\nexec {PY} {FAKE_SCHED} ok {marker} \"$@\"\n")
    path = sweep(tmp_path, [{"name": "one", "command": f"bash {wrapper}"}])
    proc = subprocess.run([PY, "-m", "batloc.robin", str(path), "--no-report"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert processes_with(f"sleep 1{marker}") == []
    assert (f"robin: ended 1 process(es) the sched command left outside its process group: sleep 1{marker}"
            in (run_dir(tmp_path, "one") / "log" / "sched.stderr").read_text())
