"""pybatsim's stock schedulers, unmodified, behind the staging proxy on a file-annotated workload.

The check does not use the proxy's code or its decision log: it replays the
run from jobs.csv and the workload under the paper's memory model (written
out again below) and derives which (job, node) pairs had to load their file;
those must be exactly the staging jobs in jobs.csv, each ending before its
job starts.
"""

import csv
import random
import subprocess
import sys

import pytest

from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

pytest.importorskip("batsim")
PROXY = [sys.executable, "-m", "batloc.adapters.cli"]
EPS = 1e-6


def workload(n=40, seed=1):
    # Jobs of 1 to 4 cores on 4-core nodes: the stock schedulers take consecutive free ids, which
    # Batsim's numbering (cores first, contract §1) lets span two nodes; EASY backfilling counts
    # every resource, so it may also land on the storage ids after the cores.
    rng = random.Random(seed)
    jobs = []
    t = 1.0
    for i in range(n):
        t += rng.choice([0.5, 2, 4, 9])
        f = rng.randrange(5)
        jobs.append({"id": i, "subtime": t, "res": rng.choice([1, 2, 3, 4]), "walltime": 400,
                     "profile": f"d{i % 3}", "user": "u", "evaluated": True,
                     "input_file": f"f{f}", "input_size": (1 + f) * 1e8})
    jobs[3].pop("input_file"), jobs[3].pop("input_size")   # one job without a file
    profiles = {f"d{k}": {"type": "delay", "delay": 3 + 6 * k} for k in range(3)}
    return {"nb_res": 8, "jobs": jobs, "profiles": profiles}


def resource_nodes(nodes, cores):
    """Resource id -> node name for cores (storage ids map to None): cores by name, then storages."""
    cores_ = sorted(f"n{n:03d}_c{c:02d}" for n in range(nodes) for c in range(cores))
    storages = sorted(["lustre"] + [f"n{n:03d}_mem" for n in range(nodes)])
    return {i: (None if name in storages else name[:4]) for i, name in enumerate(cores_ + storages)}


def ids(text):
    out = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def expected_loads(jobs_rows, wl, node_of):
    """(job, node) pairs whose file is not in memory when the job claims the node, paper model.

    A job claims its cores when its scheduler executes it: when its own stagings begin if it
    has any, else when it starts (a job that joined another job's load is then counted as
    claiming when that load ends, which keeps the file in memory all the same).
    """
    by_job = {j["id"]: j for j in wl["jobs"]}
    staged_at = {}
    for r in jobs_rows:
        if r["workload_name"] == "batloc-stage":
            jid = r["job_id"].split("-")[2]
            staged_at[jid] = min(staged_at.get(jid, float("inf")), float(r["starting_time"]))
    events = []   # (time, order, ...): ends before claims at equal times, claims in job order
    for r in jobs_rows:
        if r["workload_name"] != "w0":
            continue
        j = by_job[int(r["job_id"])]
        claim = min(float(r["starting_time"]), staged_at.get(r["job_id"], float("inf")))
        nodes = sorted({node_of[i] for i in ids(r["allocated_resources"]) if node_of[i]})
        for k in nodes:
            events.append((claim, 1, int(r["job_id"]), k, j.get("input_file")))
            events.append((float(r["finish_time"]), 0, int(r["job_id"]), k, j.get("input_file")))
    events.sort()
    users = {}        # (node, file) -> running/waiting jobs using it
    orphans = {}      # node -> files kept after their last user ended
    loads = set()
    for _, kind, jid, k, f in events:
        if kind == 0:
            users[(k, f)] -= 1
            if users[(k, f)] == 0 and f is not None:
                orphans.setdefault(k, set()).add(f)
            continue
        present = users.get((k, f), 0) > 0 or f in orphans.get(k, set())
        orphans[k] = {f} & orphans.get(k, set())   # a start on k drops the other unused files
        if f is not None and not present:
            loads.add((str(jid), k))
        users[(k, f)] = users.get((k, f), 0) + 1
        if f is not None:
            orphans[k].discard(f)
    return loads


@pytest.mark.parametrize("scheduler", ["schedFcfs", "easyBackfill"])
def test_stock_scheduler_pays_for_loads_through_the_proxy(tmp_path, scheduler):
    nodes, cores = 2, 4
    platform = write(tmp_path, "p.xml", platform_xml(nodes=nodes, cores=cores, bandwidth=1e8))
    wl_data = workload()
    wl = write(tmp_path, "w.json", wl_data)
    port = free_port()
    log = open(tmp_path / "proxy.log", "w")   # a file, not a pipe: pybatsim logs a lot
    # pybatsim's script (not python -m) and cwd=tmp_path: see test_engine_pybatsim.py
    proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{port}", "--export-prefix",
                                      str(tmp_path / "out"), "--", "pybatsim", scheduler, "-v", "warning"],
                             stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                          "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs"],
                                capture_output=True, text=True, timeout=120)
        proxy.wait(timeout=30)
    finally:
        if proxy.poll() is None:
            proxy.kill()
        log.close()
    assert engine.returncode == 0, engine.stderr
    assert proxy.returncode == 0, (tmp_path / "proxy.log").read_text()[-3000:]

    with open(tmp_path / "out_jobs.csv") as f:
        jobs_rows = list(csv.DictReader(f))
    own = {r["job_id"]: r for r in jobs_rows if r["workload_name"] == "w0"}
    assert sorted(map(int, own)) == list(range(len(wl_data["jobs"])))
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in jobs_rows)

    node_of = resource_nodes(nodes, cores)
    stagings = {}
    for r in jobs_rows:
        if r["workload_name"] == "batloc-stage":
            _, w, jid, node = r["job_id"].split("-")
            assert w == "w0" and r["allocated_resources"] == ("8-9" if node == "n000" else "8 10")
            stagings[(jid, node)] = r
    if scheduler == "easyBackfill":   # this seed makes EASY spread jobs over both nodes
        spread = [j for j, r in own.items()
                  if len({node_of[i] for i in ids(r["allocated_resources"]) if node_of[i]}) == 2]
        assert spread and any({(j, "n000"), (j, "n001")} <= set(stagings) for j in spread)
    expected = expected_loads(jobs_rows, wl_data, node_of)
    assert len(expected) >= 10            # the workload exercises loads ...
    assert len(expected) < len(own)       # ... and reuse
    assert set(stagings) == expected
    for (jid, _), st in stagings.items():
        start = float(own[jid]["starting_time"])
        assert float(st["finish_time"]) <= start + EPS
        # a load of S bytes takes S / 0.1 GB/s
        size = next(j["input_size"] for j in wl_data["jobs"] if str(j["id"]) == jid)
        assert float(st["execution_time"]) == pytest.approx(size / 1e8, abs=1e-5)
    # a job that loaded starts when its last load ends, not later
    for jid in {j for j, _ in stagings}:
        ends = [float(st["finish_time"]) for (j, _), st in stagings.items() if j == jid]
        assert float(own[jid]["starting_time"]) == pytest.approx(max(ends), abs=1e-6)

    with open(tmp_path / "out_decisions.csv") as f:
        decisions = list(csv.DictReader(f))
    assert {d["job_id"] for d in decisions} == {f"w0!{j}" for j in own}
    assert {(d["job_id"][3:], d["node"]) for d in decisions if d["cache"] == "miss"} == expected
