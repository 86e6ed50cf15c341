"""pybatsim's stock schedulers behind the staging proxy on node memories that hold one file at a time.

4 nodes x 4 cores; each node's memory holds 1.5 GB and every file is 0.8 to
1.4 GB, so two files never fit together; 60 jobs of 1 to 4 cores (the stock
schedulers' consecutive ids span nodes) read 9 files. Whatever the wrapped
scheduler decides, the run must be possible: the validator (which replays every
node memory under the paper model) finds nothing, every job completes, and the
jobs that waited for room are logged with the time they waited.
"""

import csv
import json
import random
import subprocess
import sys

import pytest
import yaml

from batloc.analysis import load, metrics, validate
from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

pytest.importorskip("batsim")
PROXY = [sys.executable, "-m", "batloc.adapters.cli"]
GB = 1e9
SCHEDULERS = ["schedFcfs", "easyBackfill", "fillerSched"]


def workload(n=60, files=9, seed=7):
    rng = random.Random(seed)
    sizes = {f"f{i}": round(rng.uniform(0.8, 1.4), 2) * GB for i in range(files)}
    jobs, t = [], 1.0
    for i in range(n):
        t += rng.choice([0.5, 1, 2, 5])
        f = f"f{rng.randrange(files)}"
        jobs.append({"id": i, "subtime": t, "res": rng.choice([1, 1, 2, 3, 4]), "walltime": 400,
                     "profile": f"d{i % 4}", "user": "u", "evaluated": True,
                     "input_file": f, "input_size": sizes[f]})
    profiles = {f"d{k}": {"type": "delay", "delay": 3 + 5 * k} for k in range(4)}
    return {"nb_res": 16, "jobs": jobs, "profiles": profiles}


def run(tmp_path, scheduler):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=4, cores=4, bandwidth=0.1 * GB, memory=1.5 * GB))
    wl = write(tmp_path, "w.json", workload())
    port = free_port()
    prefix = str(tmp_path / "out")
    with open(tmp_path / "proxy.log", "w") as log:
        proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{port}", "--export-prefix", prefix, "--",
                                          "pybatsim", scheduler, "-v", "warning"],
                                 stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", prefix, "-q",
                                              "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs"],
                                    capture_output=True, text=True, timeout=300)
            proxy.wait(timeout=30)
        finally:
            if proxy.poll() is None:
                proxy.kill()
    assert engine.returncode == 0, engine.stderr
    assert proxy.returncode == 0, (tmp_path / "proxy.log").read_text()[-3000:]
    return platform, wl, prefix


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_stock_scheduler_behind_the_proxy_never_overfills_a_node_memory(tmp_path, scheduler):
    platform, wl, prefix = run(tmp_path, scheduler)
    violations, ran, n_jobs, stagings, _ = validate.validate(prefix, wl, platform, "paper")
    assert violations == []
    with open(prefix + "_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    own = [r for r in rows if r["workload_name"] == "w0"]
    assert len(own) == n_jobs == 60 and ran == 60
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    # no job ran on a storage (ids 16 and up): the scheduler was shown the 16 cores only
    assert all(int(x) < 16 for r in own for x in r["allocated_resources"].replace("-", " ").split())

    with open(prefix + "_decisions.csv") as f:
        decisions = list(csv.DictReader(f))
    full = [d for d in decisions if d["cache"] == "full"]
    assert full, "the workload must make jobs wait for room"
    starts = {r["job_id"]: float(r["starting_time"]) for r in own}
    for d in full:   # a job that waited held its cores from its decision, and started after it
        claims = [float(c["time"]) for c in decisions if c["job_id"] == d["job_id"] and c["cache"] != "full"]
        assert float(d["time"]) < min(claims) <= starts[d["job_id"].split("!")[1]]


def test_the_analysis_counts_the_wait_for_room_as_file_wait(tmp_path):
    platform, wl, prefix = run(tmp_path, "schedFcfs")
    table = metrics.per_job(load.read_jobs(prefix + "_jobs.csv"), load.read_workload(wl),
                            load.read_decisions(prefix + "_decisions.csv"), 0.1 * GB).set_index("job_id")
    with open(prefix + "_decisions.csv") as f:
        rows = list(csv.DictReader(f))
    with open(prefix + "_jobs.csv") as f:
        stagings = {r["job_id"]: r for r in csv.DictReader(f) if r["workload_name"] == "batloc-stage"}
    waited = {d["job_id"].split("!")[1]: float(d["time"]) for d in rows if d["cache"] == "full"}
    assert waited
    for jid, since in waited.items():
        claim = [d for d in rows if d["job_id"] == f"w0!{jid}" and d["cache"] != "full"][-1]
        expected = float(claim["time"]) - since      # held its cores, no room yet
        if claim["cache"] == "wait":                 # ... then waited for another job's load
            expected = float(stagings[claim["staging_job"].split("!")[1]]["finish_time"]) - since
        assert table.loc[jid, "reservation_start"] == pytest.approx(since)
        assert table.loc[jid, "file_wait"] == pytest.approx(expected)


def test_the_same_through_a_robin_sweep_whose_run_json_records_the_verdict(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=4, cores=4, bandwidth=0.1 * GB, memory=1.5 * GB))
    wl = write(tmp_path, "w.json", workload())
    staged = [{"command": f"pybatsim {s}", "staging": True} for s in SCHEDULERS]
    desc = {"output-dir": str(tmp_path / "sweep"), "platforms": [platform], "workloads": [wl],
            # and EASY without the proxy: it runs jobs on storage ids, which the validation catches
            "schedulers": staged + [{"command": "pybatsim easyBackfill"}],
            "simulation-timeout": 300, "ready-timeout": 30, "success-timeout": 30, "failure-timeout": 10}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(desc))
    res = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "sweep.yaml"), "--jobs", "2",
                          "--no-report"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    runs = tmp_path / "sweep" / "runs"
    for s in SCHEDULERS:
        meta = json.loads((runs / f"p__w__{s}-staged" / "run.json").read_text())
        assert meta["status"] == "success", meta["reason"]
        assert meta["validation"]["valid"] and not meta["validation"]["violations"]
    bare = json.loads((runs / "p__w__easyBackfill" / "run.json").read_text())
    assert bare["validation"]["valid"] is False and bare["validation"]["violations"]["outside compute ids"] > 0
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == "robin: 1 of 4 runs failed: p__w__easyBackfill (1 invalid: " \
                                                  "p__w__easyBackfill)"
    # pybatsim's own event log (its high-level schedulers write one) stayed in its run; its log at warning
    assert not (tmp_path / "out_events.csv").exists()
    assert (runs / "p__w__schedFcfs-staged" / "out_events.csv").exists()
    assert " INFO]" not in (runs / "p__w__schedFcfs-staged" / "log" / "sched.stderr").read_text()
