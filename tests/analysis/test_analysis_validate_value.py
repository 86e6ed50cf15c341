"""`batloc validate`'s memory replay under the file-sharing family's `value` model (Eq. 7), by hand.

One node n000 of 20 bytes (n001 beside it), files of 10 bytes except D (15), each load 1 s:

  t  0  w0!1 A miss (loads [0, 1)), runs to 2        A: 1 access
  t  3  w0!2 A hit, to 4;  t 5  w0!3 A hit, to 6     A: 3 accesses, last used 6
  t  7  w0!4 B miss ([7, 8)), to 9                   B: 1 access, last used 9
  t 10  w0!5 C miss ([10, 11)), to 20: room for C needed, one of A, B leaves:
        lru evicts A (last used 6 < 9); value evicts B (1 x 10 / 1 = 10 < A's 3 x 10 / 1 = 30)
  t 12  w0!6 logs a hit on A: true under value, false under lru.
"""

from batloc.analysis import memory_model, replications, validate

MEMORIES = {"n000": 20.0, "n001": 20.0}


def job_row(jid, start, finish, workload="w0", state="COMPLETED_SUCCESSFULLY"):
    return {"job_id": str(jid), "workload_name": workload, "starting_time": f"{start:.6f}", "_start": float(start),
            "_finish": float(finish), "_submit": float(start), "final_state": state}


def stage(jid, start, node="n000"):
    return job_row(f"stage-w0-{jid}-{node}", start, start + 1, workload="batloc-stage")


def decision(jid, t, case, file, size=10.0, node="n000"):
    staging = f"batloc-stage!stage-w0-{jid}-{node}" if case == "miss" else ""
    return {"time": f"{t:.6f}", "job_id": f"w0!{jid}", "node": node, "cache": case, "input_file": file,
            "input_size": f"{size:.6f}", "staging_job": staging}


ROWS = [job_row(1, 1, 2), stage(1, 0), job_row(2, 3, 4), job_row(3, 5, 6), job_row(4, 8, 9), stage(4, 7),
        job_row(5, 11, 20), stage(5, 10), job_row(6, 12, 13)]
DECISIONS = [decision(1, 0, "miss", "A"), decision(2, 3, "hit", "A"), decision(3, 5, "hit", "A"),
             decision(4, 7, "miss", "B"), decision(5, 10, "miss", "C")]


def kinds(violations):
    return [kind for kind, _ in violations]


def test_value_and_lru_evict_different_files():
    hit_a = DECISIONS + [decision(6, 12, "hit", "A")]
    assert validate.check_files_and_memory(ROWS, hit_a, MEMORIES, "value") == []
    assert kinds(validate.check_files_and_memory(ROWS, hit_a, MEMORIES, "lru")) == [validate.FALSE_HIT]


def test_a_hit_on_a_file_value_evicted_names_job_file_node_and_time():
    hit_b = DECISIONS + [decision(6, 12, "hit", "B")]
    assert validate.check_files_and_memory(ROWS, hit_b, MEMORIES, "lru") == []
    assert validate.check_files_and_memory(ROWS, hit_b, MEMORIES, "value") == [(
        validate.FALSE_HIT, "w0!6: logged as a hit at 12.000000 but B is not in n000's memory under the value model")]


def test_copies_and_accesses_on_other_nodes_count():
    # Eq. 7's counts are cluster-wide. A loaded on n001 too (w0!7, from 0.5 to 30): A = 4 accesses x 10 / 2 copies
    # = 20 at 10; B read on n001 by w0!9 (miss at 8.2) and w0!10-12 (hits): B = 5 x 10 / 2 = 25. Value now
    # evicts A, as lru does: a hit on A at 12 is false, one on B true.
    rows = ROWS + [job_row(7, 1.5, 30), stage(7, 0.5, "n001"), job_row(9, 9.2, 9.25), stage(9, 8.2, "n001")]
    rows += [job_row(j, t, t + 0.05) for j, t in ((10, 9.3), (11, 9.4), (12, 9.5))]
    decisions = (DECISIONS[:1] + [decision(7, 0.5, "miss", "A", node="n001")] + DECISIONS[1:4]
                 + [decision(9, 8.2, "miss", "B", node="n001")]
                 + [decision(j, t, "hit", "B", node="n001") for j, t in ((10, 9.3), (11, 9.4), (12, 9.5))]
                 + DECISIONS[4:])
    hit_a, hit_b = decisions + [decision(6, 12, "hit", "A")], decisions + [decision(6, 12, "hit", "B")]
    assert kinds(validate.check_files_and_memory(rows, hit_a, MEMORIES, "value")) == [validate.FALSE_HIT]
    assert validate.check_files_and_memory(rows, hit_b, MEMORIES, "value") == []


