"""Every number and field that enters the engine is checked: one line naming file/job/event and field.

Non-finite numbers matter most: NaN compares false with everything, so a NaN
delay or timestamp would freeze the engine's clock (it used to spin forever).
"""

import json
import os
import subprocess
import time

import pytest

from engine_harness import ENGINE, Fifo, platform_xml, run, write

NAN, INF = float("nan"), float("inf")


def workload(job=None, profile=None, profiles=None):
    j = {"id": 1, "subtime": 1, "res": 1, "profile": "d", "walltime": 10, **(job or {})}
    return {"nb_res": 4, "jobs": [j], "profiles": profiles or {"d": {"type": "delay", "delay": 5, **(profile or {})}}}


def engine(tmp_path, platform, wl, timeout=30):
    path = write(tmp_path, "w.json", json.dumps(wl))   # json writes NaN and Infinity as such
    return subprocess.run(ENGINE + ["-p", platform, "-w", path, "-e", str(tmp_path / "o"),
                                    "-s", "tcp://127.0.0.1:9", "--ready-timeout", "1"],
                          capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(proc, *fragments):
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


@pytest.mark.parametrize("wl, fragments", [
    (workload({"subtime": NAN}), ["job '1'", "subtime must be a finite number, got nan"]),
    (workload({"subtime": INF}), ["job '1'", "subtime must be a finite number, got inf"]),
    (workload({"subtime": "1"}), ["job '1'", "subtime must be a number, got '1'"]),
    (workload({"subtime": 10 ** 400}), ["job '1'", "subtime must be a finite number, got 1000", "..."]),
    (workload({"walltime": NAN}), ["job '1'", "walltime must be a finite number > 0 (or -1 for none), got nan"]),
    (workload({"walltime": -INF}), ["job '1'", "walltime must be", "got -inf"]),
    (workload({"walltime": [10]}), ["job '1'", "walltime must be", "got [10]"]),
    (workload({"res": 1.0}), ["job '1'", "'res' must be an integer, got 1.0"]),
    (workload({"res": True}), ["job '1'", "'res' must be an integer, got True"]),
    (workload({"res": 0}), ["job '1'", "'res' must be >= 1, got 0"]),
    (workload({"profile": ["d"]}), ["job '1'", "profile ['d'] is not defined"]),
    (workload({"id": {"n": 1}}), ["job #0", "'id' must be a string or an integer"]),
    (workload({"input_size": NAN}), ["job '1'", "input_size must be a finite number"]),
    (workload({"tags": {"size": [1, INF]}}), ["job '1'", "tags.size[1] must be a finite number"]),
    (workload(profile={"delay": NAN}), ["profile 'd'", "delay must be a finite number, got nan"]),
    (workload(profile={"delay": INF}), ["profile 'd'", "delay must be a finite number, got inf"]),
    (workload(profile={"delay": -1}), ["profile 'd'", "delay must be >= 0, got -1"]),
    (workload(profile={"delay": 0}), ["profile 'd'", "delay must be > 0 (Batsim 4.2.1 refuses a delay of 0 s"]),
    (workload(profile={"delay": "5"}), ["profile 'd'", "delay must be a number, got '5'"]),
    (workload(profile={"ret": 0.5}), ["profile 'd'", "ret (the return code) must be an integer"]),
    (workload(profile={"type": ["delay"]}), ["profile 'd'", "unknown profile type ['delay']"]),
    (workload(profiles={"d": {"type": "data_staging", "nb_bytes": NAN}}), ["profile 'd'", "nb_bytes must be a finite"]),
    (workload(profiles={"d": {"type": "parallel_homogeneous", "cpu": 1e9, "com": INF}}),
     ["profile 'd'", "com must be a finite number, got inf"]),
    (workload(profiles={"d": {"type": "data_staging", "nb_bytes": 1, "from": 3}}),
     ["profile 'd'", "from must be a storage label (a string), got 3"]),
    (workload(profiles={"d": {"type": "sequence", "seq": ["e"]}, "e": {"type": "sequence", "seq": ["d"]}}),
     ["profile 'd'", "seq contains itself through e -> d -> e"]),
    (workload(profiles={"d": {"type": "sequence", "seq": [["e"]]}}), ["profile 'd'", "seq names profile ['e']"]),
    (workload(profiles={"d": {"type": "sequence", "seq": ["d0"], "repeat": NAN}, "d0": {"type": "delay", "delay": 1}}),
     ["profile 'd'", "repeat must be an integer, got nan"]),
    # Batsim 4.2: nb_res, the machine size the workload was made for, is a positive integer
    ({**workload(), "nb_res": "4"}, ["nb_res (the machine size the workload was made for) must be an integer"]),
    ({**workload(), "nb_res": 0}, ["nb_res (the machine size the workload was made for) must be >= 1, got 0"]),
])
def test_bad_workload_values_are_refused_before_the_run(tmp_path, platform, wl, fragments):
    assert_one_line_error(engine(tmp_path, platform, wl), "w.json", *fragments)


@pytest.mark.parametrize("text, field", [
    ('{"nb_res": 4, "jobs": [{"id": "a\\ud800", "subtime": 1, "res": 1, "profile": "d"}], '
     '"profiles": {"d": {"type": "delay", "delay": 5}}}', "jobs[0].id"),
    ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "\\udc00"}], '
     '"profiles": {"\\udc00": {"type": "delay", "delay": 5}}}', "jobs[0].profile"),
    ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d", "user": ["x\\ud83d"]}], '
     '"profiles": {"d": {"type": "delay", "delay": 5}}}', "jobs[0].user[0]"),
])
def test_a_lone_surrogate_escape_is_refused_naming_the_field(tmp_path, platform, text, field):
    # JSON's \\ud800 decodes to a character no UTF-8 output or message can hold (a pair, e.g. an emoji, is text)
    path = write(tmp_path, "w.json", text)
    proc = subprocess.run(ENGINE + ["-p", platform, "-w", path, "-e", str(tmp_path / "o"),
                                    "-s", "tcp://127.0.0.1:9", "--ready-timeout", "1"],
                          capture_output=True, text=True, timeout=30)
    assert_one_line_error(proc, "w.json", field, "lone UTF-16 surrogate")
    assert sorted(os.listdir(tmp_path)) == ["p.xml", "w.json"]   # no output, no temporary file


