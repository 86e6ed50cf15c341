"""Khanna et al.'s policies through the real engine: the hand-checked scenarios K1 and K2
of seed-schedulers.md §1.

Platform: n000, n001 of 1 core each, node links of 1 byte/s (FATPIPE, no latency), memory
far larger than the files; files A and B of 10 bytes, so a load takes 10 s; every job's
profile is a delay of walltime - 10 (a job that loads its file ends exactly at its
window's end). Skipped when the engine or SimGrid is not installed.
"""

import csv

import pytest

import policy_run
from batloc.analysis import validate
from batloc.analysis.memory_model import memory_model
from engine_harness import platform_xml

pytestmark = pytest.mark.needs_engine


def khanna_run(tmp_path, policy, jobs, options=None, nodes=2, cores=1, bandwidth=1, memory=1e6):
    """Run `policy` on the K platform; jobs are (id, subtime, file, walltime[, delay]), the delay
    walltime - 10 unless given."""
    jobs = [(*j, j[3] - 10) if len(j) == 4 else j for j in jobs]
    platform = tmp_path / "k.xml"
    platform.write_text(platform_xml(nodes=nodes, cores=cores, bandwidth=bandwidth, memory=memory))
    workload = {
        "nb_res": nodes * cores,
        "jobs": [{"id": i, "subtime": t, "res": 1, "walltime": w, "profile": f"d{d}", "user": "u",
                  "input_file": f, "input_size": 10.0, "evaluated": True} for i, t, f, w, d in jobs],
        "profiles": {f"d{d}": {"type": "delay", "delay": d} for *_, d in jobs}}
    prefix = policy_run.simulate(tmp_path, policy, platform, workload, options, name=policy).prefix
    rows = validate.read_jobs_csv(f"{prefix}_jobs.csv")
    # valid, the memory replayed under the policy's own model (value, or JDP+DLL's lru with its replications)
    model = memory_model({"policy": policy, "options": options})
    assert validate.validate(prefix, tmp_path / f"{policy}_w.json", platform, model, quiet=True)[0] == []
    own = {r["job_id"]: r for r in rows if r["workload_name"] == "w0"}
    decisions = list(csv.DictReader(open(f"{prefix}_decisions.csv")))
    node = {int(d["job_id"].split("!")[1]): {"n000": "n1", "n001": "n2"}[d["node"]] for d in decisions}
    assert sorted(node) == sorted(int(j) for j in own)
    stagings = sorted((r["job_id"], float(r["starting_time"])) for r in rows if r["workload_name"] == "batloc-stage")
    response = sum(float(r["finish_time"]) - float(r["submission_time"]) for r in own.values()) / len(own)
    makespan = max(float(r["finish_time"]) for r in rows)
    return [node[i] for i in sorted(node)], stagings, response, makespan


K1 = [(1, 1, "A", 60), (2, 2, "B", 45), (3, 12, "A", 20), (4, 13, "B", 20)]
K2 = [(1, 1, "A", 20), (2, 1, "A", 20), (3, 1, "B", 20), (4, 1, "B", 20)]


def test_k1_met_queues_j3_behind_j1_for_its_cached_file(tmp_path):
    # J1 n1: load [1,11) compute to 61; J2 n2: load [2,12) to 47; J3 (A cached on n1) waits
    # for n1: [61,71); J4 (B cached on n2): [47,57). Responses 60, 45, 59, 44.
    nodes, stagings, response, makespan = khanna_run(tmp_path, "met", K1)
    assert nodes == ["n1", "n2", "n1", "n2"]
    assert len(stagings) == 2 and (response, makespan) == (52.0, 71.0)


def test_k1_mct_loads_a_second_copy_where_it_completes_first(tmp_path):
    # J3: n1 completes at 61+20 (A cached) vs n2 at 47+10+20: n2, loads A [47,57), ends 67;
    # J4: n2 67+20 (B cached) vs n1 61+10+20: n2, hit, [67,77). Responses 60, 45, 55, 64.
    nodes, stagings, response, makespan = khanna_run(tmp_path, "mct", K1)
    assert nodes == ["n1", "n2", "n2", "n2"]
    assert [s for s, _ in stagings] == ["stage-w0-1-n000", "stage-w0-2-n001", "stage-w0-3-n001"]
    assert (response, makespan) == (56.0, 77.0)