def test_a_node_over_capacity_names_job_file_node_and_time():
    # w0!7 starts D (15 bytes) on n000's second core at 12 while C (10) is in use: A (unused) leaves, 25 > 20.
    rows = ROWS + [job_row(7, 13, 14), stage(7, 12)]
    over = DECISIONS + [decision(7, 12, "miss", "D", size=15.0)]
    assert validate.check_files_and_memory(rows, over, MEMORIES, "value") == [(
        validate.OVER_CAPACITY, "n000: memory holds 25 bytes > capacity 20 at 12.000000 (after w0!7 starts, "
                                "reading D)")]


def test_a_replication_claims_its_node_memory_from_its_booking():
    # JDP+DLL (threshold 2): w0!1 and w0!2 (file A) mapped to n001, submitted at 0 and 4; the second mapping books
    # a replication of A to n000 at 4, whose link is busy (B's load for w0!3, [3.5, 6)): its staging is issued
    # at 6 and ends at 7. From 4 A holds n000's memory beside B in use, so C's start there at 5 overflows it.
    # w0!5 reads A from 5.5 (n001's first mapping since): the last submission of A before the issue, not the booking.
    jobs = {str(i): {"id": i, "input_file": f, "input_size": 10.0} for i, f in ((1, "A"), (2, "A"), (3, "B"),
                                                                                (4, "C"), (5, "A"))}
    rows = [dict(job_row(1, 1, 3), _submit=0.0), stage(1, 0, "n001"), dict(job_row(2, 4, 5), _submit=4.0),
            dict(job_row(3, 6, 9), _submit=3.5), dict(stage(3, 3.5), _finish=6.0),
            dict(job_row(4, 6, 9), _submit=5.0), stage(4, 5),
            dict(job_row(5, 5.5, 5.8), _submit=5.5),
            dict(job_row("rep-A-n000-1", 6, 7, workload="batloc-stage"), _submit=6.0)]
    decisions = [decision(1, 0, "miss", "A", node="n001"), decision(3, 3.5, "miss", "B"),
                 decision(2, 4, "hit", "A", node="n001"), decision(4, 5, "miss", "C"),
                 decision(5, 5.5, "hit", "A", node="n001")]
    assert replications.parse("rep-A-n000-1", MEMORIES) == ("A", "n000", 1)
    assert replications.parse("rep-f-x-n-00-12", {"n-00": 1, "00": 1}) == ("f-x", "n-00", 12)
    assert [e[:3] for e in replications.replication_events(rows, jobs, decisions, MEMORIES)] == [
        (4.0, 2, "replica"), (7.0, 0, "replica loaded")]
    found = validate.check_files_and_memory(rows, decisions, MEMORIES, "lru", jobs)
    assert found == [(validate.OVER_CAPACITY, "n000: memory holds 30 bytes > capacity 20 at 5.000000 (after w0!4 "
                                              "starts, reading C)")]
    # without the replication n000 holds B and C only
    assert validate.check_files_and_memory(rows[:-1], decisions, MEMORIES, "lru", jobs) == []


def test_the_family_s_runs_are_replayed_under_their_own_model():
    for policy in ("met", "mct", "sa", "online_hps"):
        assert memory_model.memory_model({"policy": policy}) == "value"
    assert memory_model.memory_model({"policy": "jdp_dll"}) == "lru"      # LRU, as in the original
    assert memory_model.memory_model({"policy": "met", "options": {"cache": "paper"}}) == "paper"
    assert memory_model.command_model("python schedulers/mct.py -o '{}'") == "value"


def test_a_start_that_came_before_an_end_of_its_instant_is_no_false_hit():
    # Under Batsim's timing w0!3 (submitted at 10) may start before w0!1's end at 10 reaches the scheduler
    # (contract §4). Then A is still in use and C's load evicts B (A: 1 access x 10 = 10, B: 3 x 10 = 30);
    # ended first, A would leave instead. w0!4's hit on A at 11.5 says which order the scheduler saw.
    rows = [job_row(1, 1, 10), stage(1, 0), job_row(2, 3, 4), stage(2, 2), job_row(5, 5, 5.5), job_row(6, 6, 6.5),
            job_row(3, 11, 12), stage(3, 10), job_row(4, 11.5, 12)]
    decisions = [decision(1, 0, "miss", "A"), decision(2, 2, "miss", "B"), decision(5, 5, "hit", "B"),
                 decision(6, 6, "hit", "B"), decision(3, 10, "miss", "C")]
    assert validate.check_files_and_memory(rows, decisions + [decision(4, 11.5, "hit", "A")], MEMORIES, "value") == []
    assert validate.check_files_and_memory(rows, decisions + [decision(4, 11.5, "hit", "B")], MEMORIES, "value") == []
    # a second later w0!1's end is no longer in w0!3's instant: A left for C, a hit on it is false
    late = [job_row(1, 1, 9)] + rows[1:]
    assert kinds(validate.check_files_and_memory(late, decisions + [decision(4, 11.5, "hit", "A")], MEMORIES,
                                                 "value")) == [validate.FALSE_HIT]
    assert kinds(validate.check_files_and_memory(rows, decisions + [decision(4, 11.5, "hit", "D")], MEMORIES,
                                                 "value")) == [validate.FALSE_HIT]