def test_a_workload_made_for_a_larger_machine_runs_with_one_warning(tmp_path, platform):
    wl = write(tmp_path, "w.json", {**workload(), "nb_res": 1000})
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0
    assert res.stderr.strip() == (f"batloc-batsim: warning: {wl}: nb_res is 1000 but the platform has 4 compute "
                                  "resources: the workload was made for a larger machine, so the simulated load "
                                  "is higher")
    assert [r["final_state"] for r in res.jobs_rows()] == ["COMPLETED_SUCCESSFULLY"]


def test_a_job_that_runs_in_no_time_counts_batsims_epsilon_and_no_output_holds_nan_or_inf(tmp_path, platform):
    # Batsim 4.2.1 records a job computed in no time as having run 1e-5 s (jobs_execution.cpp: "Putting epsilon
    # instead"): finish_time = start + 1e-5, stretch = turnaround / 1e-5, never nan nor inf (contract §5). Job 1
    # starts as it is submitted (Batsim's messages take 1e-10 s here: the stretch is 1 to 5 decimals); job 2 at
    # the requested call, 2 s after its submission: turnaround 2.00001 s, stretch 200 001.
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "profile": "zero"}, {"id": 2, "subtime": 1, "res": 1, "profile": "zero"}],
        "profiles": {"zero": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}}})

    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}},
                    {"type": "CALL_ME_LATER", "data": {"timestamp": 3}}]
        if any(e["type"] == "REQUESTED_CALL" for e in msg["events"]):
            return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "0"}}]
        return []

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    jobs = res.jobs()
    assert [(j["starting_time"], j["execution_time"], j["finish_time"], j["turnaround_time"])
            for j in (jobs["1"], jobs["2"])] == [("1.000000", "0.000010", "1.000010", "0.000010"),
                                                 ("3.000000", "0.000010", "3.000010", "2.000010")]
    assert abs(float(jobs["1"]["stretch"]) - 1) < 1e-4 and abs(float(jobs["2"]["stretch"]) - 200001) < 1e-2
    for suffix in ("_jobs.csv", "_schedule.csv", "_machine_states.csv"):
        text = res.file(suffix)
        assert "nan" not in text and "inf" not in text, (suffix, text)
    assert res.file("_schedule.csv").splitlines()[1].split(",")[3].startswith("200001.")   # max_slowdown