def test_k1_sa_switches_modes_on_the_balance_index(tmp_path):
    # ib 1 -> MET (J1 n1); ib 0 -> MCT (J2 n2); ib 35/49 -> MET (J3 n1); ib 34/68 stays MET (J4 n2).
    nodes, stagings, response, makespan = khanna_run(tmp_path, "sa", K1)
    assert nodes == ["n1", "n2", "n1", "n2"]
    assert len(stagings) == 2 and (response, makespan) == (52.0, 71.0)


def test_k1_jdp_dll_replicates_at_the_second_mapping(tmp_path):
    # J3 is A's second mapping to n1: A replicated to n2 at 12; J4 is B's second to n2: B to n1 at 13.
    nodes, stagings, response, makespan = khanna_run(tmp_path, "jdp_dll", K1)
    assert nodes == ["n1", "n2", "n1", "n2"]
    assert stagings == [("rep-A-n001-1", 12.0), ("rep-B-n000-2", 13.0),
                        ("stage-w0-1-n000", 1.0), ("stage-w0-2-n001", 2.0)]
    assert (response, makespan) == (52.0, 71.0)


def test_k1_online_hps(tmp_path):
    # t=2: anchor n1 59, J2 55 (net B alone: Tr = 1), cap 1.1 x 114 / 2 = 62.7: only n2 has room.
    # t=12: J3 (27.5) fits nowhere (cap 61.325; 49 + 27.5, 35 + 27.5): least overload, n2.
    # t=13: cap 75.35; J3 has room on n2 only (34 + 27.5); J4 nowhere: least overload n1 (75.5).
    # t=47: cap 37.95, anchors 14, 0: J3 -> n2 (room), which starts it (loads A [47,57), ends 67);
    # J4 overloads n1 least (41.5). t=61: J4 alone (W 33.5): n1 (overload 9.1 vs 15.1), loads B
    # [61,71), ends 81. Responses 60, 45, 55, 68.
    nodes, stagings, response, makespan = khanna_run(tmp_path, "online_hps", K1)
    assert nodes == ["n1", "n2", "n2", "n1"]
    assert [s for s, _ in stagings] == ["stage-w0-1-n000", "stage-w0-2-n001", "stage-w0-3-n001", "stage-w0-4-n000"]
    assert (response, makespan) == (57.0, 81.0)


@pytest.mark.parametrize("policy", ["met", "mct"])
def test_k2_immediate_baselines_split_every_file(tmp_path, policy):
    # J1 n1; J2: A only in J1's future load, n2 is free: n2; J3, J4 load B on n1, n2 at 21.
    nodes, stagings, response, makespan = khanna_run(tmp_path, policy, K2)
    assert nodes == ["n1", "n2", "n1", "n2"]
    assert len(stagings) == 4 and (response, makespan) == (30.0, 41.0)


def test_k2_online_hps_keeps_jobs_sharing_a_file_together(tmp_path):
    # Weights 27.5, cap 60.5: {J1, J2} -> n1, {J3, J4} -> n2; J2, J4 start at 21 with no load.
    nodes, stagings, response, makespan = khanna_run(tmp_path, "online_hps", K2)
    assert nodes == ["n1", "n1", "n2", "n2"]
    assert stagings == [("stage-w0-1-n000", 1.0), ("stage-w0-3-n001", 1.0)]
    assert (response, makespan) == (25.0, 31.0)


