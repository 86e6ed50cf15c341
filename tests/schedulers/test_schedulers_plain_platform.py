"""batloc's file-aware schedulers on a plain Batsim platform: one node per host, no node memory.

Batsim's own platforms (`cluster512.xml`, `small_platform.xml`) give their compute
hosts no `node` property and have no `<node>_mem` storage nor `lustre`. Under the
stated defaults (`locality.platform_view`) each host is a node of its own with no
memory: jobs without input files run as on any platform; a job with a file stops
the run in one line naming the job and `batloc platform annotate`, every job
ending REJECTED so that the simulation ends (real Batsim would wait for ever for a
scheduler that left). Driven through the dry run.
"""

import pytest

from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.jdp_dll import Jdp_dll
from batloc.schedulers.lea_bf import Lea_bf
from batloc.schedulers.lem import Lem
from batloc.schedulers.met import Met
from batloc.schedulers.online_hps import Online_hps
from batloc.testing.dry_run import DryRun

POLICIES = [Fcfs, Lea_bf, Lem, Met, Jdp_dll, Online_hps]
# Two 1-core hosts as Batsim's platforms give them (ids in Batsim's numbering: by name), a storage of Batsim's own
COMPUTE = [{"id": 0, "name": "a0", "state": "idle", "properties": {}},
           {"id": 1, "name": "a1", "state": "idle", "properties": {}}]
STORAGE = [{"id": 2, "name": "pfs", "state": "idle", "properties": {"role": "storage"}}]


def workload(*jobs):
    profiles = {f"d{j[3]}": {"type": "delay", "delay": float(j[3])} for j in jobs}
    return {"jobs": [{"id": i, "subtime": t, "res": res, "walltime": 100, "profile": f"d{delay}", **extra}
                     for i, t, res, delay, *more in jobs for extra in (more[0] if more else {},)],
            "profiles": profiles}


@pytest.mark.parametrize("policy", POLICIES)
def test_jobs_without_files_run_one_per_host(policy, capsys):
    # J1 and J2 (1 core, 10 s) at t=1 take a0 and a1; J3 (1 core, 5 s) at t=2 waits for J1's host at 11;
    # J4 asks for 2 cores, wider than every node (a host): rejected at submission.
    run = DryRun(policy({}), COMPUTE, STORAGE, workload((1, 1, 1, 10), (2, 1, 1, 10), (3, 2, 1, 5), (4, 2, 2, 5)))
    res = run.run()
    assert sorted((r["start"], r["finish"], tuple(r["alloc"])) for r in res.values()) == [
        (1.0, 11.0, (0,)), (1.0, 11.0, (1,)), (11.0, 16.0, (0,))]
    assert run.rejected == ["w0!4"]
    err = capsys.readouterr().err
    assert "job w0!4 requests 2 cores but a job must fit on one node (largest node a0 has 1 cores): rejected" in err


@pytest.mark.parametrize("policy", POLICIES)
def test_a_job_with_a_file_stops_the_run_in_one_line_and_every_job_ends(policy, capsys):
    # J1 has no file and starts at 1; J2's file cannot be loaded anywhere: the scheduler says so once,
    # then decides nothing more: J2 and J3 (submitted later) are rejected, J1 runs to its end.
    run = DryRun(policy({}), COMPUTE, STORAGE, workload((1, 1, 1, 10), (2, 2, 1, 5, {"input_file": "F",
                                                                                   "input_size": 1e9}),
                                                         (3, 3, 1, 5)))
    res = run.run()
    assert {k: (r["start"], r["finish"]) for k, r in res.items()} == {"w0!1": (1.0, 11.0)}
    assert run.rejected == ["w0!2", "w0!3"]
    lines = [line for line in capsys.readouterr().err.splitlines() if "error" in line or "platform" in line]
    hint = "; or run the scheduler with the option ignore_files" if policy in (Fcfs, Lea_bf, Lem) else ""
    assert lines == [
        "batloc scheduler: job w0!2 has an input file (F), but the platform has no node memories (no storage host "
        "'<node>_mem' with properties memory_bytes and bandwidth, and no storage 'lustre': contract §1, §6), so no "
        "input file can be loaded; `batloc platform annotate PLATFORM -o COPY --memory SIZE --node-bw BW` writes a "
        f"copy that has them{hint}"]


def test_ignore_files_runs_them_as_jobs_without_files():
    run = DryRun(Fcfs({"ignore_files": True}), COMPUTE, STORAGE,
                 workload((1, 1, 1, 10, {"input_file": "F", "input_size": 1e9})))
    assert {k: (r["start"], r["finish"]) for k, r in run.run().items()} == {"w0!1": (1.0, 11.0)}