PAST_EXACT = ("batloc-batsim: warning: the simulation passes 2^32 s (about 136 years) at t={}: times past it are "
              "not microsecond-exact in the outputs (a double's spacing there exceeds 1 µs), as on Batsim")


def test_times_past_2_32_s_run_with_batsims_doubles_and_one_warning(tmp_path, platform):
    # Batsim's test_long_workload.json: doubles 16 apart at 1e17 s. A 20.2 s delay there ends 16 s later, a 5 s
    # one at once (1e17 + 5 rounds to 1e17), as on Batsim (SimGrid wears a sleep down by the step, whether the
    # clock moves or not). 4e9 + 1 + 4e9 passes 2^32 s: one warning, at that end. (Timed mode:
    # test_engine_batsim_time.py.)
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [
        {"id": 1, "subtime": 4e9 + 1, "res": 1, "profile": "long"},
        {"id": 2, "subtime": 1e17, "res": 1, "profile": "d20", "walltime": 30},
        {"id": 3, "subtime": 1e17, "res": 1, "profile": "d5"}],
        "profiles": {"long": {"type": "delay", "delay": 4e9}, "d20": {"type": "delay", "delay": 20.2},
                     "d5": {"type": "delay", "delay": 5}}})
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    jobs = res.jobs()
    assert (jobs["1"]["starting_time"], jobs["1"]["finish_time"]) == ("4000000001.000000", "8000000001.000000")
    assert res.stderr.strip() == PAST_EXACT.format("8000000001.000000")
    assert (jobs["2"]["starting_time"], jobs["2"]["finish_time"]) == ("100000000000000000.000000",
                                                                       "100000000000000016.000000")
    assert (jobs["3"]["starting_time"], jobs["3"]["finish_time"]) == ("100000000000000000.000000",
                                                                       "100000000000000000.000000")
    assert {r["final_state"] for r in res.jobs_rows()} == {"COMPLETED_SUCCESSFULLY"}


def test_a_call_far_ahead_comes_at_its_date(tmp_path, platform):
    # Batsim's waiter sleeps until any finite date: a job started when 1e300 s is called ends there (+ 5 s is lost)
    wl = write(tmp_path, "w.json", workload())

    def sched(msg):
        types = [e["type"] for e in msg["events"]]
        if "JOB_SUBMITTED" in types:
            return [{"type": "CALL_ME_LATER", "data": {"timestamp": 1e300}}]
        return [execute()] if "REQUESTED_CALL" in types else []

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    assert [now for now, _ in res.events("REQUESTED_CALL")] == [1e300]
    assert res.stderr.strip() == PAST_EXACT.format(f"{1e300:.6f}")
    assert [(r["final_state"], float(r["starting_time"]), float(r["finish_time"])) for r in res.jobs_rows()] == [
        ("COMPLETED_SUCCESSFULLY", 1e300, 1e300)]


def bad_platform(tmp_path, old, new, count=1):
    xml = platform_xml(nodes=1, cores=1)
    assert xml.count(old) >= count
    return write(tmp_path, "bad.xml", xml.replace(old, new, count))


