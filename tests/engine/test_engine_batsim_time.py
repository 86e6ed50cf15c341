"""Batsim 4.2.1's timing on small hand-made platforms with latencies, every instant computed by hand.

The rules (engine/mailbox.py): each of Batsim's own messages goes to the server on the master host and takes
its route's latency (+ 1 byte at the route's bandwidth: 1e-12 s here); the server takes one message at a
time; the submitter says hello, sends each date's jobs, then bye; the scheduler's decisions each take their
own message, then "ready"; a job starts when its EXECUTE_JOB reaches the server and tells its end from its
first host. Master → master: 1 ms; h1 → master: 2 ms; h2 → master: 3 ms.
"""

import pytest

from engine_harness import Fifo, run, write

pytest.importorskip("zmq")

FLAT = """
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <host id="h2" speed="1Gf"/>
    <link id="lo" bandwidth="1e12Bps" latency="1ms" sharing_policy="FATPIPE"/>
    <link id="l1" bandwidth="1e12Bps" latency="2ms"/>
    <link id="l2" bandwidth="1e12Bps" latency="3ms"/>
    <link id="l12" bandwidth="1e6Bps" latency="5ms"/>
    <route src="master_host" dst="master_host"><link_ctn id="lo"/></route>
    <route src="h1" dst="master_host"><link_ctn id="l1"/></route>
    <route src="h2" dst="master_host"><link_ctn id="l2"/></route>
    <route src="h1" dst="h2"><link_ctn id="l12"/></route>
  </zone>
</platform>
"""

# Batsim's cluster512.xml, two hosts: within a cluster a host reaches another over its link up (50 us), the
# cluster's backbone (500 us) and the other's link down (50 us); between the clusters the zone route's
# backbone link (500 us) joins their routers. Master → master 600 us, a host → master 1.6 ms.
CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="c1" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="125MBps" lat="50us"
           bb_bw="2.25GBps" bb_lat="500us"/>
  <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="50us"
           bb_bw="2.25GBps" bb_lat="500us">
    <prop id="role" value="master"/>
  </cluster>
  <link id="backbone" bandwidth="1.25GBps" latency="500us"/>
  <zoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="master_hostc2_router"><link_ctn id="backbone"/></zoneRoute>
