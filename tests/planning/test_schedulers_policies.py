"""Hand-computed schedules showing where the five policies differ.

Driven through ``batloc.testing.dry_run`` (the paper's model: a load of S
bytes takes S / BW; jobs run for their delay). Every platform here has node
bandwidth 1 GB/s, so a 10 GB file loads in exactly 10 s. Walltimes are given
to the scheduler; actual durations (delays) only to the dry run.
"""

import csv

import pytest


from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.eft import Eft
from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.fcfs_bf import Fcfs_bf
from batloc.schedulers.lea import Lea
from batloc.schedulers.lem import Lem
from batloc.schedulers.leo import Leo

GB = 1e9


def job(i, t, cores, wall, delay, file=None, size=None):
    j = {"id": i, "subtime": t, "res": cores, "walltime": wall, "profile": f"d{delay}"}
    if file is not None:
        j.update(input_file=file, input_size=size * GB, user="u", evaluated=True)
    return j


def run(cls, nodes, jobs, options=None, memory=100 * GB, tmp_path=None):
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    opts = dict(options or {})
    if tmp_path is not None:
        opts["decisions"] = str(tmp_path / "decisions.csv")
    sched = cls(opts)
    compute, storage = make_resources(nodes, memory_bytes=memory, bandwidth=1 * GB)
    res = DryRun(sched, compute, storage, {"jobs": jobs, "profiles": profiles}).run()
    starts = {k.split("!")[1]: v for k, v in res.items() if k.startswith("w0!")}
    stagings = {k: v for k, v in res.items() if k.startswith("batloc-stage!")}
    return starts, stagings, sched


def node_of(sched, r):
    return sched.platform.nodes[sched.platform.node_of_core[r["alloc"][0]]].name


def test_eft_chooses_the_node_holding_the_file():
    # t=1: J1 (file B) -> n000 (tie: lowest index), J2 (file A) -> n001; both load
    # 10 s [1,11) and compute [11,21). At t=30 both nodes are idle; A survives on
    # n001 (no job started there since), B on n000.
    # FCFS: t_k = 30 on both -> n000 (lowest index), miss, computes from 30+10 = 40.
    # EFT: t'_k = 40 on n000, 30 on n001 (hit) -> n001, computes from 30.
    jobs = [job(1, 1, 1, 100, 10, "B", 10), job(2, 1, 1, 100, 10, "A", 10), job(3, 30, 1, 100, 10, "A", 10)]
    s, _, f = run(Fcfs, {"n000": 1, "n001": 1}, jobs)
    assert (node_of(f, s["3"]), s["3"]["start"]) == ("n000", 40.0)
    s, _, e = run(Eft, {"n000": 1, "n001": 1}, jobs)
    assert (node_of(e, s["3"]), s["3"]["start"]) == ("n001", 30.0)


def test_eft_counts_a_file_that_a_queued_job_plans_to_load():
    # A node that only *plans* the file (an earlier queued job's reservation loads it) is not scored as
    # a miss (planner._score_miss must not take it). n000: 2 cores, 1 GB/s; n001: 1 core, 0.5 GB/s;
    # F is 60 GB (60 s on n000, 120 s on n001). At t=0 J1 takes n000's core 0 to 90 (walltime),
    # J2 its core 1 to 20 (ends at 15). At t=1, J3 (F): n000 20 + 60 = 80 < n001 1 + 120 = 121 ->
    # reserved on n000 at 20, its load planned over [20, 80). J4 (F): n000 has a core at 90, F
    # loaded there by then (J3's window) -> a hit, 90; n001: 121 -> reserved on n000 (scored as a
    # miss, 150, it would start on n001 at once). At 15, J3 starts on n000 (load [15, 75), computes
    # [75, 80)); at 80 J4 starts on n000's freed core, a hit: one load in all.
    jobs = [job(1, 0, 1, 90, 85), job(2, 0, 1, 20, 15), job(3, 1, 1, 100, 5, "F", 60),
            job(4, 1, 1, 100, 5, "F", 60)]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    sched = Eft({})
    compute, storage = make_resources({"n000": 2, "n001": 1}, memory_bytes=100 * GB,
                                      bandwidth={"n000": 1 * GB, "n001": 0.5 * GB})
    res = DryRun(sched, compute, storage, {"jobs": jobs, "profiles": profiles}).run()
    s = {k.split("!")[1]: v for k, v in res.items() if k.startswith("w0!")}
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n000", 75.0)
    assert (node_of(sched, s["4"]), s["4"]["start"]) == ("n000", 80.0)
    assert [k for k in res if k.startswith("batloc-stage!")] == ["batloc-stage!stage-w0-3-n000"]


