"""robin's `in-process: true`: the embedded engine runs each scheduler it can inside itself (no scheduler process,
no port), the others over ZeroMQ as before; the outputs are those of a ZeroMQ sweep."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.robin import description as rd
from batloc.robin import runs
from engine_harness import platform_xml, write

pytestmark = pytest.mark.needs_engine


def inputs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    jobs = [{"id": i, "subtime": 1 + 3 * i, "res": 1 + i % 2, "walltime": 100, "profile": "d20", "user": "u",
             "input_file": f"f{i % 3}", "input_size": 1e9, "evaluated": True} for i in range(12)]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "profiles": {"d20": {"type": "delay", "delay": 20}}, "jobs": jobs})
    return platform, wl


def test_which_schedulers_run_inside_the_engine(tmp_path):
    platform, wl = inputs(tmp_path)
    base = {"output-dir": str(tmp_path / "one"), "platform": platform, "workload": wl, "in-process": True}
    spec = runs.single_run({**base, "scheduler": {"policy": "lea", "options": {"cache": "lru"}}})
    words = shlex.split(spec.batcmd)
    assert spec.schedcmd is None and "-s" not in words and spec.meta["in_process"] is True
    i = words.index("--in-process")
    assert Path(words[i + 1]).name == "lea.py" and json.loads(words[i + 3]) == {
        "cache": "lru", "export_prefix": str(tmp_path / "one" / "out")}
    assert runs.socket_port(spec.batcmd) is None     # no port to wait for
    spec = runs.single_run({**base, "scheduler": {"command": "pybatsim easyBackfill -o '{\"a\": 1}'"}})
    words = shlex.split(spec.batcmd)
    assert spec.schedcmd is None and words[words.index("--in-process"):][:4] == [
        "--in-process", "easyBackfill", "--scheduler-options", '{"a": 1}']
    # a staged stock scheduler, or any other program, keeps its process and its socket
    for scheduler in ({"command": "pybatsim schedFcfs", "staging": True}, {"command": "my_scheduler --fast"}):
        spec = runs.single_run({**base, "scheduler": scheduler})
        assert spec.schedcmd and "--in-process" not in spec.batcmd and "in_process" not in spec.meta
    with pytest.raises(rd.DescriptionError, match="in-process needs the embedded engine"):
        runs.single_run({**base, "scheduler": "fcfs", "batcmd": "batsim -p p.xml"})
    with pytest.raises(rd.DescriptionError, match="in-process must be true or false"):
        runs.single_run({**base, "scheduler": "fcfs", "in-process": "yes"})


def test_an_in_process_sweep_writes_a_zeromq_sweeps_outputs(tmp_path):
    platform, wl = inputs(tmp_path)
    schedulers = ["lea", {"name": "stock", "command": "pybatsim schedFcfs"}]
    for name, local in (("zmq", False), ("local", True)):
        desc = {"output-dir": str(tmp_path / name), "platforms": [platform], "workloads": [wl],
                "schedulers": schedulers, "in-process": local}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(desc))
        res = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / f"{name}.yaml"), "--no-report"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert res.returncode == 0, res.stdout + res.stderr
    for run, files in (("lea", ("jobs", "decisions", "schedule", "machine_states")),
                       ("stock", ("jobs", "schedule", "machine_states"))):
        local, zmq = (tmp_path / name / "runs" / f"p__w__{run}" for name in ("local", "zmq"))
        assert json.loads((local / "run.json").read_text())["in_process"] is True
        assert not (local / "cmd" / "sched.bash").exists()
        for f in files:
            assert (local / f"out_{f}.csv").read_bytes() == (zmq / f"out_{f}.csv").read_bytes(), (run, f)
    # the stock scheduler's own file stays in its run folder, as over ZeroMQ
    assert (tmp_path / "local" / "runs" / "p__w__stock" / "out_events.csv").exists()
    assert not (tmp_path / "out_events.csv").exists()