@pytest.mark.parametrize("old, new, fragments", [
    ('speed="1Gf" core="1"', 'speed="nanf" core="1"', ["host 'n000_c00'", "speed must be a finite number > 0"]),
    ('bandwidth="100000000Bps"', 'bandwidth="infBps"', ["link 'n000_link'", "bandwidth must be a finite number > 0, got inf"]),
    ('bandwidth="100000000Bps"', 'bandwidth="-5Bps"', ["link 'n000_link'", "bandwidth must be", "got -5.0"]),
    ('latency="0s"', 'latency="nans"', ["link 'n000_link'", "latency must be a finite number >= 0, got nan"]),
    ('id="memory_bytes" value="128000000000"', 'id="memory_bytes" value="NaN"',
     ["host 'n000_mem'", "property memory_bytes must be a finite number > 0, got 'NaN'"]),
    ('id="bandwidth" value="100000000"', 'id="bandwidth" value="fast"',
     ["host 'n000_mem'", "property bandwidth must be a finite number > 0, got 'fast'"]),
    ('<prop id="role" value="storage"/><prop id="node"', '<prop id="role" value="storag"/><prop id="node"',
     ["host 'n000_mem'", "has role 'storag': Batsim 4.2.1 knows only master, compute_node and storage"]),
    ('<host id="lustre" speed="1Gf"><prop id="role" value="storage"/>',
     '<host id="lustre" speed="1Gf"><prop id="role" value="master"/>', ["hosts lustre, master are all masters"]),
])
def test_bad_platform_values_are_refused_before_the_run(tmp_path, old, new, fragments):
    path = bad_platform(tmp_path, old, new)
    assert_one_line_error(engine(tmp_path, path, workload()), "bad.xml", *fragments)


def on_first_submission(*events):
    """A scheduler that answers the first JOB_SUBMITTED with `events`, and nothing else."""
    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [dict(e) for e in events]
        return []
    return sched


def execute(**data):
    return {"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0", **data}}


