"""Data staging through SimGrid's flow model: the contract's load times (§3, §6)."""

import pytest

from engine_harness import platform_xml, run, write

GB = 1e9


def staging_scheduler(n_transfers, nb_bytes):
    """Registers `n_transfers` data_staging jobs lustre → n000_mem at t=0, all at once."""
    ids = [f"batloc-stage!stage-{i}" for i in range(n_transfers)]
    done = set()

    def sched(msg):
        out = []
        for e in msg["events"]:
            if e["type"] == "SIMULATION_BEGINS":
                storage = {r["name"]: r["id"] for r in e["data"]["storage_resources"]}
                for i, jid in enumerate(ids):
                    name = jid.split("!")[1]
                    out += [
                        {"type": "REGISTER_PROFILE", "data": {"workload_name": "batloc-stage", "profile_name": name,
                                                               "profile": {"type": "data_staging", "nb_bytes": nb_bytes,
                                                                           "from": "pfs", "to": "mem"}}},
                        {"type": "REGISTER_JOB", "data": {"job_id": jid, "job": {"id": jid, "subtime": msg["now"], "res": 2,
                                                                                 "profile": name}}},
                        {"type": "EXECUTE_JOB", "data": {
                            "job_id": jid, "alloc": f"{storage['lustre']} {storage['n000_mem']}",
                            "storage_mapping": {"pfs": storage["lustre"], "mem": storage["n000_mem"]}}},
                    ]
            elif e["type"] == "JOB_COMPLETED":
                done.add(e["data"]["job_id"])
                if done == set(ids):
                    out.append({"type": "NOTIFY", "data": {"type": "registration_finished"}})
        return out

    return sched


@pytest.mark.parametrize("sharing, n, expected", [
    ("FATPIPE", 1, 64.0),    # 6.4 GB / 0.1 GB/s
    ("SHARED", 2, 128.0),    # the node link is split between the two loads
    ("FATPIPE", 2, 64.0),    # each load gets the whole link (the paper's model)
])
def test_staging_duration_follows_link_bandwidth_and_sharing(tmp_path, sharing, n, expected):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=1, bandwidth=0.1 * GB, sharing=sharing))
    wl = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [], "profiles": {}})
    res = run(tmp_path, platform, [wl], staging_scheduler(n, 6.4 * GB), args=["--enable-dynamic-jobs"])
    assert res.returncode == 0, res.stderr
    rows = res.jobs_rows()
    assert len(rows) == n
    for row in rows:
        assert row["workload_name"] == "batloc-stage"
        assert row["allocated_resources"] == "1-2"  # n000_c00(0), then storages lustre(1), n000_mem(2)
        assert float(row["execution_time"]) == pytest.approx(expected, abs=1e-3)


def test_latency_adds_to_the_load_time(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=1, bandwidth=0.1 * GB, latency="1ms"))
    wl = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [], "profiles": {}})
    res = run(tmp_path, platform, [wl], staging_scheduler(1, 6.4 * GB), args=["--enable-dynamic-jobs"])
    assert res.returncode == 0, res.stderr
    assert float(res.jobs_rows()[0]["execution_time"]) == pytest.approx(64.001, abs=1e-4)


@pytest.mark.parametrize("sharing, n, end", [("FATPIPE", 1, 64.0), ("SHARED", 2, 128.0)])
def test_a_load_ends_on_time_among_timers_that_fall_during_it(tmp_path, sharing, n, end):
    # The engine asks SimGrid about loads only at timers they could have ended by (6.4 GB at 0.1 GB/s:
    # not before 64 s); submissions during the loads, just before, at and after their end must not move it.
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=1, bandwidth=0.1 * GB, sharing=sharing))
    times = [10, 30, 63.999999, 64, 64.000001, 100, 127.999999, 128, 128.5]
    wl = write(tmp_path, "w.json", {"nb_res": 1, "profiles": {"d1": {"type": "delay", "delay": 1}}, "jobs": [
        {"id": i, "subtime": t, "res": 1, "walltime": 10, "profile": "d1"} for i, t in enumerate(times)]})
    stage = staging_scheduler(n, 6.4 * GB)

    def sched(msg):   # loads as above; every workload job rejected at once
        return stage(msg) + [{"type": "REJECT_JOB", "data": {"job_id": e["data"]["job_id"]}}
                             for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    res = run(tmp_path, platform, [wl], sched, args=["--enable-dynamic-jobs"])
    assert res.returncode == 0, res.stderr
    completed = [now for now, e in res.events("JOB_COMPLETED")]
    assert completed == [end] * n
    assert [now for now, e in res.events("JOB_SUBMITTED")] == times
    nows = [m["now"] for m in res.messages]
    assert nows == sorted(nows)


def test_killed_staging_reports_what_its_transfer_has_done(tmp_path):
    # 6.4 GB at 0.1 GB/s: 64 s; killed at 16 it has done a quarter (Batsim: 1 - the L07 task's remaining ratio)
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=1, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [], "profiles": {}})
    stage = staging_scheduler(1, 6.4 * GB)
    killed = []

    def sched(msg):
        out = stage(msg)
        for e in msg["events"]:
            if e["type"] == "SIMULATION_BEGINS":
                out.append({"type": "CALL_ME_LATER", "data": {"timestamp": 16}})
            elif e["type"] == "REQUESTED_CALL":
                out.append({"type": "KILL_JOB", "data": {"job_ids": ["batloc-stage!stage-0"]}})
            elif e["type"] == "JOB_KILLED":
                killed.append(e["data"]["job_progress"])
                out.append({"type": "NOTIFY", "data": {"type": "registration_finished"}})
        return out

    res = run(tmp_path, platform, [wl], sched, args=["--enable-dynamic-jobs"])
    assert res.returncode == 0, res.stderr
    (progress,) = killed
    assert progress == {"batloc-stage!stage-0": {"profile_name": "stage-0", "progress": 0.25}}
