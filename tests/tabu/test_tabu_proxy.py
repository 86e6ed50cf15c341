"""CONS + Tabu behind the staging proxy: a job still running at its window's end keeps its cores.

The proxy kills a job at the instant its scheduler executed it + its walltime (its load counts), and the
scheduler hears of that end in a later message of the same instant. CONS must not plan the next job onto
those cores meanwhile (it started one on no core at all, and crashed, on the workflow benchmark's input).

One node of two cores at 0.1 GB/s: A (2 cores, a 1 GB file: loaded [1, 11), computes from 11, walltime
20) is killed at 21 by the proxy; B (1 core, no file) is submitted at 21.
"""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

pytest.importorskip("batsim")
PROXY = [sys.executable, "-m", "batloc.adapters.cli"]
CONS = str(Path(__file__).resolve().parents[2] / "schedulers" / "cons_tabu.py")


@pytest.mark.needs_engine
def test_a_job_killed_at_its_window_end_by_the_proxy_keeps_its_cores_until_then(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2, bandwidth=1e8))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "profiles": {"d30": {"type": "delay", "delay": 30},
                                                              "d5": {"type": "delay", "delay": 5}},
                                    "jobs": [{"id": 1, "subtime": 1, "res": 2, "walltime": 20, "profile": "d30",
                                              "user": "u", "input_file": "f", "input_size": 1e9},
                                             {"id": 2, "subtime": 21, "res": 1, "walltime": 50, "profile": "d5",
                                              "user": "v"}]})
    port = free_port()
    with open(tmp_path / "proxy.log", "w") as log:
        proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{port}", "--export-prefix", str(tmp_path / "out"),
                                          "--", "pybatsim", CONS, "-v", "warning"],
                                 stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                              "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs"],
                                    capture_output=True, text=True, timeout=120)
            proxy.wait(timeout=30)
        finally:
            if proxy.poll() is None:
                proxy.kill()
    assert engine.returncode == 0, engine.stderr + (tmp_path / "proxy.log").read_text()[-2000:]
    with open(tmp_path / "out_jobs.csv") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f) if r["workload_name"] == "w0"}
    assert rows["1"]["final_state"] == "COMPLETED_KILLED" and float(rows["1"]["finish_time"]) == 21.0
    assert rows["2"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(rows["2"]["starting_time"]) == 21.0 and rows["2"]["allocated_resources"] in ("0", "1")
