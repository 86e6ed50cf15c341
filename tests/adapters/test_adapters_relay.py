"""The proxy's protocol rules on plain messages (no sockets): 2 nodes x 2 cores, 1 GB/s per node.

Resource ids in the engine: lustre 0, n000 cores 1 2, n000_mem 3, n001 cores 4 5,
n001_mem 6 (not Batsim 4.2's order, so that the proxy's translation shows): the
wrapped scheduler sees the cores alone, as 0 1 (n000) and 2 3 (n001). Where a test
lists every event, the walltime rule is off (its window-end calls would join the
list): test_adapters_window_ends.py tests it.
"""


import pytest

from batloc.adapters.errors import ProxyError
from batloc.adapters.relay import Relay


def begins(dynamic=True, memory=10e9):
    cores = [{"id": i, "name": f"n00{n}_c0{c}", "state": "idle", "properties": {"node": f"n00{n}"}}
             for n, (i, c) in [(0, (1, 0)), (0, (2, 1)), (1, (4, 0)), (1, (5, 1))]]
    storage = [{"id": 0, "name": "lustre", "state": "idle", "properties": {"role": "storage"}}] + [
        {"id": mid, "name": f"n00{n}_mem", "state": "idle",
         "properties": {"role": "storage", "node": f"n00{n}", "memory_bytes": str(int(memory)), "bandwidth": "1000000000"}}
        for n, mid in [(0, 3), (1, 6)]]
    config = {"dynamic-jobs-enabled": dynamic, "dynamic-jobs-acknowledged": False,
              "profiles-forwarded-on-submission": False, "forward-unknown-events": False}
    return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": 7, "nb_compute_resources": 4, "nb_storage_resources": 3, "config": config,
        "compute_resources": cores, "storage_resources": storage, "workloads": {}, "profiles": {}}}]}


def ev(now, etype, **data):
    return {"timestamp": now, "type": etype, "data": data}


def msg(now, *events):
    return {"now": now, "events": list(events)}


def submitted(now, n, file="A", size=2e9):
    job = {"id": f"w0!{n}", "subtime": now, "res": 1, "walltime": 100, "profile": "d5"}
    if file:
        job.update(input_file=file, input_size=size)
    return ev(now, "JOB_SUBMITTED", job_id=f"w0!{n}", job=job)


def execute(now, n, alloc):
    return ev(now, "EXECUTE_JOB", job_id=f"w0!{n}", alloc=alloc)


def started(relay):
    relay.from_engine(begins())
    relay.to_engine(msg(0.0))
    return relay


def types(reply):
    return [(e["type"], e["data"].get("job_id")) for e in reply["events"]]


