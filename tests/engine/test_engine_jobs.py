"""Engine behaviour on hand-computed schedules: delays, walltimes, sequences, calls, rejects, kills."""

import pytest

from engine_harness import Fifo, run, write

pytest.importorskip("zmq")


def workload(jobs, profiles, **extra):
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles, **extra}


def job(jid, subtime, res, profile, walltime=-1, **fields):
    return {"id": jid, "subtime": subtime, "res": res, "profile": profile, "walltime": walltime, **fields}


def test_resources_are_numbered_as_batsim_and_delay_jobs_run_in_simulated_time(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload(
        [job(1, 1, 2, "d10", user="u1", input_file="f1", input_size=1.5e9, evaluated=True),
         job(2, 2, 2, "d5"), job(3, 3, 2, "d4")],
        {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5},
         "d4": {"type": "delay", "delay": 4}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    begins = res.messages[0]["events"][0]["data"]
    # Batsim 4.2: compute hosts by name, then storages by name; master skipped
    assert [(r["id"], r["name"]) for r in begins["compute_resources"]] == [
        (0, "n000_c00"), (1, "n000_c01"), (2, "n001_c00"), (3, "n001_c01")]
    assert [(r["id"], r["name"]) for r in begins["storage_resources"]] == [
        (4, "lustre"), (5, "n000_mem"), (6, "n001_mem")]
    assert begins["storage_resources"][1]["properties"]["memory_bytes"] == "128000000000"
    # custom fields reach the scheduler unchanged, id rewritten to workload!id
    submitted = [e["data"]["job"] for _, e in res.events("JOB_SUBMITTED")]
    assert submitted[0] == {"id": "w0!1", "subtime": 1, "res": 2, "profile": "d10", "walltime": -1,
                            "user": "u1", "input_file": "f1", "input_size": 1.5e9, "evaluated": True}
    rows = res.jobs_rows()
    # j1: 1→11 on 1-2; j2: 2→7 on 4-5; j3 waits for j2: 7→11 on 4-5. Rows in completion order.
    assert [(r["job_id"], r["starting_time"], r["finish_time"], r["allocated_resources"]) for r in rows] == [
        ("2", "2.000000", "7.000000", "2-3"),
        ("1", "1.000000", "11.000000", "0-1"),
        ("3", "7.000000", "11.000000", "2-3")]
    j3 = rows[2]
    assert (j3["waiting_time"], j3["turnaround_time"], j3["stretch"]) == ("4.000000", "8.000000", "2.000000")
    assert j3["final_state"] == "COMPLETED_SUCCESSFULLY" and j3["success"] == "1"
    assert j3["requested_time"] == "-1" and j3["workload_name"] == "w0"
    # Batsim quotes metadata, even empty; and prints every float with six decimals
    assert res.file("_jobs.csv").splitlines()[3] == (
        '3,w0,d4,3.000000,2,-1,1,COMPLETED_SUCCESSFULLY,7.000000,4.000000,11.000000,4.000000,8.000000,'
        '2.000000,2-3,0.000000,""')
    assert res.file("_machine_states.csv").splitlines() == [
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing",
        "0.000000,0,0,0,4,0", "1.000000,0,0,0,2,2", "2.000000,0,0,0,0,4", "11.000000,0,0,0,4,0"]
    sched = dict(zip(*[line.split(",") for line in res.file("_schedule.csv").splitlines()]))
    assert sched["makespan"] == "11.000000" and sched["nb_jobs"] == "3" and sched["nb_jobs_success"] == "3"
    # 2 cores × 10 s + 2 × 5 + 2 × 4
    assert sched["time_computing"] == "38.000000"
    # the last static submission carries the notification
    notify = [now for now, e in res.events("NOTIFY")]
    assert notify == [3.0]
    assert res.events("SIMULATION_ENDS")[0][0] == 11.0


def test_walltime_kills_a_job_at_start_plus_walltime_even_one_ending_exactly_then(tmp_path, platform):
    # Batsim 4.2.1 sleeps a delay only while it is shorter than what is left of the walltime (do_delay_task):
    # a 30 s delay under a 30 s walltime is killed at its end (measured: test_walltime.json's job 10)
    wl = write(tmp_path, "w.json", workload(
        [job(1, 1, 1, "d100", walltime=30), job(2, 1, 1, "d30", walltime=30)],
        {"d100": {"type": "delay", "delay": 100}, "d30": {"type": "delay", "delay": 30}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    jobs = res.jobs()
    assert (jobs["1"]["final_state"], jobs["1"]["finish_time"], jobs["1"]["success"]) == (
        "COMPLETED_WALLTIME_REACHED", "31.000000", "0")
    assert jobs["1"]["execution_time"] == "30.000000" and jobs["1"]["requested_time"] == "30.000000"
    assert (jobs["2"]["final_state"], jobs["2"]["finish_time"]) == ("COMPLETED_WALLTIME_REACHED", "31.000000")
    states = {e["data"]["job_id"]: e["data"]["job_state"] for _, e in res.events("JOB_COMPLETED")}
    assert states == {"w0!1": "COMPLETED_WALLTIME_REACHED", "w0!2": "COMPLETED_WALLTIME_REACHED"}


def test_sequence_repeats_its_parts_and_ret_marks_failure(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload(
        [job(1, 1, 1, "seq"), job(2, 1, 1, "bad")],
        {"a": {"type": "delay", "delay": 3}, "b": {"type": "delay", "delay": 2},
         "seq": {"type": "sequence", "seq": ["a", "b"], "repeat": 2},
         "bad": {"type": "delay", "delay": 1, "ret": 3}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    jobs = res.jobs()
    assert jobs["1"]["finish_time"] == "11.000000"  # 1 + 2 × (3 + 2)
    assert (jobs["2"]["final_state"], jobs["2"]["success"]) == ("COMPLETED_FAILED", "0")
    ret = {e["data"]["job_id"]: e["data"]["return_code"] for _, e in res.events("JOB_COMPLETED")}
    assert ret == {"w0!1": 0, "w0!2": 3}


def test_parallel_homogeneous_computes_on_every_allocated_core(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload(
        [job(1, 1, 2, "ph")], {"ph": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert res.jobs()["1"]["finish_time"] == "4.000000"  # 3 Gflop on 1 Gflop/s cores


@pytest.mark.parametrize("instant", [False, True])
def test_requested_call_arrives_at_its_time(tmp_path, platform, instant):
    wl = write(tmp_path, "w.json", workload([job(1, 100, 1, "d1")], {"d1": {"type": "delay", "delay": 1}}))
    fifo = Fifo()

    def sched(msg):
        out = fifo(msg)
        if msg["events"][0]["type"] == "SIMULATION_BEGINS":
            out.append({"type": "CALL_ME_LATER", "data": {"timestamp": 42.5}})
        return out

    res = run(tmp_path, platform, [wl], sched, args=["--instant"] if instant else [])
    assert res.returncode == 0, res.stderr
    assert [now for now, _ in res.events("REQUESTED_CALL")] == [42.5]
    if instant:   # everything of one instant in one message: the submission and the submitter's bye together
        assert [m["now"] for m in res.messages] == [0.0, 42.5, 100.0, 101.0, 101.0]
        assert [e["type"] for e in res.messages[2]["events"]] == ["JOB_SUBMITTED", "NOTIFY"]
    else:   # Batsim tells the submission at 100 before its submitter's bye, which comes in the next message
        assert [m["now"] for m in res.messages] == [0.0, 42.5, 100.0, 100.0, 101.0, 101.0]
        assert [e["type"] for e in res.messages[3]["events"]] == ["NOTIFY"]


def test_rejected_job_is_written_with_empty_times(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "d1"), job(2, 2, 1, "d1")],
                                            {"d1": {"type": "delay", "delay": 1}}))
    fifo = Fifo()

    def sched(msg):
        for e in msg["events"]:
            if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!2":
                fifo(msg)
                fifo.queue = [q for q in fifo.queue if q[0] != "w0!2"]
                return [{"type": "REJECT_JOB", "data": {"job_id": "w0!2"}}]
        return fifo(msg)

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    row = res.jobs()["2"]
    assert (row["final_state"], row["success"], row["starting_time"], row["finish_time"],
            row["allocated_resources"]) == ("REJECTED", "0", "", "", "")
    sched_csv = dict(zip(*[line.split(",") for line in res.file("_schedule.csv").splitlines()]))
    assert sched_csv["nb_jobs_rejected"] == "1" and sched_csv["nb_jobs"] == "2"


def fifo_killing_at(t, jid):
    """Fifo that asks for a call at t on the first submission and kills `jid` then."""
    fifo = Fifo()

    def sched(msg):
        out = fifo(msg)
        types = [e["type"] for e in msg["events"]]
        if "JOB_SUBMITTED" in types:
            out.append({"type": "CALL_ME_LATER", "data": {"timestamp": t}})
        if "REQUESTED_CALL" in types:
            out.append({"type": "KILL_JOB", "data": {"job_ids": [jid]}})
        if "JOB_KILLED" in types:
            fifo.alloc.clear()
        return out

    return sched


def test_killed_sequence_reports_batsims_task_tree(tmp_path, platform):
    # c = [s], s = [d4, d6] twice: d4 runs 1-5, d6 5-11, then s's third task (iteration 1, index 0: Batsim's
    # current_task_index 1 x 2 + 0) d4 11-15; killed at 13 it has done (13 - 11) / 4 of it
    profiles = {"c": {"type": "composed", "seq": ["s"]}, "s": {"type": "sequence", "seq": ["d4", "d6"], "repeat": 2},
                "d4": {"type": "delay", "delay": 4}, "d6": {"type": "delay", "delay": 6}}
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "c")], profiles))
    res = run(tmp_path, platform, [wl], fifo_killing_at(13, "w0!1"))
    assert res.returncode == 0, res.stderr
    (now, killed), = res.events("JOB_KILLED")
    tree = killed["data"]["job_progress"]["w0!1"]
    # (13 - 11 - 10^-10 s, the start decision's message) / 4, printed with six decimals as Batsim prints it
    assert tree == {"profile_name": "c", "current_task_index": 0,
                    "current_task": {"profile_name": "s", "current_task_index": 2,
                                     "current_task": {"profile_name": "d4", "progress": 0.5}}}


def test_kill_job_ends_the_job_and_reports_its_progress(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "d100")], {"d100": {"type": "delay", "delay": 100}}))
    res = run(tmp_path, platform, [wl], fifo_killing_at(11, "w0!1"))
    assert res.returncode == 0, res.stderr
    (now, killed), = res.events("JOB_KILLED")
    assert now == 11.0
    assert killed["data"]["job_ids"] == ["w0!1"]
    assert killed["data"]["job_progress"]["w0!1"]["progress"] == 0.1   # six decimals, as Batsim prints it
    assert set(killed["data"]["job_progress"]["w0!1"]) == {"profile_name", "progress"}   # Batsim 4.2.1's keys
    row = res.jobs()["1"]
    assert (row["final_state"], row["finish_time"], row["execution_time"]) == (
        "COMPLETED_KILLED", "11.000000", "10.000000")
    # as Batsim 4.2.1 (server_on_killing_done): the job's JOB_COMPLETED, then JOB_KILLED, in one message
    kill_message = next(m for m in res.messages if any(e["type"] == "JOB_KILLED" for e in m["events"]))
    assert [(e["type"], e["data"].get("job_state")) for e in kill_message["events"]] == [
        ("JOB_COMPLETED", "COMPLETED_KILLED"), ("JOB_KILLED", None)]


def _dynamic_scheduler(second_job):
    """Registers dyn!a (5 s) at t=0; if `second_job`, registers dyn!b on the same profile when a ends."""

    def sched(msg):
        out = []
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "SIMULATION_BEGINS":
                out += [{"type": "REGISTER_PROFILE", "data": {"workload_name": "dyn", "profile_name": "p5",
                                                               "profile": {"type": "delay", "delay": 5}}},
                        {"type": "REGISTER_JOB", "data": {"job_id": "dyn!a", "job": {
                            "id": "dyn!a", "subtime": msg["now"], "res": 1, "profile": "p5", "walltime": 9}}},
                        {"type": "EXECUTE_JOB", "data": {"job_id": "dyn!a", "alloc": "3"}}]
            elif t == "JOB_SUBMITTED" and d["job_id"] == "w0!1":
                out.append({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "1"}})
            elif t == "JOB_COMPLETED" and d["job_id"] == "dyn!a" and second_job:
                out += [{"type": "REGISTER_JOB", "data": {"job_id": "dyn!b", "job": {
                            "id": "dyn!b", "subtime": msg["now"], "res": 1, "profile": "p5"}}},
                        {"type": "EXECUTE_JOB", "data": {"job_id": "dyn!b", "alloc": "3"}}]
            elif t == "JOB_COMPLETED" and d["job_id"] == ("dyn!b" if second_job else "dyn!a"):
                out.append({"type": "NOTIFY", "data": {"type": "registration_finished"}})
        return out

    return sched


