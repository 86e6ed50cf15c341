"""One node's memory under the memory models (locality/cache.py) and Eq. 7's value order
(locality/value_cache.py), event by event."""

from batloc.locality.cache import NodeCache
from batloc.locality.value_cache import FileCensus, ValueCache


def test_paper_cache_keeps_a_file_until_another_job_starts():
    c = NodeCache(100, "paper")
    assert c.start_job("A", 10, 0.0)[0] == "miss"
    c.load_done("A", 1.0)
    c.end_job("A", 5.0)
    assert c.orphans() == [("A", 10.0)]
    case, evicted = c.start_job("B", 10, 6.0)
    assert (case, evicted) == ("miss", ["A"])


def test_paper_cache_a_start_at_the_instant_of_the_last_end_evicts_in_either_order():
    # A's last user ends at 5 and B's job starts at 5: [e, t] is closed, so A
    # is lost whether the end or the start reaches the scheduler first.
    for end_first in (True, False):
        c = NodeCache(100, "paper")
        c.start_job("A", 10, 0.0)
        c.load_done("A", 1.0)
        if end_first:
            c.end_job("A", 5.0)
            assert c.start_job("B", 10, 5.0) == ("miss", ["A"])
        else:
            assert c.start_job("B", 10, 5.0) == ("miss", [])
            assert c.end_job("A", 5.0) == ["A"]
        assert c.status("A") == "absent"
    # A start at an earlier instant is before the end: A survives it.
    c = NodeCache(100, "paper")
    c.start_job("A", 10, 0.0)
    c.load_done("A", 1.0)
    c.start_job("B", 10, 4.0)
    assert c.end_job("A", 5.0) == [] and c.status("A") == "loaded"


def test_strict_cache_drops_a_file_with_its_last_user_after_its_end_instant():
    c = NodeCache(100, "strict")
    c.start_job("A", 10, 0.0)
    c.load_done("A", 1.0)
    assert c.end_job("A", 5.0) == []                      # still there during t = 5
    assert c.status("A", 5.0) == "loaded"
    assert c.start_job("A", 10, 5.0) == ("hit", [])       # a start in that very instant finds it
    assert c.end_job("A", 8.0) == []
    assert c.status("A", 8.5) == "absent"                 # any later instant: gone
    assert c.start_job("A", 10, 9.0) == ("miss", [])
    c.load_done("A", 10.0)
    c.end_job("A", 12.0)
    assert c.start_job("B", 10, 13.0) == ("miss", ["A"])  # dropped at the next event, and said so


def test_lru_cache_never_evicts_a_file_in_use():
    c = NodeCache(25, "lru")
    for i, f in enumerate("AB"):
        c.start_job(f, 10, float(i))
        c.load_done(f, float(i))
    c.end_job("B", 3.0)                    # A still used, B unused
    case, evicted = c.start_job("C", 10, 4.0)
    assert (case, evicted) == ("miss", ["B"])
    assert c.overflows == []


def test_lru_evicts_the_least_recently_used_unused_file_and_records_what_cannot_fit():
    c = NodeCache(30, "lru")
    for t, f in enumerate("ABC"):
        c.start_job(f, 10, float(t))
        c.load_done(f, float(t))
        c.end_job(f, float(t) + 0.5)
    c.start_job("A", 10, 5.0)                  # A used again: now the most recent
    c.end_job("A", 5.5)
    assert c.start_job("D", 10, 6.0) == ("miss", ["B"])
    # 25 bytes: C, A and D are unused but D is in use now; C then A go, and 25 + 10 > 30 still.
    assert c.start_job("E", 25, 7.0) == ("miss", ["C", "A"])
    assert c.overflows == [(7.0, "E", 35.0)]


def test_a_file_whose_last_user_ends_during_its_load_is_forgotten():
    # Its load outlived every job that wanted it (a window ended first): no model keeps it.
    for model in ("paper", "strict", "lru"):
        c = NodeCache(100, model)
        c.start_job("A", 10, 0.0, load_end=20.0)
        assert c.status("A") == "loading"
        assert c.end_job("A", 5.0) == ["A"]
        c.load_done("A", 20.0)
        assert c.status("A") == "absent", model


