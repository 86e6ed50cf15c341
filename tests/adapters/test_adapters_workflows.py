"""The staging proxy registers a workflow's dependent jobs (contract §2b), on plain messages.

The setting of ``test_adapters_relay.py``: engine ids lustre 0, n000 cores 1 2 and memory 3,
n001 cores 4 5 and memory 6; the wrapped scheduler sees the cores as 0 1 (n000), 2 3 (n001);
1 GB/s per node. Workload: A (reads X, 2 GB; writes oA, 1 GB) -> B (reads oA and Y, 3 GB) -> C.
"""

import json

from test_adapters_relay import begins, ev, execute, msg, submitted, types

from batloc.adapters.relay import Relay

GB = 1e9


def workload(tmp_path):
    doc = {"nb_res": 4, "profiles": {"d5": {"type": "delay", "delay": 5}},
           "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d5", "input_file": "X",
                     "input_size": 2 * GB, "outputs": [{"file": "oA", "size": 1 * GB}]}],
           "dependent_jobs": [
               {"id": 2, "subtime": 0, "res": 1, "walltime": 100, "profile": "d5", "parents": [1],
                "inputs": [{"file": "oA", "size": 1 * GB}, {"file": "Y", "size": 3 * GB}]},
               {"id": 3, "subtime": 0, "res": 1, "walltime": 100, "profile": "d5", "parents": [2]}]}
    path = tmp_path / "wl.json"
    path.write_text(json.dumps(doc))
    return str(path)


def started(tmp_path, **kw):
    relay = Relay(walltime_includes_load=False, **kw)
    first = begins()
    first["events"][0]["data"]["workloads"] = {"w0": workload(tmp_path)}
    relay.from_engine(first)
    relay.to_engine(msg(0.0))
    job = {"id": "w0!1", "subtime": 0, "res": 1, "walltime": 100, "profile": "d5", "input_file": "X",
           "input_size": 2 * GB, "outputs": [{"file": "oA", "size": 1 * GB}]}
    relay.from_engine(msg(1.0, ev(1.0, "JOB_SUBMITTED", job_id="w0!1", job=job)))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))            # A on n000: loads X [1, 3)
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", alloc="0 3")))
    relay.to_engine(None)                                       # A executed, computes [3, 8)
    return relay


def test_a_dependent_is_registered_in_the_engine_and_submitted_to_the_scheduler_at_its_parents_end(tmp_path):
    relay = started(tmp_path)
    fwd = relay.from_engine(msg(8.0, ev(8.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                        alloc="1")))
    assert [e["type"] for e in fwd["events"]] == ["JOB_COMPLETED", "JOB_SUBMITTED"]
    sub = fwd["events"][1]["data"]
    assert sub["job_id"] == "w0!2" and sub["job"]["profile"] == "d5@2" and sub["job"]["subtime"] == 8.0
    assert sub["profile"] == {"type": "delay", "delay": 5}
    # B goes to n000, where oA is (A's output): only Y is loaded, by one staging of its 3 GB
    reply = relay.to_engine(msg(8.0, execute(8.0, 2, "0")))
    assert types(reply)[:2] == [("REGISTER_PROFILE", None), ("REGISTER_JOB", "w0!2")]
    assert types(reply)[2:] == [("REGISTER_PROFILE", None), ("REGISTER_JOB", "batloc-stage!stage-w0-2-n000"),
                                ("EXECUTE_JOB", "batloc-stage!stage-w0-2-n000")]
    assert reply["events"][2]["data"]["profile"]["nb_bytes"] == 3 * GB
    assert reply["events"][1]["data"]["job"] == {"id": "w0!2", "res": 1, "walltime": 100, "profile": "d5@2",
                                                 "subtime": 8.0}
    assert not any(e["type"] == "NOTIFY" for e in reply["events"])   # C still to come


def test_the_descendants_of_a_failed_job_are_registered_and_rejected_unseen(tmp_path):
    relay = started(tmp_path)
    fwd = relay.from_engine(msg(8.0, ev(8.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_FAILED",
                                        alloc="1")))
    assert [e["type"] for e in fwd["events"]] == ["JOB_COMPLETED"]
    reply = relay.to_engine(msg(8.0))
    assert types(reply) == [("REGISTER_PROFILE", None), ("REGISTER_JOB", "w0!2"), ("REJECT_JOB", "w0!2"),
                            ("REGISTER_PROFILE", None), ("REGISTER_JOB", "w0!3"), ("REJECT_JOB", "w0!3")]
    relay.from_engine(msg(9.0, ev(9.0, "NOTIFY", type="no_more_static_job_to_submit")))
    assert types(relay.to_engine(msg(9.0))) == [("NOTIFY", None)]     # nothing left: registration ends


def test_with_scheduler_registers_the_dependents_are_the_schedulers(tmp_path):
    relay = started(tmp_path, scheduler_registers=True)
    fwd = relay.from_engine(msg(8.0, ev(8.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                        alloc="1")))
    assert [e["type"] for e in fwd["events"]] == ["JOB_COMPLETED"]
    assert relay.to_engine(msg(8.0))["events"] == []


def test_a_hit_on_an_unused_output_needs_room_as_a_load_does(tmp_path):
    # n000's memory holds 5 GB; D keeps Z (1.5 GB) in use there. Once A ended, B's 3 GB load of Y alone would
    # fit (1.5 + 3), but its start also holds oA (1 GB, A's output, resident and unused): 5.5 GB. B waits for
    # room, loading nothing; the validator saw such a start as "memory over capacity" (stock schedFcfs).
    relay = Relay(walltime_includes_load=False)
    first = begins(memory=5 * GB)
    first["events"][0]["data"]["workloads"] = {"w0": workload(tmp_path)}
    relay.from_engine(first)
    relay.to_engine(msg(0.0))
    job = {"id": "w0!1", "subtime": 0, "res": 1, "walltime": 100, "profile": "d5", "input_file": "X",
           "input_size": 2 * GB, "outputs": [{"file": "oA", "size": 1 * GB}]}
    relay.from_engine(msg(1.0, ev(1.0, "JOB_SUBMITTED", job_id="w0!1", job=job)))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", alloc="0 3"), submitted(3.0, 9, "Z", 1.5 * GB)))
    relay.to_engine(msg(3.0, execute(3.0, 9, "1")))             # D on n000 too: loads Z [3, 4.5)
    relay.from_engine(msg(4.5, ev(4.5, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-9-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", alloc="0 3")))
    relay.to_engine(None)
    relay.from_engine(msg(8.0, ev(8.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                  alloc="1")))
    reply = relay.to_engine(msg(8.0, execute(8.0, 2, "0")))
    assert types(reply) == [("REGISTER_PROFILE", None), ("REGISTER_JOB", "w0!2")]   # registered, held back
    assert relay.state.is_held("w0!2") and relay.state.caches[0].used_bytes() <= 5 * GB
