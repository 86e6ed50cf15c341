"""Batsim 4.2.1's timing on small hand-made platforms with latencies, and on batloc's own layout, every instant
computed by hand.

The rules (engine/mailbox.py): each of Batsim's own messages goes to the server on the master host and takes
its route's latency (+ 1 byte at the route's bandwidth: 1e-12 s here); the server takes one message at a
time; the submitter says hello, sends each date's jobs, then bye; the scheduler's decisions each take their
own message, then "ready"; a job starts when its EXECUTE_JOB reaches the server and tells its end from its
first host. Master → master: 1 ms; h1 → master: 2 ms; h2 → master: 3 ms.
"""

import pytest

from engine_harness import Fifo, platform_xml, run, write

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


def test_times_past_2_32_s_follow_simgrids_doubles(tmp_path):
    # Batsim's test_long_workload.json at 1e17 s, where doubles are 16 apart: every message's milliseconds are
    # lost in the sums (the submitter's sleep from 1 ms to 1e17 ends at 1e17, so do its message and the
    # decision's), a 20.2 s delay ends 16 s later and a 5 s one at once; one warning says so
    plat = write(tmp_path, "p.xml", FLAT)
    wl = write(tmp_path, "w.json", workload(
        [{"id": 2, "subtime": 1e17, "res": 1, "profile": "d20", "walltime": 30},
         {"id": 3, "subtime": 1e17, "res": 1, "profile": "d5"}],
        {"d20": {"type": "delay", "delay": 20.2}, "d5": {"type": "delay", "delay": 5}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert times(res) == {"2": (1e17, 1e17 + 16, "0", "COMPLETED_SUCCESSFULLY"),
                          "3": (1e17, 1e17, "1", "COMPLETED_SUCCESSFULLY")}
    assert res.jobs()["2"]["finish_time"] == "100000000000000016.000000"
    assert res.stderr.strip().splitlines() == [
        "batloc-batsim: warning: the simulation passes 2^32 s (about 136 years) at t=100000000000000000.000000: "
        "times past it are not microsecond-exact in the outputs (a double's spacing there exceeds 1 µs), as on Batsim"]


NO_NET = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <host id="h2" speed="1Gf"/>
  </zone>
</platform>
"""


def test_a_platform_without_network_still_takes_messages_one_at_a_time(tmp_path):
    # Batsim's energy_platform_homogeneous_no_net_*: no link, so every message takes 0 s; still, at t = 11 the
    # submitter (its sleep began before job 1's) puts job 2 before job 1's end is put, and the server takes
    # them in that order: the scheduler reads the submission first (pybatsim's schedFcfs then places job 2 on
    # h2 before it hears that h1 is free, as on real Batsim 4.2.1; the instant mode told the end first).
    # Job 3's subtime reaches the scheduler as Batsim's writer prints it ("%6f": 12.000000), not after the
    # clock (12.000000 too): pybatsim's schedFcfs compares them, and started job 3 at 16 when it was later.
    plat = write(tmp_path, "p.xml", NO_NET)
    wl = write(tmp_path, "w.json", workload(
        [{"id": 1, "subtime": 1, "res": 1, "profile": "d10"}, {"id": 2, "subtime": 11, "res": 1, "profile": "d5"},
         {"id": 3, "subtime": 12.0000004, "res": 1, "profile": "d5"}],
        {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5}}))
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert [(m["now"], [e["type"] for e in m["events"]]) for m in res.messages][2] == (
        11.0, ["JOB_SUBMITTED", "JOB_COMPLETED"])
    assert [(now, e["data"]["job"]["subtime"]) for now, e in res.events("JOB_SUBMITTED")] == [
        (1, 1), (11, 11), (12, 12.0)]
    assert times(res) == {"1": (1, 11, "0", "COMPLETED_SUCCESSFULLY"), "2": (11, 16, "0", "COMPLETED_SUCCESSFULLY"),
                          "3": (12, 17, "1", "COMPLETED_SUCCESSFULLY")}


class RejectOthers(Fifo):
    """Fifo for jobs 1 and 2; every other job is rejected, its REJECT_JOB before the answer's other decisions."""

    def __call__(self, msg):
        others = [e for e in msg["events"] if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] not in ("w0!1", "w0!2")]
        kept = [e for e in msg["events"] if e not in others]
        return [{"type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}} for e in others] + \
            super().__call__({"now": msg["now"], "events": kept})


@pytest.mark.parametrize("rejected", [0, 12])
def test_on_batlocs_layout_a_job_end_and_a_submission_of_one_instant_split_as_on_batsim(tmp_path, rejected):
    # batloc's layout (contract §6): a job's end takes 1e-12 s to reach the server over master_link, every other
    # Batsim message 1e-10 s over the master's loopback (10 GB/s). Job 1 (2 cores, 9 s) is submitted at 1, with
    # `rejected` others. The submitter, awake at 1, sends them in one message, taken at 1 + 1e-10, then sleeps 9 s:
    # it wakes at 10 + 1e-10 to send job 2. The scheduler's answer comes one decision a message: the rejections
    # first, then job 1's EXECUTE_JOB, taken at 1 + (2 + rejected) x 1e-10, so job 1 ends 9 s later.
    # - No rejection: job 1 ends 1e-10 s after the submitter wakes, within SimGrid's 1 ns: both sleeps end in one
    #   step, the submitter's first (it began first); the submission and job 1's end are in the mailbox together
    #   and Batsim tells both at once, with the bye: job 2 takes cores 0-1.
    # - 12 rejections: job 1 ends 1.3 ns after the submitter wakes, after the submission arrived (at 10 + 2e-10):
    #   the server tells JOB_SUBMITTED alone, the scheduler starts job 2 on cores 2-3, the only ones it knows free,
    #   then hears of the bye and of job 1's end, each in its own message of that instant.
    # Checked against real Batsim 4.2.1 (same messages, same jobs.csv times and allocations). The instant mode
    # tells all three in one message either way.
    plat = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    jobs = [{"id": 1, "subtime": 1, "res": 2, "profile": "a"}, {"id": 2, "subtime": 10, "res": 2, "profile": "b"}]
    jobs += [{"id": i, "subtime": 1, "res": 1, "profile": "b"} for i in range(3, 3 + rejected)]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": {"a": {"type": "delay", "delay": 9},
                                                                           "b": {"type": "delay", "delay": 5}}})
    res = run(tmp_path, plat, [wl], RejectOthers())
    assert res.returncode == 0, res.stderr
    at_10 = [[(e["type"], e["data"].get("job_id")) for e in m["events"]] for m in res.messages if m["now"] == 10.0]
    if rejected:
        assert at_10 == [[("JOB_SUBMITTED", "w0!2")], [("NOTIFY", None)], [("JOB_COMPLETED", "w0!1")]]
    else:
        assert at_10 == [[("JOB_SUBMITTED", "w0!2"), ("JOB_COMPLETED", "w0!1"), ("NOTIFY", None)]]
    jobs = res.jobs()
    assert sum(r["final_state"] == "REJECTED" for r in jobs.values()) == rejected
    ran = {k: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"], r["final_state"])
           for k, r in jobs.items() if k in ("1", "2")}
    assert ran == {"1": (1.0, 10.0, "0-1", "COMPLETED_SUCCESSFULLY"),
                   "2": (10.0, 15.0, "2-3" if rejected else "0-1", "COMPLETED_SUCCESSFULLY")}
    res = run(tmp_path, plat, [wl], RejectOthers(), args=["--instant"], prefix_name="instant")
    assert res.returncode == 0, res.stderr
    assert res.jobs()["2"]["allocated_resources"] == "0-1"
    assert [len(m["events"]) for m in res.messages if m["now"] == 10.0][0] == 3


class CallMeLaterOnce(Fifo):
    """Fifo, and one CALL_ME_LATER at `at` with the answer to the first submission."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def __call__(self, msg):
        out = super().__call__(msg)
        if self.at is not None and any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            out.append({"type": "CALL_ME_LATER", "data": {"timestamp": self.at}})
            self.at = None
        return out


def test_a_decisions_sleep_worn_below_1_ns_by_a_message_ends_there_and_is_not_slept_again(tmp_path):
    # batloc's layout: Batsim's messages take 1e-10 s over the master's loopback, a job's end 1e-12 s. The
    # submitter wakes at 1 and its message (job 1) is taken at 1 + 1e-10; it then sleeps 9 s, to 10 + 1e-10.
    # The answer: job 1 (9 s + 0.5 ns) taken at 1 + 2e-10, so it ends at 10 + 0.7 ns; CALL_ME_LATER at
    # 10 - 0.95 ns, taken at 1 + 3e-10; ready.
    # At 10 - 0.95 ns the waiter wakes; WAITED reaches the server at 10 - 0.85 ns, a step that leaves the
    # submitter's sleep 0.95 ns, under SimGrid's 1 ns precision: it wakes there too and puts job 2 after the
    # server's check, which told REQUESTED_CALL (now 10.000000). The request-reply actor sleeps until the
    # answer's now, 10.0: 0.85 ns, worn to 0.75 ns by the submission's 1e-10 s step, so that sleep ends at
    # 10 - 0.75 ns with the submission's arrival. Batsim's send_message_at_time sleeps once: "ready" leaves
    # then, reaches the server at 10 - 0.65 ns, which tells JOB_SUBMITTED alone; the next answer's sleep
    # ends at 10.0, the step at which job 1 ends (0.7 ns left): JOB_COMPLETED comes in a message of its own.
    # Sleeping again until 10.0 (as the engine did) took "ready" there, after job 1's end: one message of both.
    # Checked against real Batsim 4.2.1 (its clock steps, through SimGrid's on_time_advance, equal).
    plat = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=1))
    jobs = [{"id": 1, "subtime": 1, "res": 2, "profile": "a"}, {"id": 2, "subtime": 10, "res": 1, "profile": "b"},
            {"id": 3, "subtime": 20, "res": 1, "profile": "b"}]
    profiles = {"a": {"type": "delay", "delay": 9.0000000005}, "b": {"type": "delay", "delay": 5}}
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": jobs, "profiles": profiles})
    res = run(tmp_path, plat, [wl], CallMeLaterOnce(10 - 0.95e-9))
    assert res.returncode == 0, res.stderr
    at_10 = [[(e["type"], e["data"].get("job_id")) for e in m["events"]] for m in res.messages if m["now"] == 10.0]
    assert at_10 == [[("REQUESTED_CALL", None)], [("JOB_SUBMITTED", "w0!2")], [("JOB_COMPLETED", "w0!1")]]
    assert times(res) == {"1": (1.0, 10.0, "0-1", "COMPLETED_SUCCESSFULLY"),
                          "2": (10.0, 15.0, "0", "COMPLETED_SUCCESSFULLY"),
                          "3": (20.0, 25.0, "0", "COMPLETED_SUCCESSFULLY")}