def test_authors_cache_keeps_a_loading_file_through_its_last_users_end_instant():
    # The C simulator (R9): its last user ended in this very second, so the file is still valid,
    # loading: a job starting then waits for the rest of that load; a second later it is gone.
    c = NodeCache(100, "authors")
    c.start_job("A", 10, 0.0, load_end=20.0)
    assert c.end_job("A", 5.0) == []
    assert c.status("A", 5.0) == "loading"
    assert c.start_job("A", 10, 5.0, load_end=25.0) == ("wait", [])
    c.load_done("A", 20.0)
    assert c.status("A", 20.0) == "loaded"
    d = NodeCache(100, "authors")
    d.start_job("A", 10, 0.0, load_end=20.0)
    d.end_job("A", 5.0)
    assert d.status("A", 6.0) == "absent"
    assert d.used_bytes() == 0


def test_authors_cache_ignores_a_stale_load_of_a_file_loaded_again():
    # One load end per file and node: the load begun at 0 for a user that ended at 5 completes
    # at 20, but the file was dropped at 6 and its new load (from 8) ends at 28: still loading.
    c = NodeCache(100, "authors")
    c.start_job("A", 10, 0.0, load_end=20.0)
    c.end_job("A", 5.0)
    assert c.start_job("A", 10, 8.0, load_end=28.0) == ("miss", ["A"])     # dropped, then loaded again
    c.load_done("A", 20.0)
    assert c.status("A", 20.0) == "loading"
    c.load_done("A", 28.0)
    assert c.status("A", 28.0) == "loaded"


def test_value_cache_evicts_by_accesses_times_size_over_copies():
    # Eq. 7 on node 0 (capacity 30): A accessed 3 times, one copy: 3 x 10 = 30; B once, but
    # 20 bytes: 20; C twice, 10 bytes, also held by node 1: 2 x 10 / 2 = 10. To admit D (10
    # bytes, 40 in use) C goes first, then B; A, the most valuable, stays.
    census = FileCensus()
    node0, node1 = ValueCache(40, census), ValueCache(40, census)
    for f, size, n in (("A", 10, 3), ("B", 20, 1), ("C", 10, 2)):
        for _ in range(n):
            census.accessed(f)
        node0.start_job(f, size, 0.0)
        node0.load_done(f, 1.0)
        census.add(f, 0)
        node0.end_job(f, 2.0)
    node1.start_job("C", 10, 0.0)
    census.add("C", 1)
    assert census.value("A", 10) == 30 and census.value("B", 20) == 20 and census.value("C", 10) == 10
    case, evicted = node0.start_job("D", 10, 3.0)
    assert (case, evicted) == ("miss", ["C"])
    census.drop(evicted, 0)
    assert sorted(census.nodes("C")) == [1]
    assert node0.start_job("E", 20, 4.0) == ("miss", ["B"])
    assert node0.status("A") == "loaded"


# ---- several files per job, outputs, write-back pins (workflows, contract §2b) ----

def test_a_job_reading_several_files_never_evicts_its_own_under_paper():
    c = NodeCache(100, "paper")
    c.start_files((("A", 10), ("B", 10)), 0.0)
    c.load_done("A", 1.0)
    c.load_done("B", 1.0)
    assert c.end_files(("A", "B"), 2.0) == []
    assert c.start_job("C", 10, 3.0) == ("miss", ["A", "B"])   # paper: a start drops the unused files
    c = NodeCache(100, "paper")
    c.start_files((("A", 10), ("B", 10)), 0.0)
    c.load_done("A", 1.0)
    c.load_done("B", 1.0)
    c.end_files(("A", "B"), 2.0)
    cases, evicted = c.start_files((("A", 10), ("B", 10), ("D", 5)), 3.0)
    assert (cases, evicted) == (["hit", "hit", "miss"], [])
    c.load_done("D", 4.0)
    assert c.end_files(("A", "B", "D"), 9.0) == []
    assert c.used_bytes() == 25


