"""robin on a plain Batsim platform, as Batsim's own `small_platform.xml` is: hosts without batloc's
properties, no node memory, no lustre. Stock schedulers run it to a validated run and a report; batloc's
FCFS runs its single-host jobs (each host a node of its own) and rejects the wider ones.

The master is a host with role=master (named `master`), which every engine reads; Batsim's own files
name it `master_host` instead (Batsim's -m default).
"""

import json
import subprocess
import sys

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.needs_engine

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
 <zone id="AS0" routing="Full">
   <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
   <host id="Jupiter" speed="1Gf"/>
   <host id="Fafard" speed="1Gf"/>
   <link id="l1" bandwidth="1GBps" latency="0s"/>
   <link id="l2" bandwidth="1GBps" latency="0s"/>
   <route src="master" dst="Jupiter"><link_ctn id="l1"/></route>
   <route src="master" dst="Fafard"><link_ctn id="l2"/></route>
   <route src="Jupiter" dst="Fafard"><link_ctn id="l1"/><link_ctn id="l2"/></route>
 </zone>
</platform>
"""
# Batsim's test_case_study1.json in small: a 2-host job, then two 1-host jobs
WORKLOAD = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 1, "walltime": 11, "res": 2, "profile": "delay10"},
                                  {"id": 2, "subtime": 2, "walltime": 6, "res": 1, "profile": "delay5"},
                                  {"id": 3, "subtime": 2, "walltime": 6, "res": 1, "profile": "delay5"}],
            "profiles": {"delay10": {"type": "delay", "delay": 10}, "delay5": {"type": "delay", "delay": 5}}}


def test_robin_runs_a_plain_batsim_platform_validates_it_and_reports(tmp_path):
    (tmp_path / "small.xml").write_text(PLATFORM)
    (tmp_path / "case.json").write_text(json.dumps(WORKLOAD))
    desc = {"output-dir": str(tmp_path / "out"), "platforms": [str(tmp_path / "small.xml")],
            "workloads": [str(tmp_path / "case.json")],
            "schedulers": [{"name": "stock-fcfs", "command": "pybatsim schedFcfs"}, "fcfs"],
            "baseline": "stock-fcfs",
            "simulation-timeout": 300, "ready-timeout": 30, "success-timeout": 30, "failure-timeout": 10}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "sweep.yaml"), "--jobs", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = tmp_path / "out" / "runs"
    for name in ("small__case__stock-fcfs", "small__case__fcfs"):
        meta = json.loads((runs / name / "run.json").read_text())
        assert (meta["status"], meta["validation"]["valid"], meta["validation"]["violations"]) == ("success", True, {}), name
    stock = pd.read_csv(runs / "small__case__stock-fcfs" / "out_jobs.csv").set_index("job_id")
    # schedFcfs: job 1 on both hosts [1, 11), then jobs 2 and 3 side by side [11, 16)
    assert [(stock.loc[j, "starting_time"], stock.loc[j, "allocated_resources"]) for j in (1, 2, 3)] == [
        (1.0, "0-1"), (11.0, "0"), (11.0, "1")]
    mine = pd.read_csv(runs / "small__case__fcfs" / "out_jobs.csv").set_index("job_id")
    # batloc's FCFS: a job runs on one node, here one host: job 1 is rejected, 2 and 3 start at once
    assert mine.loc[1, "final_state"] == "REJECTED"
    assert [mine.loc[j, "starting_time"] for j in (2, 3)] == [2.0, 2.0]
    assert (tmp_path / "out" / "report.html").exists()
    assert "leaving out" not in proc.stdout + proc.stderr


# Batsim's cluster_locality_8x16.xml in small: no host has role=master, its master is the one -m names
NO_ROLE_MASTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
 <zone id="AS0" routing="Full">
   <host id="a0" speed="1Gf"/>
   <host id="master_host0" speed="1Gf"/>
   <host id="z0" speed="1Gf"/>
   <link id="l1" bandwidth="1GBps" latency="0s"/>
   <link id="l2" bandwidth="1GBps" latency="0s"/>
   <route src="master_host0" dst="a0"><link_ctn id="l1"/></route>
   <route src="master_host0" dst="z0"><link_ctn id="l2"/></route>
   <route src="a0" dst="z0"><link_ctn id="l1"/><link_ctn id="l2"/></route>
 </zone>
</platform>
"""


def test_robin_validates_and_reports_a_run_with_the_engines_master_option(tmp_path):
    """The engine's -m (a sweep's engine-args) is the run's: robin's validation and the report read the
    platform with it, from run.json (without it the platform has no master and the run was INVALID)."""
    (tmp_path / "cabinet.xml").write_text(NO_ROLE_MASTER)
    (tmp_path / "case.json").write_text(json.dumps(WORKLOAD))
    desc = {"output-dir": str(tmp_path / "out"), "platforms": [str(tmp_path / "cabinet.xml")],
            "workloads": [str(tmp_path / "case.json")], "engine-args": "-m master_host0",
            "schedulers": [{"name": "stock-fcfs", "command": "pybatsim schedFcfs"}], "baseline": "stock-fcfs",
            "simulation-timeout": 300, "ready-timeout": 30, "success-timeout": 30, "failure-timeout": 10}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "sweep.yaml"), "--jobs", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = tmp_path / "out" / "runs" / "cabinet__case__stock-fcfs"
    meta = json.loads((run / "run.json").read_text())
    assert meta["platform_options"] == {"master_host": "master_host0"}
    assert (meta["status"], meta["validation"]["valid"]) == ("success", True), meta
    # a0 and z0 compute (ids 0 and 1), master_host0 none: job 1 on both, then 2 and 3 side by side
    jobs = pd.read_csv(run / "out_jobs.csv").set_index("job_id")
    assert [(jobs.loc[j, "starting_time"], jobs.loc[j, "allocated_resources"]) for j in (1, 2, 3)] == [
        (1.0, "0-1"), (11.0, "0"), (11.0, "1")]
    assert "leaving out" not in proc.stdout + proc.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert "unreadable" not in page and "(2 cores)" in page
    # batloc validate on the folder reads the same -m from run.json; what its command line gives wins
    check = [sys.executable, "-m", "batloc.cli.main", "validate", str(run)]
    ok = subprocess.run(check, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 3/3 jobs"), ok.stdout + ok.stderr
    other = subprocess.run(check + ["-m", "master_host0", "-r", "z0:storage"], capture_output=True, text=True,
                           timeout=120)
    assert other.returncode == 1 and "outside compute ids" in other.stdout, other.stdout + other.stderr


def test_the_engines_role_options_are_read_from_its_command_line():
    from batloc.platforms.numbering import role_options

    embedded = [sys.executable, "-m", "batloc.engine", "-p", "p.xml", "-w", "w.json", "-e", "out",
                "-s", "tcp://localhost:1", "--master-host", "m0", "-r", "a,b:storage", "--add-role-to-hosts=c:storage"]
    assert role_options(embedded) == {"master_host": "m0", "roles": ["a,b:storage", "c:storage"]}
    assert role_options(["batsim", "-p", "p.xml", "-mhost9", "-m", "host8"]) == {"master_host": "host8"}
    assert role_options([sys.executable, "-m", "batloc.engine", "-p", "p.xml"]) == {}
