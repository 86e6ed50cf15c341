"""pybatsim 3.2.1's stock schedulers, unmodified, drive the embedded engine to the end."""

import subprocess

import pytest

from batloc.processes import free_port, pybatsim_command
from engine_harness import ENGINE, platform_xml, write

pytestmark = pytest.mark.needs_pybatsim


def sample_workload(n=40):
    # The first job, submitted at t=0 (which stock schedulers cannot take at exactly 0: contract
    # §4b), needs every core of the two 2-core nodes.
    jobs = [{"id": i, "subtime": 3 * i, "res": 4 if i == 0 else 1 + (i * 5) % 4, "walltime": 50 + (i % 3) * 20,
             "profile": f"d{(i * 7) % 5}"} for i in range(n)]
    # one job overruns its walltime, so a killed job goes through the stock code too
    jobs[5]["profile"], jobs[5]["walltime"] = "long", 30
    profiles = {f"d{k}": {"type": "delay", "delay": 10 + 9 * k} for k in range(5)}
    profiles["long"] = {"type": "delay", "delay": 500}
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


@pytest.mark.parametrize("scheduler", ["schedFcfs", "easyBackfill"])
def test_stock_scheduler_runs_to_completion(tmp_path, scheduler):
    # Two 2-core nodes: the stock schedulers take consecutive free ids, which Batsim's numbering
    # (cores 0-3, then the storages) lets span both nodes.
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    port = free_port()
    log = open(tmp_path / "sched.log", "w")  # a file, not a pipe: pybatsim logs a lot
    # The `pybatsim` script, not `python -m`: from the repository root, -m would put the checkout's own
    # schedulers/ folder in front of pybatsim's package of the same name.
    sched = subprocess.Popen([*pybatsim_command(), scheduler, "-v", "warning",
                              "-s", f"tcp://127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                             cwd=tmp_path)  # stock schedulers write out_events.csv in their cwd
    try:
        proc = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"),
                                        "-s", f"tcp://127.0.0.1:{port}"],
                              capture_output=True, text=True, timeout=120)
        sched.wait(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
        log.close()
    sched_out = (tmp_path / "sched.log").read_text()[-3000:]
    assert proc.returncode == 0, proc.stderr
    assert sched.returncode == 0, sched_out
    import csv

    with open(tmp_path / "out_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    ids = sorted(int(r["job_id"]) for r in rows)
    assert ids == list(range(40))  # every job once
    states = {r["job_id"]: r["final_state"] for r in rows}
    assert states["5"] == "COMPLETED_WALLTIME_REACHED"
    assert all(s == "COMPLETED_SUCCESSFULLY" for k, s in states.items() if k != "5")
    # no core ran two jobs at once
    intervals = {}
    for r in rows:
        for part in r["allocated_resources"].split():
            lo, _, hi = part.partition("-")
            for rid in range(int(lo), int(hi or lo) + 1):
                intervals.setdefault(rid, []).append((float(r["starting_time"]), float(r["finish_time"])))
    for spans in intervals.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    # the t=0 job is announced 1 µs after 0 and starts then, on both nodes' cores
    first = next(r for r in rows if r["job_id"] == "0")
    assert (first["submission_time"], first["starting_time"], first["allocated_resources"]) == (
        "0.000000", "0.000001", "0-3")
    # starts never precede submissions
    assert all(float(r["starting_time"]) >= float(r["submission_time"]) for r in rows)