@pytest.mark.parametrize("events, fragments", [
    ([execute(alloc="0-2000000000")], ["EXECUTE_JOB of 'w0!1' at t=1.000000", "resource 2000000000 does not exist",
                                       "ids 0-6"]),
    ([execute(alloc=0)], ["EXECUTE_JOB of 'w0!1'", "an allocation is a string like '0-3 5', got 0"]),
    ([execute(alloc="0 0")], ["EXECUTE_JOB of 'w0!1'", "names a resource twice"]),
    ([execute(job_id=["w0!1"])], ["execute a job at t=1.000000", "job_id is not a string: ['w0!1']"]),
    ([execute(storage_mapping=[4])], ["EXECUTE_JOB of 'w0!1'", "storage_mapping must be an object"]),
    ([execute(storage_mapping={"pfs": "4"})], ["storage_mapping 'pfs' names resource '4', which does not exist"]),
    ([{"type": "KILL_JOB", "data": {"job_ids": "w0!1"}}], ["KILL_JOB at t=1.000000", "job_ids must be a list"]),
    ([{"type": "REJECT_JOB", "data": {"job_id": 1}}], ["reject a job at t=1.000000", "not a string: 1"]),
    ([{"type": "CALL_ME_LATER", "data": {"timestamp": "soon"}}], ["CALL_ME_LATER at t=1.000000",
                                                                  "timestamp must be a number, got 'soon'"]),
    ([{"type": "CALL_ME_LATER", "data": {"timestamp": 1e308 * 10}}], ["not a Batsim message",
                                                                      "holds NaN or Infinity"]),
    ([{"type": "CALL_ME_LATER", "data": {"timestamp": NAN}}], ["not a Batsim message", "holds NaN or Infinity"]),
    ([{"type": "CALL_ME_LATER", "timestamp": "now", "data": {"timestamp": 5}}],
     ["answer at t=1.000000", "an event's timestamp must be a number, got 'now'"]),
    ([{"type": 5, "data": {}}], ["malformed event at t=1.000000"]),
    ([{"type": "NOTIFY", "data": ["registration_finished"]}], ["NOTIFY event has no data object"]),
    ([{"type": "SET_JOB_METADATA", "data": {"job_id": "w0!1", "metadata": 5}}],
     ["SET_JOB_METADATA of 'w0!1'", "metadata must be a string, got 5"]),
    ([{"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!1", "job_state": "DONE"}}],
     ["CHANGE_JOB_STATE of 'w0!1' at t=1.000000", "unknown job_state 'DONE'"]),
    ([{"type": "SET_RESOURCE_STATE", "data": {"resources": "0-99", "state": "1"}}],
     ["SET_RESOURCE_STATE at t=1.000000", "resource 99 does not exist"]),
    ([{"type": "QUERY", "data": {"requests": ["consumed_energy"]}}], ["QUERY at t=1.000000", "requests must be"]),
    ([{"type": "REGISTER_JOB", "data": {"job_id": "w0!", "job": {"id": "w0!1", "subtime": 1, "res": 1, "profile": "d"}}}],
     ["REGISTER_JOB: job id 'w0!' must read WORKLOAD!JOB, neither part empty"]),
    ([{"type": "REGISTER_JOB", "data": {"job_id": "w0!1", "job": {"id": "w0!1", "subtime": 1, "res": 1, "profile": "d"}}}],
     ["REGISTER_JOB at t=1.000000: job 'w0!1' already exists (a job of workload 'w0')"]),
    # a workload job not submitted yet: its row would have been lost when it came
    ([{"type": "REGISTER_JOB", "data": {"job_id": "w0!2", "job": {"id": "w0!2", "subtime": 1, "res": 1, "profile": "d"}}}],
     ["REGISTER_JOB at t=1.000000: job 'w0!2' already exists (a job of workload 'w0')"]),
])
def test_type_confused_and_oversized_decisions_are_refused(tmp_path, platform, events, fragments):
    wl = write(tmp_path, "w.json", {**workload(), "jobs": workload()["jobs"] + [
        {"id": 2, "subtime": 50, "res": 1, "profile": "d"}]})
    started = time.monotonic()
    res = run(tmp_path, platform, [wl], on_first_submission(*events), args=["--enable-dynamic-jobs"])
    assert time.monotonic() - started < 30   # '0-2000000000' is refused, not expanded
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    for fragment in fragments:
        assert fragment in res.stderr, res.stderr
    # the run's outputs are still written
    assert [r["final_state"] for r in res.jobs_rows()] == ["SUBMITTED", "NOT_SUBMITTED"]


def register(job):
    return [{"type": "REGISTER_PROFILE", "data": {"workload_name": "dyn", "profile_name": "p",
                                                  "profile": {"type": "delay", "delay": 1}}},
            {"type": "REGISTER_JOB", "data": {"job_id": "dyn!a", "job": job}}]


@pytest.mark.parametrize("job, fragment", [
    ({"res": 10 ** 9, "profile": "p"}, "REGISTER_JOB 'dyn!a': 'res' must be <= 7, got 1000000000"),
    ({"res": 1, "profile": "p", "walltime": "9"}, "REGISTER_JOB 'dyn!a': walltime must be"),
    ({"res": 1, "profile": ["p"]}, "REGISTER_JOB 'dyn!a': profile ['p'] of workload 'dyn' is unknown"),
    (["res", 1], "REGISTER_JOB 'dyn!a': 'job' must be an object, got ['res', 1]"),
    # Batsim 4.2.1 aborts on these two (jobs.cpp): a scheduler the engine ran would fail on Batsim
    ({"id": "dyn!a", "res": 1, "profile": "p"},
     "REGISTER_JOB 'dyn!a': 'subtime' (Batsim 4.2.1 needs the job's submission time) must be a number, got None"),
    ({"subtime": 1, "res": 1, "profile": "p"},
     "REGISTER_JOB 'dyn!a': the job's 'id' must be 'dyn!a' (Batsim 4.2.1 reads the job's own id), got None"),
])
def test_bad_dynamic_jobs_are_refused(tmp_path, platform, job, fragment):
    wl = write(tmp_path, "w.json", workload())
    res = run(tmp_path, platform, [wl], on_first_submission(*register(job)), args=["--enable-dynamic-jobs"])
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert fragment in res.stderr


