"""Staging jobs (locality/staging.py): ids, profiles, and the book of loads in flight."""

from batloc.locality.staging import (STAGE_WORKLOAD, StagingBook, is_staging_job, staging_job_id,
                                     staging_profile, storage_mapping)


def test_staging_id_follows_the_contract():
    assert staging_job_id("w0!17", "n003") == "batloc-stage!stage-w0-17-n003"
    assert is_staging_job("batloc-stage!stage-w0-17-n003") and not is_staging_job("w0!17")
    assert staging_profile(1e9) == {"type": "data_staging", "nb_bytes": 1e9, "from": "pfs", "to": "mem"}
    assert storage_mapping(40, 42) == {"pfs": 40, "mem": 42}
    assert STAGE_WORKLOAD == "batloc-stage"


def test_jobs_needing_a_file_in_flight_wait_for_the_same_staging():
    book = StagingBook()
    st = book.begin("batloc-stage!stage-w0-1-n000", 0, "A", 10, 1.0, 11.0, "w0!1")
    assert book.find(0, "A") is st and book.find(1, "A") is None
    assert book.join(0, "A", "w0!2") is st and st.waiters == ["w0!1", "w0!2"]
    book.leave(st.id, "w0!1")            # its window ended before the load did
    book.leave(st.id, "w0!9")            # never waited: nothing happens
    book.leave("batloc-stage!gone", "w0!2")
    assert st.waiters == ["w0!2"] and len(book) == 1
    assert book.complete(st.id) is st
    assert len(book) == 0 and book.find(0, "A") is None


def test_a_second_load_of_a_file_takes_the_node_and_file_slot_over():
    # A replication and a job's load of the same file on one node: the later one is found by (node, file),
    # and completing the first leaves it there.
    book = StagingBook()
    first = book.begin("s1", 0, "A", 10, 0.0, 10.0, None)
    second = book.begin("s2", 0, "A", 10, 5.0, 15.0, "w0!3")
    assert book.find(0, "A") is second
    book.complete(first.id)
    assert book.find(0, "A") is second and len(book) == 1
