"""A robin sweep of a workflow workload on the engine: runs validated, the report's workflows section and Gantt."""

import copy
import json
import subprocess
import sys

import pytest
import yaml

from batloc.platforms.generator import PlatformSpec, write

from test_workflow_schedules import CHAIN, DIAMOND, GB

pytestmark = pytest.mark.needs_engine


def test_a_sweep_of_workflows_is_validated_and_reported(tmp_path):
    diamond = copy.deepcopy(DIAMOND)          # a second workflow, its own files, arriving at 100
    for j in diamond:
        j.update(id=j["id"] + 10, workflow="wf2", subtime=100)
        if "parents" in j:
            j["parents"] = [p + 10 for p in j["parents"]]
        for f in j["inputs"] + j["outputs"]:
            f["file"] = "d-" + f["file"]
    jobs = CHAIN + diamond
    static = [j for j in jobs if "parents" not in j]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 2, "jobs": static, "dependent_jobs": [j for j in jobs if "parents" in j],
                              "profiles": profiles}))
    write(PlatformSpec(memory_mix=((2, 100 * GB),), cores=1, node_bandwidth=1 * GB, node_routes=True),
          tmp_path / "p.xml")
    desc = {"output-dir": str(tmp_path / "out"), "platforms": [str(tmp_path / "p.xml")], "workloads": [str(wl)],
            "schedulers": ["fcfs", "lea", {"name": "fcfs-staged", "policy": "fcfs", "options": {"write_back": "staged"}}],
            "in-process": True}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(desc))
    res = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "s.yaml")], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    for run in (tmp_path / "out" / "runs").iterdir():
        assert json.loads((run / "run.json").read_text())["validation"]["valid"], run
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<h2>Workflows" in html and html.count("workflow_gantt_") == 3
    assert list((tmp_path / "out" / "figures").glob("workflow_gantt_*.svg"))