def two_jobs():
    return {"nb_res": 4, "jobs": [{"id": i, "subtime": 10 * i, "res": 1, "profile": "d"} for i in (1, 2)],
            "profiles": {"d": {"type": "delay", "delay": 5}}}


def test_decisions_in_the_past_apply_now_with_one_warning_as_batsim(tmp_path, platform):
    # Batsim 4.2 applies a decision dated before its clock at once.
    def sched(msg):
        return [{"type": "EXECUTE_JOB", "timestamp": msg["now"] - 3, "data": {"job_id": e["data"]["job_id"], "alloc": "0"}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    res = run(tmp_path, platform, [write(tmp_path, "w.json", two_jobs())], sched)
    assert res.returncode == 0, res.stderr
    assert [(r["job_id"], r["starting_time"]) for r in res.jobs_rows()] == [("1", "10.000000"), ("2", "20.000000")]
    assert res.stderr.count("in the past: applied now, as Batsim does") == 1


def call_me_at(offset):
    """A scheduler that runs each job at once and, on job 1's submission, asks to be called at now + offset."""
    def sched(msg):
        out = []
        for e in msg["events"]:
            if e["type"] == "JOB_SUBMITTED":
                out.append({"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": "0"}})
                if e["data"]["job_id"] == "w0!1":
                    out.append({"type": "CALL_ME_LATER", "data": {"timestamp": msg["now"] + offset}})
        return out
    return sched


@pytest.mark.parametrize("offset, asked", [(-1, "9.000000"), (0, "10.000000")])
def test_a_call_me_later_not_in_the_future_stops_the_run_in_one_line_as_batsim(tmp_path, platform, offset, asked):
    # Batsim 4.2.1 aborts on it (server.cpp: "You asked to be awaken in the past!")
    res = run(tmp_path, platform, [write(tmp_path, "w.json", two_jobs())], call_me_at(offset))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().splitlines() == [
        f"batloc-batsim: error: CALL_ME_LATER at t=10.000000 asks to be called at t={asked}, which is not in the "
        "future (Batsim 4.2.1 refuses it; --lenient-call-me-later calls such a scheduler now); outputs written "
        f"to {res.prefix}_*.csv, 2 job(s) unfinished"]
    # job 1 had started in the same answer; job 2 was never submitted
    assert [(r["job_id"], r["final_state"]) for r in res.jobs_rows()] == [("1", "RUNNING"), ("2", "NOT_SUBMITTED")]


def test_lenient_call_me_later_calls_now_with_one_warning(tmp_path, platform):
    res = run(tmp_path, platform, [write(tmp_path, "w.json", two_jobs())], call_me_at(-1),
              args=["--lenient-call-me-later"])
    assert res.returncode == 0, res.stderr
    assert [now for now, _ in res.events("REQUESTED_CALL")] == [10.0]
    assert res.stderr.count("asks for t=9.000000, which is not in the future: called now") == 1


def test_a_scheduler_that_loops_at_one_instant_is_stopped_in_one_line(tmp_path, platform):
    # Each answer asks for another message at once (a call for now, under --lenient-call-me-later) while job 2
    # runs on, and no job moves on: time could never advance. (A kill of the ended job no longer loops: the
    # engine refuses it, as Batsim has deleted that job.)
    def sched(msg):
        out = []
        for e in msg["events"]:
            if e["type"] == "JOB_SUBMITTED":
                alloc = "0" if e["data"]["job_id"] == "w0!1" else "1"
                out.append({"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": alloc}})
            elif e["type"] in ("JOB_COMPLETED", "REQUESTED_CALL"):
                out.append({"type": "CALL_ME_LATER", "data": {"timestamp": msg["now"]}})
        return out

    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"},
                                                          {"id": 2, "subtime": 1, "res": 1, "profile": "long"}],
                                    "profiles": {"d": {"type": "delay", "delay": 5},
                                                 "long": {"type": "delay", "delay": 100}}})
    res = run(tmp_path, platform, [wl], sched, args=["--lenient-call-me-later"])
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        "batloc-batsim: error: the scheduler answered 1000 messages in a row at t=6.000000 without any job being "
        "submitted, registered or ending (its last answer: CALL_ME_LATER); it loops at one instant; outputs "
        f"written to {res.prefix}_*.csv, 1 job(s) unfinished")
    # begins, submissions, the submitter's bye (Batsim tells it after them), completion, then the loop
    assert len(res.messages) == 1 + 1 + 1 + 1 + 1000


