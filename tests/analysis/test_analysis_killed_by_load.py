"""A job whose load outlasts its window on a Batsim platform with latencies (issue 36): its scheduler executes and
kills it in one answer at its window's end; the kill reaches Batsim's server a few link latencies after the
execution, so jobs.csv records it starting at its window's end (after the decision's latency) and running those
latencies, before its staging ends. `batloc validate` accepts exactly that, and robin's report is written.

Platform: Batsim's cluster512.xml in small (two hosts a0, a1 in a <cluster> with 50 µs links, a master behind a
backbone), annotated by `batloc platform annotate` with 10 GB node memories loaded at 1 GB/s.
"""

import json
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from batloc.platforms.annotate import annotate

pytestmark = pytest.mark.needs_engine

CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
    <cluster id="c1" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps"
        bb_lat="500us" />
    <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="50us"
        bb_bw="2.25GBps" bb_lat="500us"><prop id="role" value="master" /></cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="500us" />
    <zoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="master_hostc2_router"><link_ctn id="backbone" /></zoneRoute>
</zone>
</platform>
"""
# job 1: a 5 s load [1, 6) and a 3 s window [1, 4): executed and killed at 4; job 2 loads 1 s, then runs 2 s
WORKLOAD = {"nb_res": 2, "profiles": {"d1": {"type": "delay", "delay": 1}, "d2": {"type": "delay", "delay": 2}},
            "jobs": [{"id": 1, "subtime": 1, "res": 1, "walltime": 3, "profile": "d1", "input_file": "A",
                      "input_size": 5e9},
                     {"id": 2, "subtime": 1, "res": 1, "walltime": 10, "profile": "d2", "input_file": "B",
                      "input_size": 1e9}]}


def test_a_job_killed_during_its_load_on_a_platform_with_latencies_validates_and_reports(tmp_path):
    (tmp_path / "cluster.xml").write_text(CLUSTER)
    annotate(tmp_path / "cluster.xml", tmp_path / "annotated.xml", memory=10e9, bandwidth=1e9)
    (tmp_path / "w.json").write_text(json.dumps(WORKLOAD))
    desc = {"output-dir": str(tmp_path / "out"), "platforms": [str(tmp_path / "annotated.xml")],
            "workloads": [str(tmp_path / "w.json")], "schedulers": ["fcfs", "lea"], "in-process": True,
            "simulation-timeout": 600, "ready-timeout": 600}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "sweep.yaml"), "--jobs", "1"],
                          capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out" / "report.html").exists() and "leaving out" not in proc.stdout + proc.stderr
    for policy in ("fcfs", "lea"):
        run = tmp_path / "out" / "runs" / f"annotated__w__{policy}"
        assert json.loads((run / "run.json").read_text())["validation"]["valid"] is True
        jobs = pd.read_csv(run / "out_jobs.csv").set_index("job_id")
        decided = pd.read_csv(run / "out_decisions.csv").set_index("job_id").loc["w0!1", "time"]
        killed, staging = jobs.loc["1"], jobs.loc["stage-w0-1-a0"]
        # timed mode: the decision, the execution and the kill each a few latencies after the last
        assert killed["final_state"] == "COMPLETED_KILLED"
        assert 1 < decided < 1.01 and decided + 3 < killed["starting_time"] < decided + 3.01
        assert 0 < killed["execution_time"] < 0.01
        assert killed["finish_time"] < staging["finish_time"]      # it started before its file was in memory
        assert jobs.loc["2", "final_state"] == "COMPLETED_SUCCESSFULLY"

