"""The staging proxy cannot produce an impossible schedule: rules on plain messages (no sockets).

Engine ids: lustre 0, n000 cores 1 2, n000_mem 3, n001 cores 4 5, n001_mem 6 (not
Batsim 4.2's order, so that the translation shows). The wrapped scheduler sees the
cores alone: 0 1 (n000), 2 3 (n001). Each node's memory holds 3 GB: one 2 GB file
at a time; a load of 2 GB takes 2 s (1 GB/s).
"""

import csv

import pytest

from batloc.adapters.errors import ProxyError
from batloc.adapters.relay import Relay
from test_adapters_relay import begins as relay_begins

GB = 1e9


def begins(memory=3 * GB):
    return relay_begins(memory=memory)


def ev(now, etype, **data):
    return {"timestamp": now, "type": etype, "data": data}


def msg(now, *events):
    return {"now": now, "events": list(events)}


def submitted(now, n, file="A", size=2 * GB, res=1):
    job = {"id": f"w0!{n}", "subtime": now, "res": res, "walltime": 100, "profile": "d5"}
    if file:
        job.update(input_file=file, input_size=size)
    return ev(now, "JOB_SUBMITTED", job_id=f"w0!{n}", job=job)


def execute(now, n, alloc):
    return ev(now, "EXECUTE_JOB", job_id=f"w0!{n}", alloc=alloc)


def completed(now, job_id, alloc):
    return ev(now, "JOB_COMPLETED", job_id=job_id, job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc=alloc)


def sent(reply):
    """(type, job id, alloc) of every event for the engine."""
    return [(e["type"], e["data"].get("job_id"), e["data"].get("alloc")) for e in reply["events"]]


def stage(n, node):
    return f"batloc-stage!stage-w0-{n}-{node}"


@pytest.fixture
def relay(tmp_path):
    # the walltime rule off: these tests list every event, and its window-end calls would join them
    # (test_adapters_window_ends.py tests it)
    r = Relay(decisions_path=str(tmp_path / "d.csv"), walltime_includes_load=False)
    r.shown = r.from_engine(begins())
    r.to_engine(msg(0.0))
    return r


def decisions(relay, tmp_path):
    relay.state.log.close()
    with open(tmp_path / "d.csv") as f:
        return [(float(d["time"]), d["job_id"], d["node"], d["cache"], d["staging_job"]) for d in csv.DictReader(f)]


def test_the_wrapped_scheduler_sees_the_cores_alone_numbered_from_0(relay):
    data = relay.shown["events"][0]["data"]
    assert data["storage_resources"] == [] and data["nb_storage_resources"] == 0
    assert data["nb_resources"] == data["nb_compute_resources"] == 4
    assert [(r["id"], r["name"]) for r in data["compute_resources"]] == [
        (0, "n000_c00"), (1, "n000_c01"), (2, "n001_c00"), (3, "n001_c01")]


def test_ids_are_translated_both_ways(relay):
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None, res=2)))
    assert sent(relay.to_engine(msg(1.0, execute(1.0, 1, "1-2")))) == [("EXECUTE_JOB", "w0!1", "2 4")]
    fwd = relay.from_engine(msg(6.0, completed(6.0, "w0!1", "2 4")))
    assert fwd["events"][0]["data"]["alloc"] == "1-2"


@pytest.mark.parametrize("events, error", [
    # ids 4 and above were storages in the engine: the scheduler was never shown them
    ([execute(1.0, 1, "4")], "EXECUTE_JOB of w0!1 at t=1.000000: resource 4 does not exist (the wrapped "
                             "scheduler was shown the 4 compute resources 0-3 only)"),
    ([execute(1.0, 1, "0-2000000000")], "resource 2000000000 does not exist"),
    ([execute(1.0, 1, "0"), execute(1.0, 1, "1")], "executed job w0!1 twice (at t=1.000000 and again at t=1.000000)"),
    ([execute(5.0, 1, "0"), execute(1.0, 1, "1")], "executed job w0!1 twice"),   # the first one dated later
    ([ev(1.0, "EXECUTE_JOB", job_id="w0!1", alloc="0", storage_mapping={"pfs": 0})], "sent a storage_mapping"),
    ([ev(1.0, "SET_RESOURCE_STATE", resources="7", state="1")], "SET_RESOURCE_STATE at t=1.000000: resource 7"),
])
def test_decisions_the_proxy_refuses_in_one_line(relay, events, error):
    relay.from_engine(msg(1.0, submitted(1.0, 1)))
    with pytest.raises(ProxyError, match=error.replace("(", r"\(").replace(")", r"\)")):
        relay.to_engine(msg(1.0, *events))