@pytest.mark.parametrize("event, fragment", [
    ({"type": "KILL_JOB", "data": {"job_ids": ["w0!2"]}}, "KILL_JOB at t=10.000000: job 'w0!2' has not started"),
    ({"type": "SET_RESOURCE_STATE", "data": {"resources": "0", "state": "1"}}, "the engine has no power model"),
    ({"type": "QUERY", "data": {"requests": {"consumed_energy": {}}}}, "the engine has no energy model"),
    ({"type": "QUERY", "data": {"requests": {"estimate_waiting_time": {}}}}, "'estimate_waiting_time': the engine"),
    # Batsim's killer asserts that the job ran ("Bad kill"), even though its server lets a rejected job through
    ([{"type": "REJECT_JOB", "data": {"job_id": "w0!2"}}, {"type": "KILL_JOB", "data": {"job_ids": ["w0!2"]}}],
     "KILL_JOB at t=10.000000: job 'w0!2' has not started, it is REJECTED"),
    ({"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!2", "job_state": "COMPLETED_KILLED"}},
     "CHANGE_JOB_STATE of 'w0!2' at t=10.000000: SUBMITTED -> COMPLETED_KILLED"),
    ({"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!1", "job_state": "SUBMITTED"}},
     "CHANGE_JOB_STATE of 'w0!1' at t=10.000000: RUNNING -> SUBMITTED"),
])
def test_decisions_batsim_refuses_stop_the_run(tmp_path, platform, event, fragment):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": i, "subtime": 10, "res": 1, "profile": "d"}
                                                          for i in (1, 2)],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})

    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}] + (
                event if isinstance(event, list) else [event])
        return []

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 1 and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert fragment in res.stderr and "Batsim 4.2.1 refuses" in res.stderr, res.stderr


def test_change_job_state_ends_a_waiting_job_as_rejected_and_a_running_one_as_asked(tmp_path, platform):
    # the two changes Batsim 4.2.1 allows (server.cpp); a running job's work stops here (contract 4)
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": i, "subtime": 10, "res": 1, "profile": "d"}
                                                          for i in (1, 2)],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})

    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}},
                    {"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!2", "job_state": "REJECTED"}},
                    {"type": "CALL_ME_LATER", "data": {"timestamp": 12}}]
        if any(e["type"] == "REQUESTED_CALL" for e in msg["events"]):
            return [{"type": "CHANGE_JOB_STATE", "data": {"job_id": "w0!1", "job_state": "COMPLETED_FAILED"}}]
        return []

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    assert [(r["job_id"], r["final_state"], r["finish_time"]) for r in res.jobs_rows()] == [
        ("2", "REJECTED", ""), ("1", "COMPLETED_FAILED", "12.000000")]   # in the order they ended