# J1 loads A on n000 [1,11) and computes [11,61) (walltime 100: reserved to 101).
# J2 (file A) arrives at t=2 while n001 is idle.
WAIT_JOBS = [job(1, 1, 1, 100, 50, "A", 10), job(2, 2, 1, 100, 10, "A", 10)]


def test_lea_waits_for_the_busy_node_holding_the_file():
    # LEA at t=2: n000: t_k = 101, file present -> 101 + 500*0 = 101;
    #             n001: t_k = 2, miss -> 2 + 500*10 = 5002.  -> n000 (reserved).
    # J1 completes at 61: replan, n000 free at 61 with A -> J2 starts at 61, hit.
    s, st, sched = run(Lea, {"n000": 1, "n001": 1}, WAIT_JOBS)
    assert (node_of(sched, s["2"]), s["2"]["start"]) == ("n000", 61.0)
    assert len(st) == 1
    # EFT: n000 t' = 101, n001 t' = 2 + 10 = 12 -> loads on n001, computes from 12.
    s, st, sched = run(Eft, {"n000": 1, "n001": 1}, WAIT_JOBS)
    assert (node_of(sched, s["2"]), s["2"]["start"]) == ("n001", 12.0)
    assert len(st) == 2


def test_leo_starts_immediately_on_an_idle_node():
    # LEO at t=2: n001 can start now -> EFT score t' = 12; n000 cannot -> LEA
    # score 101. 12 < 101 -> n001, computes from 12 (LEA waited until 61).
    s, _, sched = run(Leo, {"n000": 1, "n001": 1}, WAIT_JOBS)
    assert (node_of(sched, s["2"]), s["2"]["start"]) == ("n001", 12.0)


# Two nodes of 2 cores. J1 (2 cores, file A) fills n000: load [1,11), compute
# [11,61), reserved to 101. J2 (1 core, file B 1 GB) runs on n001 [1,152).
# J3 (1 core, file A) arrives at t=5.
SAT_J1 = job(1, 1, 2, 100, 50, "A", 10)
SAT_J2 = job(2, 1, 1, 200, 150, "B", 1)
SAT_J3 = job(3, 5, 1, 100, 10, "A", 10)


def test_lem_switches_with_saturation():
    # Saturated (both nodes run a job) -> LEA: n000 101 + 0 = 101 vs n001
    # 5 + 500*10 -> n000; at 61 (J1 done) n000 is idle, so no longer saturated:
    # EFT: n000 t' = 61 (A kept) vs n001 t' = 71 -> n000, starts at 61.
    s, _, sched = run(Lem, {"n000": 2, "n001": 2}, [SAT_J1, SAT_J2, SAT_J3])
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n000", 61.0)
    # EFT in the same situation loads A on n001's free core: computes from 5 + 10 = 15.
    s, _, sched = run(Eft, {"n000": 2, "n001": 2}, [SAT_J1, SAT_J2, SAT_J3])
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n001", 15.0)
    # LEO too: n001 can start J3 now (one core free) -> EFT score 15 < 101.
    s, _, sched = run(Leo, {"n000": 2, "n001": 2}, [SAT_J1, SAT_J2, SAT_J3])
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n001", 15.0)
    # Without J2, n001 is idle at t=5: not saturated -> EFT -> n001 at 15.
    s, _, sched = run(Lem, {"n000": 2, "n001": 2}, [SAT_J1, SAT_J3])
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n001", 15.0)
    # ... unless half the nodes busy counts as saturated: LEA -> waits for n000.
    s, _, sched = run(Lem, {"n000": 2, "n001": 2}, [SAT_J1, SAT_J3], {"saturation": 0.5})
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n000", 61.0)