def test_config_rewritten_unknown_events_passed_and_staging_only_instants_answered_alone():
    relay = Relay(walltime_includes_load=False)
    fwd = relay.from_engine(begins())
    cfg = fwd["events"][0]["data"]["config"]
    assert cfg["dynamic-jobs-enabled"] is False and cfg["dynamic-jobs-acknowledged"] is False
    assert relay.to_engine(msg(0.0)) == msg(0.0)

    # an event the proxy does not know goes through both ways, untouched
    odd = ev(1.0, "SOMETHING_NEW", x=1)
    m = msg(1.0, odd, submitted(1.0, 1))
    assert relay.from_engine(m) is m
    reply = relay.to_engine(msg(1.0, ev(1.0, "SOMETHING_ELSE", y=2), execute(1.0, 1, "0")))
    # miss: the staging is registered and executed, the job is held
    assert types(reply) == [("SOMETHING_ELSE", None), ("REGISTER_PROFILE", None),
                            ("REGISTER_JOB", "batloc-stage!stage-w0-1-n000"),
                            ("EXECUTE_JOB", "batloc-stage!stage-w0-1-n000")]
    prof = reply["events"][1]["data"]
    assert prof == {"workload_name": "batloc-stage", "profile_name": "stage-w0-1-n000",
                    "profile": {"type": "data_staging", "nb_bytes": 2e9, "from": "pfs", "to": "mem"}}
    # Batsim 4.2.1 aborts on a registered job without a subtime (jobs.cpp: "has no 'subtime' field")
    assert reply["events"][2]["data"]["job"] == {"id": "batloc-stage!stage-w0-1-n000", "subtime": 1.0, "res": 2,
                                                 "walltime": -1, "profile": "stage-w0-1-n000"}
    assert reply["events"][3]["data"]["storage_mapping"] == {"pfs": 0, "mem": 3}
    assert reply["events"][3]["data"]["alloc"] == "0 3"

    # t=2: the same file on the same node shares the load; on the other node it is a load of its own
    relay.from_engine(msg(2.0, submitted(2.0, 2), submitted(2.0, 3)))
    reply = relay.to_engine(msg(2.0, execute(2.0, 2, "1"), execute(2.0, 3, "2")))
    assert types(reply) == [("REGISTER_PROFILE", None), ("REGISTER_JOB", "batloc-stage!stage-w0-3-n001"),
                            ("EXECUTE_JOB", "batloc-stage!stage-w0-3-n001")]

    # t=3 (1 + 2 GB / 1 GB/s): only the staging ended: the wrapped scheduler is not woken,
    # and both jobs waiting for that load go
    assert relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                         job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3"))) is None
    assert types(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1"), ("EXECUTE_JOB", "w0!2")]


def test_killing_a_held_job_rejects_it_in_the_engine_and_reports_the_kill_itself():
    relay = started(Relay())
    relay.from_engine(msg(1.0, submitted(1.0, 1), submitted(1.0, 2, file=None),
                          ev(1.0, "NOTIFY", type="no_more_static_job_to_submit")))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1")))
    relay.from_engine(msg(1.5, ev(1.5, "REQUESTED_CALL")))
    reply = relay.to_engine(msg(1.5, ev(1.5, "KILL_JOB", job_ids=["w0!1", "w0!2"])))
    # job 1 was never started in the engine, which (as Batsim 4.2.1) can neither kill nor "complete" it:
    # rejected there; job 2 ran and is killed there; the proxy tells of job 1's kill 1 us later
    assert types(reply) == [("REJECT_JOB", "w0!1"), ("CALL_ME_LATER", None), ("KILL_JOB", None)]
    assert reply["events"][1]["data"] == {"timestamp": 1.500001}
    assert reply["events"][2]["data"]["job_ids"] == ["w0!2"]
    fwd = relay.from_engine(msg(1.5, ev(1.5, "JOB_KILLED", job_ids=["w0!2"], job_progress={})))
    assert fwd["events"][0]["data"]["job_ids"] == ["w0!2"]
    assert types(relay.to_engine(msg(1.5))) == []     # the staging is still loading
    shown = relay.from_engine(msg(1.500001, ev(1.500001, "REQUESTED_CALL")))
    assert [(e["type"], e["data"]) for e in shown["events"]] == [
        ("JOB_KILLED", {"job_ids": ["w0!1"], "job_progress": {"w0!1": {"profile_name": "d5", "progress": 0.0}}})]
    assert types(relay.to_engine(msg(1.500001))) == []
    # its load ends: nobody waits for it any more; now nothing can need a staging
    assert relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                         job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3"))) is None
    assert types(relay.to_engine(None)) == [("NOTIFY", None)]


def test_future_dated_execute_waits_for_its_own_call():
    relay = started(Relay(walltime_includes_load=False))
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None)))
    late = execute(5.0, 1, "0")
    reply = relay.to_engine(msg(1.0, late, ev(1.0, "CALL_ME_LATER", timestamp=5.0)))
    assert reply["events"] == [{"timestamp": 1.0, "type": "CALL_ME_LATER", "data": {"timestamp": 5.0}},
                               ev(1.0, "CALL_ME_LATER", timestamp=5.0)]
    # at 5 the engine sends two calls: one is the proxy's (not shown), one the scheduler's
    fwd = relay.from_engine(msg(5.0, ev(5.0, "REQUESTED_CALL"), ev(5.0, "REQUESTED_CALL")))
    assert [e["type"] for e in fwd["events"]] == ["REQUESTED_CALL"]
    assert types(relay.to_engine(msg(5.0))) == [("EXECUTE_JOB", "w0!1")]


def test_a_registering_scheduler_sees_the_real_config_and_ends_registration_through_the_proxy():
    relay = Relay(scheduler_registers=True)
    fwd = relay.from_engine(begins())
    assert fwd["events"][0]["data"]["config"]["dynamic-jobs-enabled"] is True
    relay.to_engine(msg(0.0))
    relay.from_engine(msg(1.0, submitted(1.0, 1), ev(1.0, "NOTIFY", type="no_more_static_job_to_submit")))
    finished = ev(1.0, "NOTIFY", type="registration_finished")
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), finished))
    assert ("NOTIFY", None) not in types(reply)      # a load is in flight: registration stays open
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3")))
    assert types(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1")]
    relay.from_engine(msg(8.0, ev(8.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                  return_code=0, alloc="1")))
    assert relay.to_engine(msg(8.0))["events"] == [finished | {"timestamp": 8.0}]


def test_engine_without_dynamic_jobs_is_refused():
    with pytest.raises(ProxyError, match="--enable-dynamic-jobs"):
        Relay().from_engine(begins(dynamic=False))


def test_a_kill_of_a_job_the_engine_reported_ended_is_answered_by_the_proxy():
    # Batsim 4.2.1 forgets a job once it has sent its end, and aborts on a later KILL_JOB of it
    # (jobs.cpp: "Cannot get job"): the proxy answers such a kill itself, as Batsim answers the kill
    # of a job that ended before it (JOB_KILLED without progress), 1 us later.
    relay = started(Relay())
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None), submitted(1.0, 2, file=None)))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1")))
    relay.from_engine(msg(6.0, ev(6.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                  return_code=0, alloc="1")))
    reply = relay.to_engine(msg(6.0, ev(6.0, "KILL_JOB", job_ids=["w0!1", "w0!2"])))
    assert types(reply) == [("CALL_ME_LATER", None), ("KILL_JOB", None)]
    assert reply["events"][1]["data"]["job_ids"] == ["w0!2"]       # still running: the engine kills it
    shown = relay.from_engine(msg(6.000001, ev(6.000001, "REQUESTED_CALL")))
    assert [(e["type"], e["data"]) for e in shown["events"]] == [("JOB_KILLED", {"job_ids": ["w0!1"],
                                                                                "job_progress": {}})]