def test_dynamic_registration_runs_and_acknowledges_jobs(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "d1")], {"d1": {"type": "delay", "delay": 1}}))
    res = run(tmp_path, platform, [wl], _dynamic_scheduler(False),
              args=["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"])
    assert res.returncode == 0, res.stderr
    acks = [(now, e["data"]["job_id"]) for now, e in res.events("JOB_SUBMITTED")]
    assert acks == [(0.0, "dyn!a"), (1.0, "w0!1")]
    row = res.jobs()["a"]
    assert (row["workload_name"], row["starting_time"], row["finish_time"], row["requested_time"]) == (
        "dyn", "0.000000", "5.000000", "9.000000")
    assert res.events("SIMULATION_ENDS")[0][0] == 5.0


def test_dynamic_profile_is_deleted_after_its_first_job_unless_reuse_is_enabled(tmp_path, platform):
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "d1")], {"d1": {"type": "delay", "delay": 1}}))
    res = run(tmp_path, platform, [wl], _dynamic_scheduler(True), args=["--enable-dynamic-jobs"])
    assert res.returncode == 1
    assert "'p5'" in res.stderr and "--enable-profile-reuse" in res.stderr
    assert "Traceback" not in res.stderr
    res = run(tmp_path, platform, [wl], _dynamic_scheduler(True),
              args=["--enable-dynamic-jobs", "--enable-profile-reuse"], prefix_name="reuse")
    assert res.returncode == 0, res.stderr
    assert (res.jobs()["b"]["starting_time"], res.jobs()["b"]["finish_time"]) == ("5.000000", "10.000000")