def test_conservative_backfilling_fills_a_hole_without_delaying_the_head():
    # One node, 2 cores, jobs without files, delays = walltimes.
    # J1 (1 core, 100 s) runs [1,101). J2 (2 cores, 50 s) is reserved [101,151).
    # J3 (1 core, 90 s) at t=3: core 1 is free during [3,93) ⊂ [3,101) -> starts at 3.
    # J4 (1 core, 100 s) at t=4: [4,104) would overlap J2's reservation -> after it, 151.
    jobs = [job(1, 1, 1, 100, 100), job(2, 2, 2, 50, 50), job(3, 3, 1, 90, 90), job(4, 4, 1, 100, 100)]
    s, _, _ = run(Fcfs_bf, {"n000": 2}, jobs)
    assert {k: v["start"] for k, v in s.items()} == {"1": 1.0, "2": 101.0, "3": 3.0, "4": 151.0}
    # Without backfilling J3 and J4 queue behind J2: both at 151.
    s, _, _ = run(Fcfs, {"n000": 2}, jobs)
    assert {k: v["start"] for k, v in s.items()} == {"1": 1.0, "2": 101.0, "3": 151.0, "4": 151.0}
    # Backfilling is the same option for every policy.
    s, _, _ = run(Lea, {"n000": 2}, jobs, {"backfilling": True})
    assert {k: v["start"] for k, v in s.items()} == {"1": 1.0, "2": 101.0, "3": 3.0, "4": 151.0}


# One node, one core, memory 25 GB; files A, B, C of 10 GB; each job computes
# 10 s (walltime 100), all submitted at t=1: they run one after another.
# J1 A: load [1,11) run [11,21); J2 B: load [21,31) run [31,41);
# J3 C: load [41,51) run [51,61).
CACHE_JOBS = [job(i, 1, 1, 100, 10, f, 10) for i, f in enumerate("ABCBA", start=1)]


def test_lru_evicts_the_least_recently_used_unused_file(tmp_path):
    # lru: J3 needs room (A+B+C = 30 GB > 25): evicts A (used at 1, before B at 21).
    # J4 B: hit, runs [61,71). J5 A: miss; room needed again: C (last used 41)
    # goes before B (61); load [71,81), run [81,91).
    s, st, _ = run(Fcfs, {"n000": 1}, CACHE_JOBS, {"cache": "lru"}, memory=25 * GB, tmp_path=tmp_path)
    assert [s[str(i)]["start"] for i in range(1, 6)] == [11.0, 31.0, 51.0, 61.0, 81.0]
    rows = list(csv.DictReader(open(tmp_path / "decisions.csv")))
    assert [r["cache"] for r in rows] == ["miss", "miss", "miss", "hit", "miss"]
    assert len(st) == 4


def test_paper_model_loses_a_file_when_another_job_starts_in_between():
    # paper: B survives J2's end only until the next start on the node: J3's
    # start at 41 drops it, so J4 reloads B [61,71), runs [71,81); J5 A [81,91) -> 91.
    s, st, _ = run(Fcfs, {"n000": 1}, CACHE_JOBS, {"cache": "paper"}, memory=25 * GB)
    assert [s[str(i)]["start"] for i in range(1, 6)] == [11.0, 31.0, 51.0, 71.0, 91.0]
    assert len(st) == 5