def test_a_call_that_comes_later_than_asked_is_still_told_from_the_schedulers_own():
    # Batsim's waiter sleeps 10 us at least (jobs_execution.cpp), so the proxy's call asked for 1 us ahead
    # comes 10 us on; a call also comes late by Batsim's messages' time. Each REQUESTED_CALL answers the
    # earliest call asked, the proxy's or the wrapped scheduler's.
    relay = started(Relay())
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None)))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))
    relay.from_engine(msg(6.0, ev(6.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                  return_code=0, alloc="1")))
    reply = relay.to_engine(msg(6.0, ev(6.0, "KILL_JOB", job_ids=["w0!1"]), ev(6.0, "CALL_ME_LATER", timestamp=7.0)))
    assert [e["data"] for e in reply["events"]] == [{"timestamp": 6.000001}, {"timestamp": 7.0}]
    shown = relay.from_engine(msg(6.00001, ev(6.00001, "REQUESTED_CALL")))
    assert [(e["type"], e["data"]) for e in shown["events"]] == [("JOB_KILLED", {"job_ids": ["w0!1"],
                                                                                "job_progress": {}})]
    relay.to_engine(msg(6.00001))
    fwd = relay.from_engine(msg(7.0 + 1e-10, ev(7.0 + 1e-10, "REQUESTED_CALL")))
    assert [e["type"] for e in fwd["events"]] == ["REQUESTED_CALL"]


def test_a_kill_of_an_execution_dated_later_rejects_the_job_in_the_engine():
    # Executed by the scheduler for t=5, killed at 2: the engine never started it (Batsim 4.2.1 aborts on
    # the kill of a job not running): rejected there, its kill reported by the proxy, nothing executed at 5.
    relay = started(Relay())
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None)))
    relay.to_engine(msg(1.0, execute(5.0, 1, "0")))
    relay.from_engine(msg(2.0, ev(2.0, "REQUESTED_CALL")))
    reply = relay.to_engine(msg(2.0, ev(2.0, "KILL_JOB", job_ids=["w0!1"])))
    assert types(reply) == [("REJECT_JOB", "w0!1"), ("CALL_ME_LATER", None)]
    shown = relay.from_engine(msg(2.000001, ev(2.000001, "REQUESTED_CALL")))
    assert [e["type"] for e in shown["events"]] == ["JOB_KILLED"]
    relay.to_engine(msg(2.000001))
    assert relay.from_engine(msg(5.0, ev(5.0, "REQUESTED_CALL"))) is None   # the proxy's own call: nothing due
    assert types(relay.to_engine(None)) == []


@pytest.mark.parametrize("killer", ["scheduler", "window end"])
def test_a_job_killed_at_an_instant_leaves_memory_before_the_starts_of_that_instant(killer):
    # Contract §5, one instant: job 1 (file A) computes on n000 from 3; at t its kill and job 3's start
    # (file C, on n000's other core) come in one answer, the start first. Job 1 ends at t before any
    # start of t, so job 3's start (paper) evicts A, as the validator replays it.
    relay = started(Relay(walltime_includes_load=killer == "window end"))
    relay.from_engine(msg(1.0, submitted(1.0, 1), ev(1.0, "NOTIFY", type="no_more_static_job_to_submit")))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3")))
    assert types(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1")]
    t = 101.0 if killer == "window end" else 5.0     # job 1's window [1, 101)
    relay.from_engine(msg(t, submitted(t, 3, file="C"), *([ev(t, "REQUESTED_CALL")] * (killer == "window end"))))
    kill = [ev(t, "KILL_JOB", job_ids=["w0!1"])] if killer == "scheduler" else []
    reply = relay.to_engine(msg(t, execute(t, 3, "1"), *kill))
    assert ("KILL_JOB", None) in types(reply)
    assert relay.state.caches[0].status("A") == "absent" and relay.state.caches[0].status("C") == "loading"
