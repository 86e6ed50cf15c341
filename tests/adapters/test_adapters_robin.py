"""experiments/robin-stock-fcfs-proxy.yaml: robin runs stock FCFS behind the staging proxy."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from batloc.robin.runs import PortAllocator

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.needs_engine


def test_robin_runs_stock_fcfs_through_the_proxy(tmp_path):
    desc = yaml.safe_load((ROOT / "experiments" / "robin-stock-fcfs-proxy.yaml").read_text())
    port = str(PortAllocator().take())
    out = tmp_path / "proxy"
    for key in ("batcmd", "schedcmd"):
        desc[key] = desc[key].replace("28733", port).replace(desc["output-dir"], str(out))
    desc["output-dir"] = str(out)
    path = tmp_path / "desc.yaml"
    path.write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jobs = pd.read_csv(out / "out_jobs.csv")
    wl = json.loads((ROOT / "experiments/small_workload.json").read_text())
    assert (jobs["workload_name"] == "w0").sum() == len(wl["jobs"])
    own = jobs[jobs["workload_name"] == "w0"]
    assert own["final_state"].isin(["COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED"]).all()
    decisions = pd.read_csv(out / "out_decisions.csv")
    # the paper's rule, as batloc's schedulers apply it: a job is killed at the instant its scheduler took
    # its cores + its walltime, its load included (so a kill ends a job that loaded its file)
    # (its first row: a job that waited for room in memory held its cores from its `full` row on)
    first = decisions.assign(job_id=decisions["job_id"].str.split("!").str[1].astype(int)).groupby("job_id").agg(
        time=("time", "min"), cache=("cache", "last")).reset_index()
    killed = own[own["final_state"] == "COMPLETED_KILLED"].astype({"job_id": int}).merge(first, on="job_id")
    walltimes = {int(j["id"]): j["walltime"] for j in wl["jobs"]}
    assert (killed["finish_time"] - killed["time"]).round(5).tolist() == \
        [walltimes[j] for j in killed["job_id"]]
    assert len(killed) and set(killed["cache"]) <= {"miss", "wait", "full"}   # full: killed while waiting for room
    stagings = jobs[jobs["workload_name"] == "batloc-stage"]
    assert len(stagings) == (decisions["cache"] == "miss").sum() > 0
    assert set(decisions["policy"]) == {"proxy"}


def test_a_sweep_can_put_the_proxy_in_front_of_a_stock_scheduler(tmp_path):
    desc = {
        "output-dir": str(tmp_path / "sweep"),
        "platforms": [str(ROOT / "platforms" / "rackham.xml")],
        "workloads": [str(ROOT / "experiments/small_workload.json")],
        "schedulers": ["fcfs", {"command": "pybatsim schedFcfs", "staging": True}],
        "baseline": "fcfs",
        "simulation-timeout": 300, "ready-timeout": 30, "success-timeout": 30, "failure-timeout": 10,
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(path), "--jobs", "2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = tmp_path / "sweep" / "runs" / "rackham__small_workload__schedFcfs-staged"
    jobs = pd.read_csv(run / "out_jobs.csv")
    decisions = pd.read_csv(run / "out_decisions.csv")
    stagings = jobs[jobs["workload_name"] == "batloc-stage"]
    assert len(stagings) == (decisions["cache"] == "miss").sum() > 0
    summary = pd.read_csv(tmp_path / "sweep" / "summary.csv")
    assert set(summary["scheduler"]) == {"fcfs", "schedFcfs-staged"}
