"""schedulers/dispatch.py: batloc's schedulers read the engine's messages through a leaner loop than pybatsim's,
and answer the same bytes. The differential check: one run in the engine's process with pybatsim's log at
warning (the quick loop, stagings registered and jobs executed by dispatch) and one at info (pybatsim's own
loop and calls, which the quick loop leaves to pybatsim whenever INFO is shown) write the same outputs, on an
input with loads, shared loads, evictions, a window kill and dynamic stagings."""

import json
import subprocess
from pathlib import Path

import pytest

from engine_harness import ENGINE, write

pytestmark = pytest.mark.needs_engine

REPO = Path(__file__).resolve().parents[2]
TWO_NODES = REPO / "tests" / "data" / "schedulers" / "two_nodes.xml"
OUTPUTS = ("jobs", "schedule", "machine_states", "decisions", "predictions")


def files_workload(n=60):
    """Jobs sharing six files on two 2-core nodes: loads, hits, evictions, and a job past its walltime."""
    jobs = []
    for i in range(n):
        delay = 5 + (i * 7) % 40
        jobs.append({"id": i, "subtime": 2 * i, "res": 1 + i % 2, "walltime": delay + 20, "profile": f"d{delay}",
                     "input_file": f"f{(i * 5) % 6}", "input_size": (1 + i % 4) * 1e10})
    jobs[7]["walltime"] = 3          # ends at its walltime (or at its window's end, still loading)
    return {"nb_res": 4, "jobs": jobs,
            "profiles": {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}}


def run(tmp_path, policy, workload, prefix, verbosity, options):
    proc = subprocess.run(ENGINE + ["-p", str(TWO_NODES), "-w", str(workload), "-e", prefix, "-q",
                                    "--enable-dynamic-jobs", "--in-process", str(REPO / "schedulers" / f"{policy}.py"),
                                    "--scheduler-verbosity", verbosity,
                                    "--scheduler-options", json.dumps({"export_prefix": prefix, **options})],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("policy,options", [("fcfs", {}), ("lea_bf", {"cache": "lru", "predictions": True})])
def test_the_quick_loop_answers_as_pybatsims_own(tmp_path, policy, options):
    wl = write(tmp_path, "w.json", files_workload())
    quick, own = str(tmp_path / "quick"), str(tmp_path / "own")
    run(tmp_path, policy, wl, quick, "warning", options)
    run(tmp_path, policy, wl, own, "info", options)
    jobs = Path(f"{quick}_jobs.csv").read_text()
    assert "stage-" in jobs and ("COMPLETED_KILLED" in jobs or "COMPLETED_WALLTIME_REACHED" in jobs)
    for name in OUTPUTS:
        assert Path(f"{quick}_{name}.csv").read_bytes() == Path(f"{own}_{name}.csv").read_bytes(), name


def test_the_allocation_text_is_procsets_own():
    import random

    from procset import ProcSet

    from batloc.schedulers.base import procset_of
    from batloc.schedulers.dispatch import alloc_text

    rng = random.Random(5)
    for _ in range(500):
        ids = [rng.randrange(40) for _ in range(rng.randrange(1, 12))]
        ours = procset_of(ids)
        assert ours == ProcSet(*ids) and alloc_text(ours) == str(ProcSet(*ids)) == str(ours)


class _Network:
    def __init__(self, msg):
        self.msg, self.sent = msg, []

    def recv(self, blocking=False):
        return self.msg

    def send(self, msg):
        self.sent.append(msg)


class _Recorder:
    """A scheduler that records the jobs each callback is given."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if name.startswith("on"):
            return lambda *args: self.calls.append((name, [[j.id for j in a] if isinstance(a, list) else a.id
                                                          for a in args]))
        raise AttributeError(name)


@pytest.mark.parametrize("level", ["WARNING", "INFO"])     # the quick loop, then pybatsim's own
def test_a_kill_of_two_jobs_one_of_which_ends_then_tells_the_one_killed(level):
    # Batsim 4.2.1 (real_batsim.py policies, FCFS on a 64-node saturated input): the scheduler killed w0!2 and
    # w0!3 at their window end; w0!3 ended in that instant, so JOB_KILLED names both and gives w0!2's progress
    # only. pybatsim 3.2.1 then failed with KeyError 'w0!3' and Batsim waited for ever.
    import logging

    from batsim.batsim import Batsim, Job

    from batloc.schedulers import dispatch

    bs = object.__new__(Batsim)
    bs.logger = logging.getLogger("batsim.batsim")
    bs.scheduler = _Recorder()
    bs.running_simulation, bs.use_storage_controller, bs.event_publisher = True, False, None
    for counter in ("nb_jobs_completed", "nb_jobs_successful", "nb_jobs_killed", "nb_jobs_timeout",
                    "nb_jobs_failed"):
        setattr(bs, counter, 0)
    bs.jobs = {jid: Job(jid, 0, 10, 1, "d", {}) for jid in ("w0!2", "w0!3")}
    bs.network = _Network({"now": 10.0, "events": [
        {"timestamp": 10.0, "type": "JOB_COMPLETED",
         "data": {"job_id": "w0!3", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "1"}},
        {"timestamp": 10.0, "type": "JOB_COMPLETED",
         "data": {"job_id": "w0!2", "job_state": "COMPLETED_KILLED", "return_code": -1, "alloc": "0"}},
        {"timestamp": 10.0, "type": "JOB_KILLED",
         "data": {"job_ids": ["w0!2", "w0!3"], "job_progress": {"w0!2": {"profile_name": "d", "progress": 0.5}}}}]})
    old = dispatch.PYBATSIM_LOG.level
    dispatch.PYBATSIM_LOG.setLevel(level)
    try:
        assert dispatch.quick_read(bs)
    finally:
        dispatch.PYBATSIM_LOG.setLevel(old)
    calls = [c for c in bs.scheduler.calls if c[0] in ("onJobCompletion", "onJobsKilled")]
    assert calls == [("onJobCompletion", ["w0!3"]), ("onJobCompletion", ["w0!2"]), ("onJobsKilled", [["w0!2"]])]
    assert bs.jobs["w0!2"].progress == {"profile_name": "d", "progress": 0.5}
    assert (bs.nb_jobs_successful, bs.nb_jobs_killed) == (1, 1)
    assert bs.network.sent == [{"now": 10.0, "events": []}]