def test_a_job_reading_several_files_never_evicts_its_own_under_lru():
    # B (least recently used) and C are resident and unused; a job reads A (absent, 20) then B, in 30 bytes:
    # room for A drops C, not B, which its start holds. Dropping B made the load of A the job's only one
    # while its decision said miss for B too (MCT on the six workflows: a staging of 6.6 GB logged as 8.8 GB).
    for model in (NodeCache(30, "lru"), ValueCache(30, FileCensus())):
        c = model
        for t, f in enumerate("BC"):
            c.start_job(f, 10, float(t))
            c.load_done(f, float(t))
            c.end_job(f, float(t) + 0.5)
        assert c.start_files((("A", 20), ("B", 10)), 5.0) == (["miss", "hit"], ["C"])
        assert c.overflows == []


def test_an_output_appears_unused_at_its_producers_end_and_follows_the_model():
    # paper: kept until another job starts on the node (its consumer there hits it)
    c = NodeCache(100, "paper")
    c.start_job("A", 10, 0.0)
    c.load_done("A", 1.0)
    c.end_job("A", 5.0)
    assert c.add_output("out", 20, 5.0) == []
    assert c.status("out") == "loaded" and c.used_bytes() == 30
    assert c.start_files((("out", 20),), 5.0) == (["hit"], ["A"])
    # ... and a job with another file evicts it
    c = NodeCache(100, "paper")
    c.add_output("out", 20, 5.0)
    assert c.start_job("B", 10, 6.0) == ("miss", ["out"])
    # strict: through the producer's end instant only
    c = NodeCache(100, "strict")
    c.add_output("out", 20, 5.0)
    assert c.status("out", 5.0) == "loaded" and c.status("out", 5.5) == "absent"
    # lru: counted against the capacity, evicting the least recently used unused file
    c = NodeCache(30, "lru")
    c.start_job("A", 20, 0.0)
    c.load_done("A", 1.0)
    c.end_job("A", 2.0)
    assert c.add_output("out", 20, 3.0) == ["A"]
    assert c.used_bytes() == 20


def test_a_pinned_output_stays_until_its_write_back_ends():
    for model in ("paper", "strict", "lru"):
        c = NodeCache(30, model)
        c.add_output("out", 20, 5.0, pinned=True)
        # no start, no later instant, no room needed evicts it
        case, evicted = c.start_job("B", 10, 6.0)
        assert "out" not in evicted and c.status("out", 7.0) == "loaded", model
        assert c.used_bytes() == 30 and not c.room_for(1, 7.0)
        c.load_done("B", 7.0)
        c.end_job("B", 8.0)
        c.unpin("out", 9.0)                     # written back: an ordinary unused file again
        assert c.status("out", 9.0) == "loaded", model
        c.start_job("C", 10, 10.0)
        assert c.status("out", 10.0) == ("loaded" if model == "lru" else "absent"), model


def test_paper_an_end_arriving_latencies_after_a_start_of_its_instant_still_drops_the_file():
    # The saturated day under Batsim's message timing (LEA, n091, t = 57 681): w0!21199, the last user of
    # fu020, ends at 57 681; w0!21211 starts there with another file in a message 0.2 µs before that end
    # reaches the scheduler. One instant as the outputs print it: the paper model drops fu020 at the end,
    # as the validator's replay (ends, then starts) does, so a later start of the instant is a miss.
    from batloc.locality.cache import NodeCache

    c = NodeCache(100.0, "paper")
    c.start_job("fu020", 10, 57000.0, load_end=57000.0)
    c.load_done("fu020", 57000.0)
    assert c.start_job("fu002", 20, 57681.0000001, load_end=57681.0000001)[0] == "miss"
    assert c.end_job("fu020", 57681.0000003) == ["fu020"]
    assert c.status("fu020") == "absent"
    # a start a whole microsecond earlier is another instant: the file survives its last user's end
    d = NodeCache(100.0, "paper")
    d.start_job("fu020", 10, 57000.0, load_end=57000.0)
    d.load_done("fu020", 57000.0)
    d.start_job("fu002", 20, 57680.999998, load_end=57680.999998)
    assert d.end_job("fu020", 57681.0000003) == [] and d.status("fu020") == "loaded"