def test_a_second_execute_after_the_job_ended_is_refused_too(relay):
    relay.from_engine(msg(1.0, submitted(1.0, 1, file=None)))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))
    relay.from_engine(msg(6.0, completed(6.0, "w0!1", "1")))
    with pytest.raises(ProxyError, match="twice"):
        relay.to_engine(msg(6.0, execute(6.0, 1, "0")))


def test_a_file_waits_for_room_and_the_wait_is_logged(relay, tmp_path):
    # 1 (A) loads on n000 at 1; 2 (B, same node) does not fit next to A in use: it waits, holding core 1
    relay.from_engine(msg(1.0, submitted(1.0, 1, "A"), submitted(1.0, 2, "B")))
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1")))
    assert sent(reply) == [("REGISTER_PROFILE", None, None), ("REGISTER_JOB", stage(1, "n000"), None),
                           ("EXECUTE_JOB", stage(1, "n000"), "0 3")]
    # 3: A staged; 1 runs. 2 still waits (A is in use)
    assert relay.from_engine(msg(3.0, completed(3.0, stage(1, "n000"), "0 3"))) is None
    assert sent(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1", "1")]
    # 8: 1 ends: A is unused, B gets its room and its load
    relay.from_engine(msg(8.0, completed(8.0, "w0!1", "1")))
    assert sent(relay.to_engine(msg(8.0))) == [("REGISTER_PROFILE", None, None),
                                               ("REGISTER_JOB", stage(2, "n000"), None),
                                               ("EXECUTE_JOB", stage(2, "n000"), "0 3")]
    relay.from_engine(msg(10.0, completed(10.0, stage(2, "n000"), "0 3")))
    assert sent(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!2", "2")]
    # the wait (1 to 8) is in the log: a `full` row at the decision, then the claim at 8
    assert decisions(relay, tmp_path) == [
        (1.0, "w0!1", "n000", "miss", stage(1, "n000")),
        (1.0, "w0!2", "n000", "full", ""),
        (8.0, "w0!2", "n000", "miss", stage(2, "n000")),
    ]


def test_first_come_first_served_per_node_and_hits_pass(relay, tmp_path):
    relay.from_engine(msg(1.0, *(submitted(1.0, n, f) for n, f in [(1, "A"), (2, "B"), (3, "C"), (4, "A")])))
    # 1 loads A on n000; 2 (B) waits for room there
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1")))
    assert [s[1] for s in sent(reply)] == [None, stage(1, "n000"), stage(1, "n000")]
    relay.from_engine(msg(2.0, completed(2.0, "w0!9", "5")))   # an unknown job ending elsewhere changes nothing
    assert sent(relay.to_engine(msg(2.0))) == []
    relay.from_engine(msg(3.0, completed(3.0, stage(1, "n000"), "0 3")))
    assert sent(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1", "1")]
    # at 8 job 1 ends: A is unused, so 2, first in line, gets n000's room; the scheduler starts 3 (C) on
    # n000's freed core, which waits behind 2, and 4 (A) on n001, where there is room: it loads at once
    relay.from_engine(msg(8.0, completed(8.0, "w0!1", "1")))
    reply = relay.to_engine(msg(8.0, execute(8.0, 3, "0"), execute(8.0, 4, "2")))
    assert [s[1] for s in sent(reply)] == [None, stage(2, "n000"), stage(2, "n000"),     # 2 first: it came first
                                           None, stage(4, "n001"), stage(4, "n001")]     # 3 waits behind 2
    assert [w.job_id for w in relay.state.waiting] == ["w0!3"]


def test_a_job_waiting_for_room_can_be_killed(relay):
    relay.from_engine(msg(1.0, submitted(1.0, 1, "A"), submitted(1.0, 2, "B"),
                          ev(1.0, "NOTIFY", type="no_more_static_job_to_submit")))
    relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1")))
    reply = relay.to_engine(msg(1.0, ev(1.0, "KILL_JOB", job_ids=["w0!2"])))
    assert [s[:2] for s in sent(reply)] == [("REJECT_JOB", "w0!2"), ("CALL_ME_LATER", None)]   # no KILL_JOB
    assert relay.state.waiting == []
    fwd = relay.from_engine(msg(1.000001, ev(1.000001, "REQUESTED_CALL")))
    assert fwd["events"][0]["data"] == {"job_ids": ["w0!2"], "job_progress": {"w0!2": {"profile_name": "d5", "progress": 0.0}}}


def test_a_job_on_two_nodes_claims_both_at_once(relay, tmp_path):
    # 1 (A) on n000 core 0; 2 (B) on cores 1 (n000) and 2 (n001): no room on n000 until 1 ends,
    # so it claims neither node before that, even though n001 is empty
    relay.from_engine(msg(1.0, submitted(1.0, 1, "A"), submitted(1.0, 2, "B", res=2)))
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1-2")))
    assert [s[1] for s in sent(reply)] == [None, stage(1, "n000"), stage(1, "n000")]
    relay.from_engine(msg(3.0, completed(3.0, stage(1, "n000"), "0 3")))
    relay.to_engine(None)
    relay.from_engine(msg(8.0, completed(8.0, "w0!1", "1")))
    assert [s[1] for s in sent(relay.to_engine(msg(8.0)))] == [None, stage(2, "n000"), stage(2, "n000"),
                                                                None, stage(2, "n001"), stage(2, "n001")]
    relay.from_engine(msg(10.0, completed(10.0, stage(2, "n000"), "0 3"), completed(10.0, stage(2, "n001"), "0 6")))
    assert sent(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!2", "2 4")]
    rows = decisions(relay, tmp_path)
    # it waited for room on n000 only; it claimed both at 8
    assert [r for r in rows if r[1] == "w0!2"] == [
        (1.0, "w0!2", "n000", "full", ""), (8.0, "w0!2", "n000", "miss", stage(2, "n000")),
        (8.0, "w0!2", "n001", "miss", stage(2, "n001"))]


@pytest.mark.parametrize("raw", [b'{"now": 0, "events": [1]}', b'{"now": "0", "events": []}',
                                 b'{"now": 0, "events": [{"type": "X", "data": 3}]}', b'[]'])
def test_an_engine_message_that_is_not_batsim_is_one_line(raw):
    from types import SimpleNamespace

    from batloc.adapters.proxy import StageProxy
    with pytest.raises(ProxyError, match="the engine sent something that is not a Batsim message"):
        StageProxy._answer(SimpleNamespace(relay=Relay()), raw)


def test_resources_without_ids_are_one_line():
    data = begins()["events"][0]["data"]
    data["compute_resources"] = [{"name": "n000_c00", "properties": {"node": "n000"}}]
    with pytest.raises(ProxyError, match="every resource needs an integer id"):
        Relay().from_engine({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]})


def test_a_plain_batsim_platform_relays_jobs_without_files_and_refuses_a_file_in_one_line():
    # Batsim's own platforms: hosts without batloc's `node`, no node memory, no lustre. Each host is a
    # node of its own; a job without a file goes through untouched, a job with one cannot be loaded anywhere.
    data = dict(begins()["events"][0]["data"], nb_resources=2, nb_compute_resources=2, nb_storage_resources=0,
                compute_resources=[{"id": 0, "name": "a0", "state": "idle", "properties": {}},
                                   {"id": 1, "name": "a1", "state": "idle", "properties": {}}],
                storage_resources=[])
    r = Relay()
    r.from_engine({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]})
    r.to_engine(msg(0.0))
    assert r.from_engine(msg(1.0, submitted(1.0, 1, file=None))) is not None
    assert sent(r.to_engine(msg(1.0, execute(1.0, 1, "1")))) == [("EXECUTE_JOB", "w0!1", "1")]
    with pytest.raises(ProxyError, match=r"^job w0!2 has an input file \(A\), but the platform has no node memories "
                                         r".*`batloc platform annotate PLATFORM -o COPY"):
        r.from_engine(msg(2.0, submitted(2.0, 2)))
