"""sacct --parsable2 adapter on tests/data/workloads/sacct.txt, field by field."""

from pathlib import Path

import pytest

from batloc.workloads.errors import WorkloadError
from batloc.workloads.sacct import read_sacct
from batloc.workloads.slurmtime import parse_duration
from batloc.workloads.table import split_wide_jobs

SACCT = Path(__file__).resolve().parents[1] / "data" / "workloads" / "sacct.txt"
MIDNIGHT_2022_01_03 = 1641168000

EXPECTED = [  # (source_id, line, user, submit, cores, walltime, run_time)
    ("100", 2, "alice", 36000.0, 4, 7200.0, 3600.0),
    ("101", 5, "bob", 36600.0, 20, 172800.0, 93600.0),  # 40 CPUs on 2 nodes: two 20-core jobs
    ("101", 5, "bob", 36600.0, 20, 172800.0, 93600.0),
    ("104", 8, "carol", 38400.0, 2, 600.0, 600.0),      # UNLIMITED: walltime := run time
    ("105", 9, "dave", 39000.0, 1, 1800.0, 1800.0),     # Partition_Limit: idem
    ("110", 14, "frank", 43200.0, 3, 1800.0, 1200.0),   # cancelled while running: kept
    ("107_3", 11, "erin", 86430.0, 1, 300.0, 60.0),     # array task; limit "5" = 5 minutes
]

EXPECTED_ISSUES = [
    (6, "dropped", "cancelled before start"),
    (7, "dropped", "zero-length"),
    (8, "repaired", "missing walltime"),
    (9, "repaired", "missing walltime"),
    (10, "dropped", "not finished"),
    (12, "dropped", "malformed"),
    (13, "dropped", "malformed"),
    (15, "dropped", "malformed"),
]


def test_sacct_field_by_field():
    table, log = read_sacct(SACCT)
    table = split_wide_jobs(table, 20)
    columns = ["source_id", "line", "user", "submit", "cores", "walltime", "run_time"]
    assert [tuple(r) for r in table[columns].itertuples(index=False)] == EXPECTED
    assert table.attrs["epoch"] == MIDNIGHT_2022_01_03
    assert table.attrs["provenance"]["source"]["steps_ignored"] == 2
    assert [(i.line, i.action, i.reason) for i in log.issues] == EXPECTED_ISSUES
    details = {i.line: i.detail for i in log.issues}
    assert details[10] == "PENDING"
    assert details[12] == "not a Slurm duration: 'ten minutes'"
    assert details[13] == "expected 10 columns, found 9"
    assert "yesterday" in details[15]


@pytest.mark.parametrize("text, seconds", [
    ("01:00:00", 3600), ("1-02:00:00", 93600), ("2-00:00:00", 172800), ("30:00", 1800),
    ("5", 300), ("1-02", 93600), ("1-02:03", 93780), ("00:00:01.500", 1.5),
    ("UNLIMITED", None), ("Partition_Limit", None), ("INFINITE", None),
])
def test_slurm_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten", "1:2:3:4", "-5", "01:60:00", "1-25:00:00", "x-01:00:00"])
def test_bad_slurm_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_strict_and_missing_columns(tmp_path):
    with pytest.raises(WorkloadError, match=r"sacct\.txt:6: cancelled before start"):
        read_sacct(SACCT, strict=True)
    bad = tmp_path / "bad.txt"
    bad.write_text("JobID|User|Submit\n1|a|2022-01-03T00:00:00\n")
    with pytest.raises(WorkloadError, match=r"bad\.txt:1: not sacct --parsable2 output: missing column\(s\) "
                                            r"Timelimit, State, AllocCPUS or NCPUS"):
        read_sacct(bad)


def test_default_walltime_for_unlimited_jobs():
    table, _ = read_sacct(SACCT, default_walltime=86400)
    assert table.set_index("source_id").loc[["104", "105"], "walltime"].tolist() == [86400.0, 86400.0]
