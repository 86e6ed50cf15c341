"""The proxy's walltime rule and its one-node option, on plain messages (no sockets).

Platform of test_adapters_relay: 2 nodes x 2 cores, 1 GB/s per node; engine ids lustre 0,
n000 cores 1 2, n000_mem 3, n001 cores 4 5, n001_mem 6; the wrapped scheduler sees 0 1 (n000), 2 3 (n001).
Job 1 reads a 2 GB file: its load takes 2 s.
"""

from batloc.adapters.relay import Relay

from test_adapters_relay import begins, ev, execute, msg, started, submitted, types


def submit(relay, now, n, walltime, file="A", res=1):
    job = submitted(now, n, file=file)
    job["data"]["job"].update(walltime=walltime, res=res)
    relay.from_engine(msg(now, job))


def test_a_job_is_killed_at_its_schedulers_decision_plus_its_walltime_its_load_included():
    relay = started(Relay())
    submit(relay, 1.0, 1, walltime=10)
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "2")))
    # its load, and a call at 1 + 10 for the window's end
    assert types(reply)[-1] == ("CALL_ME_LATER", None) and reply["events"][-1]["data"] == {"timestamp": 11.0}
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n001",
                                  job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 6")))
    assert types(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1")]      # computing from 3 on
    # the engine would kill it at 3 + 10; the window ends at 11: the proxy's call, not shown to the scheduler
    assert relay.from_engine(msg(11.0, ev(11.0, "REQUESTED_CALL"))) is None
    reply = relay.to_engine(None)
    assert [(e["type"], e["data"]) for e in reply["events"]] == [("KILL_JOB", {"job_ids": ["w0!1"]})]
    # the scheduler, which never asked for that kill, learns of a walltime end, in its own ids
    shown = relay.from_engine(msg(11.0, ev(11.0, "JOB_KILLED", job_ids=["w0!1"], job_progress={})))
    assert [(e["type"], e["data"]["job_state"], e["data"]["alloc"]) for e in shown["events"]] == [
        ("JOB_COMPLETED", "COMPLETED_WALLTIME_REACHED", "2")]


def test_batsims_two_messages_for_a_really_killed_job_reach_the_scheduler_as_one_walltime_end():
    # Batsim 4.2.1 (server_on_killing_done): JOB_COMPLETED (COMPLETED_KILLED) first, then JOB_KILLED;
    # a stock pybatsim scheduler told of one end twice dies with a KeyError
    relay = started(Relay())
    submit(relay, 1.0, 1, walltime=10)
    relay.to_engine(msg(1.0, execute(1.0, 1, "2")))
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n001",
                                  job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 6")))
    relay.to_engine(None)
    assert relay.from_engine(msg(11.0, ev(11.0, "REQUESTED_CALL"))) is None
    assert types(relay.to_engine(None)) == [("KILL_JOB", None)]
    shown = relay.from_engine(msg(11.0, ev(11.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_KILLED",
                                           return_code=-1, alloc="4"),
                                  ev(11.0, "JOB_KILLED", job_ids=["w0!1"], job_progress={"w0!1": {}})))
    assert [(e["type"], e["data"].get("job_state"), e["data"].get("alloc")) for e in shown["events"]] == [
        ("JOB_COMPLETED", "COMPLETED_WALLTIME_REACHED", "2")]


def test_a_job_still_loading_at_its_windows_end_is_executed_and_killed_in_one_answer():
    relay = started(Relay())
    submit(relay, 1.0, 1, walltime=1.5)
    relay.to_engine(msg(1.0, execute(1.0, 1, "0")))
    assert relay.from_engine(msg(2.5, ev(2.5, "REQUESTED_CALL"))) is None
    assert types(relay.to_engine(None)) == [("EXECUTE_JOB", "w0!1"), ("KILL_JOB", None)]
    # its load ends later: nobody waits for it
    relay.from_engine(msg(2.5, ev(2.5, "JOB_KILLED", job_ids=["w0!1"], job_progress={})))
    relay.to_engine(msg(2.5))
    assert relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                         job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3"))) is None
    assert ("EXECUTE_JOB", "w0!1") not in types(relay.to_engine(None))


def test_a_job_ended_within_its_window_is_left_alone_and_the_rule_off_sets_no_timer():
    relay = started(Relay())
    submit(relay, 1.0, 1, walltime=10)
    assert types(relay.to_engine(msg(1.0, execute(1.0, 1, "0"))))[-1] == ("CALL_ME_LATER", None)
    relay.from_engine(msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="batloc-stage!stage-w0-1-n000",
                                  job_state="COMPLETED_SUCCESSFULLY", return_code=0, alloc="0 3")))
    relay.to_engine(None)
    relay.from_engine(msg(4.0, ev(4.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                  return_code=0, alloc="1")))
    relay.to_engine(msg(4.0))
    assert relay.from_engine(msg(11.0, ev(11.0, "REQUESTED_CALL"))) is None
    assert types(relay.to_engine(None)) == []

    # a job executed at once (no file to load) needs no timer: the engine's walltime is its window, as
    # batloc's own schedulers set a timer only for a job held for its file
    submit(relay, 12.0, 2, walltime=10, file=None)
    assert types(relay.to_engine(msg(12.0, execute(12.0, 2, "0")))) == [("EXECUTE_JOB", "w0!2")]

    off = started(Relay(walltime_includes_load=False))
    submit(off, 1.0, 1, walltime=10)
    assert ("CALL_ME_LATER", None) not in types(off.to_engine(msg(1.0, execute(1.0, 1, "0"))))


def test_one_node_moves_an_allocation_that_spans_nodes_onto_a_node_with_room_and_keeps_the_schedulers_ids():
    relay = started(Relay(walltime_includes_load=False, one_node=True))
    for n, res in ((1, 1), (2, 2), (3, 1)):
        submit(relay, 1.0, n, walltime=100, file=None, res=res)
    # job 1 on its id 0 (n000); job 2 on its ids 1-2, across n000 and n001: n001 has both cores free
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "1-2")))
    assert [(e["data"]["job_id"], e["data"]["alloc"]) for e in reply["events"]] == [("w0!1", "1"), ("w0!2", "4-5")]
    # its end comes back in the ids its scheduler gave it
    shown = relay.from_engine(msg(2.0, ev(2.0, "JOB_COMPLETED", job_id="w0!2", job_state="COMPLETED_SUCCESSFULLY",
                                          return_code=0, alloc="4-5")))
    assert shown["events"][0]["data"]["alloc"] == "1-2"
    # job 3 on its id 3, which now stands for the n000 core job 2 left: n000 core 2 (engine id 2)
    relay.to_engine(msg(2.0))
    relay.from_engine(msg(2.5, submitted(2.5, 4, file=None)))
    assert [e["data"]["alloc"] for e in relay.to_engine(msg(2.5, execute(2.5, 3, "3")))["events"]] == ["2"]
    assert relay.one_node.moved == 1


def test_one_node_leaves_an_allocation_no_node_can_hold_now():
    relay = started(Relay(walltime_includes_load=False, one_node=True))
    for n, res in ((1, 1), (2, 1), (3, 2)):
        submit(relay, 1.0, n, walltime=100, file=None, res=res)
    # each node has one core taken: the 2-core job spans both, as its scheduler chose
    reply = relay.to_engine(msg(1.0, execute(1.0, 1, "0"), execute(1.0, 2, "2"), execute(1.0, 3, "1 3")))
    assert [e["data"]["alloc"] for e in reply["events"]] == ["1", "4", "2 5"]
    assert relay.one_node.moved == 0