</zone>
</platform>
"""


def workload(jobs, profiles):
    return {"nb_res": 2, "jobs": jobs, "profiles": profiles}


def times(res):
    return {j: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"], r["final_state"])
            for j, r in res.jobs().items()}


def nows(res):
    return [m["now"] for m in res.messages]


def test_a_job_starts_after_batsims_messages_reach_the_master_by_name_after_a_blank_line(tmp_path):
    # The platform starts with a blank line and names its master master_host without role=master:
    # Batsim 4.2.1 reads both (its -m default). 0: hello (0 → 1 ms), the scheduler's "ready" (→ 2 ms), the
    # job's submission (→ 3 ms: message 1); then bye (→ 4 ms) before EXECUTE_JOB (→ 5 ms: the start), ready
    # (→ 6 ms: message 2, the notification). The end at 10.005 reaches the master 2 ms later.
    plat = write(tmp_path, "p.xml", FLAT)
    wl = write(tmp_path, "w.json", workload([{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                            {"d": {"type": "delay", "delay": 10}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert times(res) == {"1": (0.005, 10.005, "0", "COMPLETED_SUCCESSFULLY")}
    assert nows(res) == [0.0, 0.003, 0.006, 10.007, 10.008]


def test_events_of_one_instant_come_in_two_messages(tmp_path):
    # Job 1 (0.9990004 s) starts at 4 ms on h1 and ends at 1.0030004, 0.4 us after job 2's submission reached
    # the server (the submitter slept 1 - 0.001 s from 3 ms, sent at 1.002): both at t = 1.003000 as the
    # protocol prints it. The server tells the scheduler of job 2 at once; then takes the submitter's bye
    # (1.004), the scheduler's EXECUTE_JOB of job 2 (1.005: the start, on h2, as h1 is still busy for the
    # scheduler), job 1's end (2 ms: 1.007) and ready (1.008), which sends job 1's end after the notification.
    plat = write(tmp_path, "p.xml", FLAT)
    wl = write(tmp_path, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}, {"id": 2, "subtime": 1, "res": 1, "profile": "b"}],
        {"a": {"type": "delay", "delay": 0.9990004}, "b": {"type": "delay", "delay": 1}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert times(res) == {"1": (0.004, 1.003, "0", "COMPLETED_SUCCESSFULLY"),
                          "2": (1.005, 2.005, "1", "COMPLETED_SUCCESSFULLY")}
    assert nows(res) == [0.0, 0.003, 1.003, 1.008, 2.008, 2.009]
    kinds = [[e["type"] for e in m["events"]] for m in res.messages]
    assert kinds[2:4] == [["JOB_SUBMITTED"], ["NOTIFY", "JOB_COMPLETED"]]
    assert res.messages[3]["events"][1]["timestamp"] == 1.007


def test_a_parallel_profile_is_one_l07_task(tmp_path):
    # cpu [1, 2] Gflop on 1 Gflop/s hosts, 1 MB from h1 to h2 over 1 MB/s with 5 ms of latency: the task waits
    # the latency, then progresses at the pace of its most loaded resource (h2: 2 s); it starts at 5 ms.
    plat = write(tmp_path, "p.xml", FLAT)
    wl = write(tmp_path, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}],
        {"p": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 1e6, 0, 0]}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert times(res) == {"1": (0.005, 2.010, "0-1", "COMPLETED_SUCCESSFULLY")}


def test_a_cluster_platform_runs_with_its_routes_latencies(tmp_path):
    # As the first test with 0.6 ms for a master message: the start at 5 x 0.6 ms, the end told 1.6 ms later.
    plat = write(tmp_path, "p.xml", CLUSTER)
    wl = write(tmp_path, "w.json", workload([{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                            {"d": {"type": "delay", "delay": 10}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert times(res) == {"1": (0.003, 10.003, "0", "COMPLETED_SUCCESSFULLY")}
    assert nows(res) == [0.0, 0.0018, 0.0036, 10.0046, 10.0052]


def test_a_kill_of_a_job_whose_end_is_still_on_its_way_is_accepted(tmp_path):
    # As the split above: when told of job 2 (1.003), the scheduler kills job 1, which has just ended but whose
    # end had not reached the server; the kill reaches it after the end (1.008), before the scheduler is told:
    # Batsim kills nothing, JOB_KILLED names it, and its end (COMPLETED_SUCCESSFULLY) comes as usual.
    plat = write(tmp_path, "p.xml", FLAT)
    wl = write(tmp_path, "w.json", workload(
        [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}, {"id": 2, "subtime": 1, "res": 1, "profile": "b"}],
        {"a": {"type": "delay", "delay": 0.9990004}, "b": {"type": "delay", "delay": 1}}))
    fifo = Fifo()

    def sched(msg):
        out = fifo(msg)
        if any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!2" for e in msg["events"]):
            out.append({"type": "KILL_JOB", "data": {"job_ids": ["w0!1"]}})
        return out

    res = run(tmp_path, plat, [wl], sched)
    assert res.returncode == 0, res.stderr
    assert times(res)["1"] == (0.004, 1.003, "0", "COMPLETED_SUCCESSFULLY")
    assert [m["now"] for m in res.messages if any(e["type"] == "JOB_KILLED" for e in m["events"])] == [1.01]
    assert [e["data"]["job_ids"] for _, e in res.events("JOB_KILLED")] == [["w0!1"]]
    assert [e["data"]["job_state"] for _, e in res.events("JOB_COMPLETED")] == ["COMPLETED_SUCCESSFULLY"] * 2


def test_a_kill_of_a_job_the_scheduler_was_told_ended_is_refused_as_batsim_aborts(tmp_path, platform):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})
    fifo = Fifo()

    def sched(msg):
        out = fifo(msg)
        if any(e["type"] == "JOB_COMPLETED" for e in msg["events"]):
            out.append({"type": "KILL_JOB", "data": {"job_ids": ["w0!1"]}})
        return out

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 1
    assert ("KILL_JOB at t=6.000000: job 'w0!1' ended and the scheduler was already told so; Batsim 4.2.1 has "
            "deleted it by then and aborts") in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_batsims_master_host_and_mmax_options(tmp_path):
    # -m names the master (here "boss", without role), --mmax keeps the first compute hosts by name
    plat = write(tmp_path, "p.xml", FLAT.replace("master_host", "boss"))
    wl = write(tmp_path, "w.json", workload([{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                            {"d": {"type": "delay", "delay": 10}}))
    res = run(tmp_path, plat, [wl], Fifo(), args=["-m", "boss", "--mmax", "1"])
    assert res.returncode == 0, res.stderr
    begins = res.messages[0]["events"][0]["data"]
    assert [r["name"] for r in begins["compute_resources"]] == ["h1"]
    assert times(res) == {"1": (0.005, 10.005, "0", "COMPLETED_SUCCESSFULLY")}
    res = run(tmp_path, plat, [wl], Fifo(), prefix_name="again")
    assert res.returncode == 1 and "no master host: no host has the property role=master and none is named " \
        "'master_host'" in res.stderr