def test_outputs_are_byte_identical_for_the_same_inputs(tmp_path, platform):
    jobs = [job(i, 1 + (i * 7) % 13, 1 + i % 3, f"d{1 + i % 5}") for i in range(40)]
    profiles = {f"d{k}": {"type": "delay", "delay": k * 1.5} for k in range(1, 6)}
    wl = write(tmp_path, "w.json", workload(jobs, profiles))
    a = run(tmp_path, platform, [wl], Fifo(), prefix_name="a")
    b = run(tmp_path, platform, [wl], Fifo(), prefix_name="b")
    assert a.returncode == b.returncode == 0
    for suffix in ("_jobs.csv", "_schedule.csv", "_machine_states.csv"):
        assert a.file(suffix) == b.file(suffix)
    assert len(a.jobs_rows()) == 40


def test_jobs_submitted_at_zero_are_announced_one_microsecond_later(tmp_path, platform):
    # pybatsim's stock schedulers cannot allocate at t=0 (contract §4b): the engine announces
    # t=0 submissions at the protocol's first instant after 0, with their subtime unchanged.
    wl = write(tmp_path, "w.json", workload([job(1, 0, 1, "d5"), job(2, 0, 1, "d5"), job(3, 2, 1, "d5")],
                                            {"d5": {"type": "delay", "delay": 5}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert [(now, e["type"]) for now, e in res.events()][:3] == [
        (0, "SIMULATION_BEGINS"), (1e-06, "JOB_SUBMITTED"), (1e-06, "JOB_SUBMITTED")]
    assert res.events("JOB_SUBMITTED")[0][1]["data"]["job"]["subtime"] == 0
    rows = res.jobs()
    assert [(rows[j]["submission_time"], rows[j]["starting_time"], rows[j]["waiting_time"]) for j in "123"] == [
        ("0.000000", "0.000001", "0.000001"), ("0.000000", "0.000001", "0.000001"),
        ("2.000000", "2.000000", "0.000000")]


def test_a_jobs_own_integer_beyond_64_bits_reaches_the_scheduler_unchanged(tmp_path, platform):
    # orjson cannot write such an integer: the engine writes that message with the standard library
    big = 123456789012345678901234567890
    wl = write(tmp_path, "w.json", workload([job(1, 1, 1, "d1", tag=big)], {"d1": {"type": "delay", "delay": 1}}))
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    [(_, submitted)] = res.events("JOB_SUBMITTED")
    assert submitted["data"]["job"]["tag"] == big and type(submitted["data"]["job"]["tag"]) is int
    assert res.jobs()["1"]["final_state"] == "COMPLETED_SUCCESSFULLY"