def test_a_window_end_between_two_protocol_ticks_still_kills(tmp_path):
    # One node of 2 cores, node link 3 B/s: a 10-byte load takes 10/3 s, and into a node one
    # load runs at a time. MET starts J1 and J2 at 1: J1 loads A [1, 4.333..), J2 loads B
    # [4.333.., 7.666..), so J2's window is [4.333.., 14.333..), an end between two of the
    # protocol's microseconds: the engine's call comes dated 14.333333, just before it. J2 (9 s
    # of work from 7.67) is killed there, not left to finish at 16.67.
    khanna_run(tmp_path, "met", [(1, 1, "A", 100, 50), (2, 1, "B", 10, 9)], nodes=1, cores=2, bandwidth=3)
    jobs = {r["job_id"]: r for r in csv.DictReader(open(tmp_path / "met_jobs.csv"))}
    assert (jobs["2"]["final_state"], jobs["2"]["starting_time"], jobs["2"]["finish_time"]) == (
        "COMPLETED_KILLED", "7.666667", "14.333333")
    assert (jobs["1"]["final_state"], jobs["1"]["finish_time"]) == ("COMPLETED_SUCCESSFULLY", "54.333333")


def decided_at(tmp_path, policy):
    """job number -> (time of its start decision, node) in `policy`'s decision log."""
    return {int(d["job_id"].split("!")[1]): (float(d["time"]), d["node"])
            for d in csv.DictReader(open(tmp_path / f"{policy}_decisions.csv"))}


def test_a_queue_head_waits_for_room_until_the_job_holding_the_memory_ends(tmp_path):
    # 2 nodes of 2 cores and 15 bytes of memory: one 10-byte file at a time. J1 (A) n1, loads
    # [1,11), ends 61. J2 (B) at 2: E_k = 10 + 30 and t_k = 2 on both: n1 (lowest index), whose
    # second core is free but whose memory holds A, in use: J2 waits for room (it would load B
    # next to A: 20 bytes) until J1's end at 61, then loads B [61,71) and ends at 91.
    # Responses 60, 89. Valid: no memory over capacity (khanna_run validates).
    nodes, stagings, response, makespan = khanna_run(
        tmp_path, "met", [(1, 1, "A", 60), (2, 2, "B", 30)], cores=2, memory=15)
    assert nodes == ["n1", "n1"]
    assert stagings == [("stage-w0-1-n000", 1.0), ("stage-w0-2-n000", 61.0)]
    assert decided_at(tmp_path, "met")[2] == (61.0, "n000")
    assert (response, makespan) == (74.5, 91.0)


def test_a_queue_head_waits_for_room_until_a_replica_is_loaded(tmp_path):
    # JDP+DLL, 15-byte memories. J1 (A) n1 at 1, loads [1,11); J2 (A) at 2 joins it on n1 (A's
    # second mapping there): A replicated to n2, [2,12). J3 (B) at 3: n2 is the least loaded
    # (n1 busy to 61), but its memory holds the replica loading: J3 waits for room until the
    # replica ends at 12 (then unused, evicted), loads B [12,22), ends at 32 (walltime 20).
    nodes, stagings, response, makespan = khanna_run(
        tmp_path, "jdp_dll", [(1, 1, "A", 60), (2, 2, "A", 40), (3, 3, "B", 20)], cores=2, memory=15)
    assert nodes == ["n1", "n1", "n2"]
    assert stagings == [("rep-A-n001-1", 2.0), ("stage-w0-1-n000", 1.0), ("stage-w0-3-n001", 12.0)]
    assert decided_at(tmp_path, "jdp_dll")[3] == (12.0, "n001")
    assert makespan == 61.0


def test_online_hps_does_not_nominate_a_job_whose_file_has_no_room(tmp_path):
    # One node of 2 cores and 15 bytes: J1 (A) starts at 1, loads [1,11), ends 61. J2 (B) at 2 has a
    # free core but B does not fit next to A, in use: not nominated (at 2, nor at A's load end at
    # 11) until J1's end at 61; loads B [61,71), ends 91. Responses 60, 89.
    nodes, stagings, response, makespan = khanna_run(
        tmp_path, "online_hps", [(1, 1, "A", 60), (2, 2, "B", 30)], nodes=1, cores=2, memory=15)
    assert nodes == ["n1", "n1"]
    assert stagings == [("stage-w0-1-n000", 1.0), ("stage-w0-2-n000", 61.0)]
    assert decided_at(tmp_path, "online_hps")[2] == (61.0, "n000")
    assert (response, makespan) == (74.5, 91.0)