def test_paper_model_keeps_a_file_between_consecutive_users():
    # A, A: J2 starts at 21 right after J1 -> hit, runs [21,31).
    s, st, _ = run(Fcfs, {"n000": 1}, [job(1, 1, 1, 100, 10, "A", 10), job(2, 1, 1, 100, 10, "A", 10)])
    assert (s["1"]["start"], s["2"]["start"], len(st)) == (11.0, 21.0, 1)


def test_two_jobs_on_one_node_share_one_staging(tmp_path):
    # One node, 2 cores. J1 (A) at t=1 starts a staging [1,11). J2 (A) at t=2:
    # EFT t' on n000 = 11 (case 2, the load in flight) -> waits for the same
    # staging; both compute from 11.
    jobs = [job(1, 1, 1, 100, 10, "A", 10), job(2, 2, 1, 100, 10, "A", 10)]
    s, st, _ = run(Eft, {"n000": 2}, jobs, tmp_path=tmp_path)
    assert (s["1"]["start"], s["2"]["start"]) == (11.0, 11.0)
    assert list(st) == ["batloc-stage!stage-w0-1-n000"]
    rows = list(csv.DictReader(open(tmp_path / "decisions.csv")))
    assert [(r["cache"], r["staging_job"], r["planned_start"]) for r in rows] == [
        ("miss", "batloc-stage!stage-w0-1-n000", "11.000000"),
        ("wait", "batloc-stage!stage-w0-1-n000", "11.000000")]


def test_a_job_that_waited_for_its_file_is_killed_at_the_window_end():
    # Window [1, 31): load [1,11), computing from 11 would need 25 s -> killed at 31.
    s, _, _ = run(Fcfs, {"n000": 1}, [job(1, 1, 1, 30, 25, "A", 10)])
    assert (s["1"]["start"], s["1"]["finish"], s["1"]["state"]) == (11.0, 31.0, "COMPLETED_KILLED")


def test_with_the_load_off_the_walltime_only_the_engines_walltime_kills():
    # Same job, option walltime_includes_load false: no kill at 31; its 25 s fit its walltime of 30
    # counted from its execution at 11, so it completes at 36. A 35 s one is killed by the engine at
    # 11 + 30 = 41, as on Batsim: its own run outgrew its walltime.
    off = {"walltime_includes_load": False}
    s, _, _ = run(Fcfs, {"n000": 1}, [job(1, 1, 1, 30, 25, "A", 10)], off)
    assert (s["1"]["start"], s["1"]["finish"], s["1"]["state"]) == (11.0, 36.0, "COMPLETED_SUCCESSFULLY")
    s, _, _ = run(Fcfs, {"n000": 1}, [job(1, 1, 1, 30, 35, "A", 10)], off)
    assert (s["1"]["start"], s["1"]["finish"], s["1"]["state"]) == (11.0, 41.0, "COMPLETED_WALLTIME_REACHED")


@pytest.mark.parametrize("cls", [Fcfs, Lea])
def test_a_window_end_in_the_message_of_the_jobs_completion_kills_nothing(cls):
    # Window [1, 31): load [1, 11), computing [11, 31): the job completes at its window's end.
    # The kill timer (asked at 1) comes first in that instant's message, as Batsim 4.2.1 sends
    # it, then the completion: a KILL_JOB in the answer would abort Batsim (the dry run refuses it).
    s, _, sched = run(cls, {"n000": 1}, [job(1, 1, 1, 30, 20, "A", 10)])
    assert (s["1"]["start"], s["1"]["finish"], s["1"]["state"]) == (11.0, 31.0, "COMPLETED_SUCCESSFULLY")
    assert not sched.kill_at


