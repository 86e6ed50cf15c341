"""The file-sharing rules at their boundaries, on tests/data/workloads/sharing.swf.

Trace (user, cores, submit): 1:(1,1,0) 2:(1,1,799) 3:(1,1,1600) 4:(1,2,1600)
5:(2,1,1700) 6:(1,1,2000) 7:(1,1,2799) 8:(1,1,3600).
"""

from pathlib import Path

import pandas as pd
import pytest

from batloc.workloads import annotate
from batloc.workloads.swf import read_swf

SHARING = Path(__file__).resolve().parents[1] / "data" / "workloads" / "sharing.swf"


@pytest.fixture(scope="module")
def trace():
    table, log = read_swf(SHARING)
    assert not log.issues
    return table


def test_paper_rule(trace):
    files = annotate.annotate_files(trace, "paper")["input_file"].tolist()
    assert files == [
        "f1-1-0", "f1-1-0",  # 799 s after the group's first job: shares
        "f1-1-1",            # 1600 s after it: a new frame opens
        "f1-2-0",            # same user and time, other core count: never shares
        "f2-1-0",            # other user: never shares
        "f1-1-1",            # 400 s into job 3's frame, whatever user 2 did in between
        "f1-1-2",            # 1199 s after the frame opened: new frame (799 s after job 6 does not matter)
        "f1-1-3",            # 801 s after job 7: new
    ]


def test_consecutive_rule(trace):
    files = annotate.annotate_files(trace, "consecutive")["input_file"].tolist()
    assert files == [
        "f1-1-0", "f1-1-0",  # next submission, 799 s later: shares
        "f1-1-1",            # next submission but 801 s later: new
        "f1-2-0",
        "f2-1-0",
        "f1-1-2",            # user 2 submitted in between: the group was closed
        "f1-1-2",            # next submission, 799 s after job 6 (sliding window): shares
        "f1-1-3",            # 801 s: new
    ]


def test_file_size_follows_cores(trace):
    out = annotate.annotate_files(trace, "paper", cores_per_node=20, node_memory=128e9)
    assert out["input_size"].tolist() == [6.4e9] * 3 + [12.8e9] + [6.4e9] * 4
    assert out.attrs["provenance"]["sharing"] == {
        "rule": "paper", "window": 800.0, "keys": ["user", "cores"], "cores_per_node": 20, "node_memory": 128e9}


@pytest.mark.parametrize("rule", annotate.RULES)
def test_exactly_window_seconds_still_shares(rule):
    table = pd.DataFrame({"user": ["a", "a", "a"], "cores": [1, 1, 1], "submit": [0.0, 800.0, 1600.5]})
    assert annotate.group_ids(table, rule).tolist() == ["fa-1-0", "fa-1-0", "fa-1-1"]


def test_window_and_keys_are_parameters(trace):
    by_user = annotate.annotate_files(trace, "paper", window=2000, keys=["user"])
    # 2000 s frames from user 1's first job: jobs at 0..2000 (inclusive), then 2799 and 3600.
    assert by_user["input_file"].tolist() == ["f1-0"] * 4 + ["f2-0", "f1-0"] + ["f1-1"] * 2
    # A file shared by jobs of different widths is as large as the widest needs.
    assert by_user["input_size"].tolist()[:4] == [12.8e9] * 4


def test_group_ids_ignore_other_users_jobs(trace):
    alone = annotate.group_ids(trace[trace["user"] == "1"], "paper").tolist()
    together = annotate.annotate_files(trace, "paper")
    assert together.loc[together["user"] == "1", "input_file"].tolist() == alone


def test_unsorted_input_gets_the_same_groups(trace):
    shuffled = trace.sample(frac=1.0, random_state=3)
    ids = annotate.group_ids(shuffled, "consecutive")
    assert ids.sort_index().tolist() == annotate.group_ids(trace, "consecutive").tolist()


def test_sessions_and_overhead(trace):
    out = annotate.annotate_sessions(trace, 300)
    assert out["session"].tolist() == ["s1-0", "s1-1", "s1-2", "s1-2", "s2-0", "s1-3", "s1-4", "s1-5"]
    slower = annotate.add_overhead(trace, 120)
    assert (slower["run_time"] - trace["run_time"]).tolist() == [120.0] * 8
    assert (slower["walltime"] - trace["walltime"]).tolist() == [120.0] * 8


def test_bad_parameters(trace):
    with pytest.raises(ValueError, match="unknown sharing rule"):
        annotate.group_ids(trace, "nearby")
    with pytest.raises(ValueError, match="grouping keys"):
        annotate.group_ids(trace, keys=["project"])


def test_fit_caps_a_file_at_what_its_jobs_had_to_spare_in_the_trace():
    # one file read by jobs 1-2 (spare 100 s and 500 s), one by job 3 (spare 2 000 s), one by job 4, which
    # used its whole walltime (no time to spare: it does not cap), all 20 cores of a 128 GB node at 1 GB/s
    table = pd.DataFrame({"id": [1, 2, 3, 4], "user": ["a", "a", "a", "b"], "cores": 20,
                          "submit": [0.0, 10.0, 5000.0, 0.0], "walltime": [200.0, 600.0, 3000.0, 50.0],
                          "run_time": [100.0, 100.0, 1000.0, 50.0]})
    out = annotate.annotate_files(table, "paper", cores_per_node=20, node_memory=128e9, fit_bandwidth=1e9)
    assert out["input_file"].tolist() == ["fa-20-0", "fa-20-0", "fa-20-1", "fb-20-0"]
    # the shared file loads in the 100 s job 1 had to spare; 2 000 s hold a whole 128 GB node
    assert out["input_size"].tolist() == [100e9, 100e9, 128e9, 128e9]
    sharing = out.attrs["provenance"]["sharing"]
    assert (sharing["file_size"], sharing["bandwidth"], sharing["capped"]) == ("fit", 1e9, 2)
    paper = annotate.annotate_files(table, "paper", cores_per_node=20, node_memory=128e9)
    assert paper["input_size"].tolist() == [128e9] * 4 and "file_size" not in paper.attrs["provenance"]["sharing"]
    with pytest.raises(ValueError, match="must be > 0"):
        annotate.annotate_files(table, fit_bandwidth=0)


def test_session_boundary_is_inclusive():
    # docs/scheduler-semantics.md, Metrics: a job exactly 300 s after the session's first joins it.
    table = pd.DataFrame({"id": [1, 2, 3, 4], "user": "u", "submit": [0.0, 300.0, 300.5, 600.5]})
    out = annotate.annotate_sessions(table)
    assert out["session"].tolist() == ["su-0", "su-0", "su-1", "su-1"]
