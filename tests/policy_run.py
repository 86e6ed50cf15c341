"""Run a batloc scheduler file (pybatsim) against the embedded engine: the helper of every test folder
that checks a policy end to end (mark such tests ``needs_engine``, conftest.py).

As robin runs batloc policies: the scheduler binds a loopback port, the engine
connects with dynamic jobs enabled. Returns the jobs.csv rows by job id, the
scheduler's and the engine's outputs.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

from batloc.outputs import read_rows
from batloc.processes import free_port, pybatsim_command

REPO = Path(__file__).resolve().parents[1]


class Outcome:
    def __init__(self, engine, sched_out, prefix, sched_status=None):
        self.engine = engine
        self.sched_out = sched_out
        self.prefix = prefix
        self.sched_status = sched_status   # the scheduler's exit status

    @property
    def rows(self):
        return {r["job_id"]: r for r in read_rows(f"{self.prefix}_jobs.csv")[1]}

    def starts(self):
        return {k: float(r["starting_time"]) for k, r in self.rows.items() if r["starting_time"]}

    def makespan(self):
        return max(float(r["finish_time"]) for r in self.rows.values() if r["finish_time"])


def simulate(tmp_path, policy, platform, workload, options=None, check=True, engine_args=(), name="out"):
    """`policy`: a file of schedulers/ (without .py); `platform`: a path; `workload`: a dict or a path."""
    prefix = str(Path(tmp_path) / name)
    if isinstance(workload, dict):
        wl_path = Path(tmp_path) / f"{name}_w.json"
        wl_path.write_text(json.dumps(workload))
    else:
        wl_path = Path(workload)
    opts = json.dumps({"export_prefix": prefix, **(options or {})})
    log_path = Path(f"{prefix}_scheduler.log")
    for _ in range(5):
        port = free_port()
        # to a file: pybatsim logs every message, which would fill a pipe read only at the end
        with open(log_path, "w") as log:
            sched = subprocess.Popen([*pybatsim_command(), str(REPO / "schedulers" / f"{policy}.py"), "-s",
                                      f"tcp://127.0.0.1:{port}", "-o", opts], stdout=log, stderr=subprocess.STDOUT)
        time.sleep(0.8)
        if sched.poll() is not None and "Address already in use" in log_path.read_text():
            continue
        eng = subprocess.run([sys.executable, "-m", "batloc.engine", "-p", str(platform), "-w", str(wl_path),
                              "-e", prefix, "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs", "-q",
                              *engine_args], capture_output=True, text=True, timeout=600)
        try:
            sched.wait(timeout=60)
        except subprocess.TimeoutExpired:
            sched.kill()
            sched.wait()
        out = log_path.read_text()
        outcome = Outcome(eng, out, prefix, sched.returncode)
        if check:
            assert eng.returncode == 0 and sched.returncode == 0, eng.stderr + out
        return outcome
    raise RuntimeError("no free port for the scheduler")
