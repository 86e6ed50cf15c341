"""An EXECUTE_JOB the engine refuses once the job's first phase cannot start (a staging whose storage_mapping
leaves out a storage its profile names) leaves no trace of a start:
the job's jobs.csv row is SUBMITTED, without a start or an allocation, and the machine states never count it.
Before: the row said RUNNING, with the allocation of a job that never ran."""

import pytest

from engine_harness import platform_xml, run, write


def refused_staging(mapping):
    """Registers one staging job at t=0 and executes it on lustre and n000_mem with `mapping(storage ids)`,
    beside a workload job started on a core."""
    storage = {}

    def sched(msg):
        out = []
        for e in msg["events"]:
            if e["type"] == "SIMULATION_BEGINS":
                storage.update({r["name"]: r["id"] for r in e["data"]["storage_resources"]})
                out += [
                    {"type": "REGISTER_PROFILE", "data": {"workload_name": "batloc-stage", "profile_name": "s",
                                                           "profile": {"type": "data_staging", "nb_bytes": 1e9,
                                                                       "from": "pfs", "to": "mem"}}},
                    {"type": "REGISTER_JOB", "data": {"job_id": "batloc-stage!s", "job": {
                        "id": "batloc-stage!s", "subtime": msg["now"], "res": 2, "profile": "s"}}},
                ]
            elif e["type"] == "JOB_SUBMITTED":
                out += [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}},
                        {"type": "EXECUTE_JOB", "data": {"job_id": "batloc-stage!s",
                                                          "alloc": f"{storage['lustre']} {storage['n000_mem']}",
                                                          "storage_mapping": mapping(storage)}}]
        return out

    return sched


@pytest.mark.parametrize("mapping,why", [
    (lambda s: {"pfs": s["lustre"]}, "the profile uses storage 'mem' but storage_mapping does not map it"),
    (lambda s: {"mem": s["n000_mem"]}, "the profile uses storage 'pfs' but storage_mapping does not map it"),
])
def test_a_refused_start_leaves_the_job_waiting_in_its_row(tmp_path, mapping, why):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=1))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "profiles": {"d": {"type": "delay", "delay": 5}},
                                    "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}]})
    res = run(tmp_path, platform, [wl], refused_staging(mapping), args=["--enable-dynamic-jobs"])
    assert res.returncode == 1 and why in res.stderr and "batloc-stage!s" in res.stderr, res.stderr
    rows = res.jobs()
    stage, job = rows["s"], rows["1"]
    assert stage["final_state"] == "SUBMITTED" and stage["starting_time"] == "" and stage["allocated_resources"] == ""
    assert job["final_state"] == "RUNNING" and job["starting_time"] == "1.000000" and job["allocated_resources"] == "0"
    # the job that did start is counted busy from t=1; the refused staging, holding no core, changes nothing
    assert res.file("_machine_states.csv").splitlines()[1:] == ["0.000000,0,0,0,2,0", "1.000000,0,0,0,1,1"]
