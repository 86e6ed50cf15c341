"""robin's `in-process: true`: the embedded engine runs each scheduler it can inside itself (no scheduler process,
no port), the others over ZeroMQ as before; the outputs are those of a ZeroMQ sweep."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from batloc.outputs import read_rows
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


HANGS = """
import time
from batsim.batsim import BatsimScheduler


class Hangs(BatsimScheduler):
    def onJobSubmission(self, job):
        if job.id.endswith("!3"):
            time.sleep(3600)
        self.bs.reject_jobs([job])
"""


def test_robins_timeout_during_a_hung_in_process_call_keeps_every_row(tmp_path):
    # before: robin's SIGTERM waited behind the hung call, its SIGKILL followed: a 0-byte jobs .tmp, no jobs.csv
    platform, wl = inputs(tmp_path)
    hangs = write(tmp_path, "hangs.py", HANGS)
    desc = {"output-dir": str(tmp_path / "run"), "platform": platform, "workload": wl, "in-process": True,
            "scheduler": {"command": f"pybatsim {hangs}"}, "simulation-timeout": 4}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(desc))
    res = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "run.yaml")], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert res.returncode != 0
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["status"] == "failure" and "simulation-timeout (4 s)" in run["reason"], run
    last = (tmp_path / "run" / "log" / "batsim.stderr").read_text().strip().splitlines()[-1]
    assert last.startswith("batloc-batsim: interrupted by SIGTERM at t=10.000000; outputs written"), last
    rows = {r["job_id"]: r["final_state"] for r in read_rows(tmp_path / "run" / "out_jobs.csv")[1]}
    assert len(rows) == 12 and rows["0"] == "REJECTED" and rows["3"] == "SUBMITTED"
    assert not list((tmp_path / "run").glob("*.tmp"))