def test_a_job_whose_load_outlasts_its_window_ends_at_the_window_end():
    # J1 (2 cores, walltime 5): window [1, 6), but its 10 GB load takes [1, 11): at 6 it is
    # executed and killed (a final state, its cores freed), while the staging goes on to 11.
    # J2 (2 cores, no file, submitted at 2) is planned at J1's window end and starts at 6.
    # The kill timer was asked at t=1 (the dry run, as Batsim, refuses a call at or before now).
    s, st, sched = run(Fcfs, {"n000": 2}, [job(1, 1, 2, 5, 4, "A", 10), job(2, 2, 2, 50, 20)])
    assert (s["1"]["start"], s["1"]["finish"], s["1"]["state"]) == (6.0, 6.0, "COMPLETED_KILLED")
    assert (s["2"]["start"], s["2"]["finish"]) == (6.0, 26.0)
    assert [(v["start"], v["finish"]) for v in st.values()] == [(1.0, 11.0)]
    # No user of A remained when its load ended: the memory model does not count it.
    assert sched.state.caches[0].status("A") == "absent"


def test_decision_log_header_and_scores(tmp_path):
    _, _, _ = run(Lea, {"n000": 1, "n001": 1}, WAIT_JOBS, tmp_path=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "decisions.csv")))
    assert list(rows[0]) == ("time,job_id,policy,node,alloc,cores,planned_start,input_file,"
                             "input_size,cache,staging_job,score").split(",")
    # J1 at t=1 on idle nodes: 1 + 500*10 = 5001; J2 at 61: hit, 61.
    assert [(r["job_id"], r["node"], r["score"]) for r in rows] == [
        ("w0!1", "n000", "5001.000000"), ("w0!2", "n000", "61.000000")]


def test_same_inputs_same_decisions(tmp_path):
    jobs = [job(i, 1 + i % 7, 1 + i % 2, 50 + i, 10 + i % 13, "ABCDE"[i % 5], 1 + i % 3) for i in range(40)]
    a, _, _ = run(Lea, {"n000": 2, "n001": 2, "n002": 2}, jobs, {"backfilling": True})
    b, _, _ = run(Lea, {"n000": 2, "n001": 2, "n002": 2}, jobs, {"backfilling": True})
    assert a == b


def test_queue_depth_plans_only_the_head_of_the_queue():
    # LEA, two 1-core nodes. J1 (A) loads on n000 [1,11), computes [11,61).
    # At t=2, J2 (A) prefers waiting for n000 (101 vs 2 + 500*10) and J3 (no
    # file) could start now on n001.
    jobs = WAIT_JOBS + [job(3, 2, 1, 100, 10)]
    s, _, sched = run(Lea, {"n000": 1, "n001": 1}, jobs)
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n001", 2.0)
    # With queue_depth 1 only J2 is planned at t=2 (it waits), and at J1's
    # completion (61), where J2 starts. J3 heads the queue at the next event,
    # J2's completion at 71: both nodes free -> lowest index, n000.
    s, _, sched = run(Lea, {"n000": 1, "n001": 1}, jobs, {"queue_depth": 1})
    assert (node_of(sched, s["2"]), s["2"]["start"]) == ("n000", 61.0)
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n000", 71.0)


def test_ignore_files_schedules_file_unaware(tmp_path, capsys):
    # EFT without files is FCFS: J3 goes to the lowest-index idle node (n000),
    # starts at once (no load: nothing is staged) and logs no file.
    jobs = [job(1, 1, 1, 100, 10, "B", 10), job(2, 1, 1, 100, 10, "A", 10), job(3, 30, 1, 100, 10, "A", 10)]
    s, st, sched = run(Eft, {"n000": 1, "n001": 1}, jobs, {"ignore_files": True}, tmp_path=tmp_path)
    assert (node_of(sched, s["3"]), s["3"]["start"]) == ("n000", 30.0)
    assert [s[str(i)]["start"] for i in (1, 2)] == [1.0, 1.0]
    assert st == {}
    rows = list(csv.DictReader(open(tmp_path / "decisions.csv")))
    assert {r["cache"] for r in rows} == {"none"}
    assert "warning" not in capsys.readouterr().err
