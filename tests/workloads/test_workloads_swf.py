"""SWF adapter on tests/data/workloads/small.swf, field by field."""

import gzip
import shutil
from pathlib import Path

import pytest

from batloc.workloads.errors import WorkloadError
from batloc.workloads.swf import read_swf
from batloc.workloads.table import split_wide_jobs

DATA = Path(__file__).resolve().parents[1] / "data" / "workloads"
SMALL = DATA / "small.swf"

# (source_id, line, user, submit, cores, walltime, run_time) after splitting at 20 cores per node.
EXPECTED = [
    ("1", 8, "7", 0.0, 4, 7200.0, 3600.0),
    ("2", 9, "8", 10.0, 2, 3600.0, 1800.0),    # allocated -1: requested processors used
    ("3", 10, "7", 20.0, 20, 600.0, 100.0),    # 45 processors: 20 + 20 + 5, same run time
    ("3", 10, "7", 20.0, 20, 600.0, 100.0),
    ("3", 10, "7", 20.0, 5, 600.0, 100.0),
    ("6", 13, "9", 50.0, 2, 300.0, 300.0),     # requested time -1: walltime := run time
    ("11", 19, "9", 100.0, 1, 1000.0, 500.0),  # cancelled while running: kept
]

EXPECTED_ISSUES = [
    (11, "dropped", "cancelled before start"),
    (12, "dropped", "zero-length"),
    (13, "repaired", "missing walltime"),
    (14, "dropped", "malformed"),
    (15, "dropped", "malformed"),
    (16, "dropped", "malformed"),
    (17, "dropped", "wider than MaxProcs"),
]


def _rows(table):
    columns = ["source_id", "line", "user", "submit", "cores", "walltime", "run_time"]
    return [tuple(row) for row in table[columns].itertuples(index=False)]


def test_small_swf_field_by_field():
    table, log = read_swf(SMALL)
    table = split_wide_jobs(table, 20)
    assert _rows(table) == EXPECTED
    assert table["id"].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert [(i.line, i.action, i.reason) for i in log.issues] == EXPECTED_ISSUES
    assert table.attrs["epoch"] == 1641168000
    assert table.attrs["provenance"]["source"]["header"]["MaxProcs"] == "80"
    assert table.attrs["provenance"]["split"]["jobs_split"] == 1


def test_issue_details_name_the_problem():
    _, log = read_swf(SMALL)
    details = {i.line: i.detail for i in log.issues}
    assert details[14] == "expected 18 fields, found 17"
    assert details[15] == "run time is not a number: 'abc'"
    assert details[16] == "negative allocated processors: -3"
    assert str(log.issues[0]).startswith(f"{SMALL}:11: dropped (cancelled before start)")


def test_counts_for_provenance():
    _, log = read_swf(SMALL)
    assert log.counts() == {
        "dropped": {"cancelled before start": 1, "malformed": 3, "wider than MaxProcs": 1, "zero-length": 1},
        "repaired": {"missing walltime": 1},
    }


def test_default_walltime_repairs_missing_requests():
    table, _ = read_swf(SMALL, default_walltime=3600)
    assert table.loc[table["source_id"] == "6", "walltime"].tolist() == [3600.0]


def test_strict_makes_first_issue_an_error():
    with pytest.raises(WorkloadError, match=r"small\.swf:11: cancelled before start"):
        read_swf(SMALL, strict=True)


def test_gzip_is_read_like_plain(tmp_path):
    packed = tmp_path / "small.swf.gz"
    with open(SMALL, "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plain, _ = read_swf(SMALL)
    zipped, _ = read_swf(packed)
    assert _rows(plain) == _rows(zipped)


def test_unreadable_and_wrong_files(tmp_path):
    with pytest.raises(WorkloadError, match=r"missing\.swf: cannot read"):
        read_swf(tmp_path / "missing.swf")
    truncated = tmp_path / "broken.swf.gz"
    truncated.write_bytes(gzip.compress(SMALL.read_bytes())[:60])
    with pytest.raises(WorkloadError, match=r"broken\.swf\.gz: cannot read"):
        read_swf(truncated)
    other = tmp_path / "sacct.swf"
    shutil.copy(DATA / "sacct.txt", other)
    with pytest.raises(WorkloadError, match=r"sacct\.swf: no usable job.*line 1 .*is this a Standard Workload"):
        read_swf(other)


@pytest.mark.parametrize("packed", [False, True])
def test_an_over_long_line_is_refused_naming_it_without_reading_it_whole(tmp_path, packed):
    # A corrupt "line" is read no further than the bound (1 MiB characters): one 2 GiB line
    # used to need 7.5 GB of memory before a MemoryError. Here 3 MiB of digits on line 9.
    lines = SMALL.read_text().splitlines(keepends=True)
    text = "".join(lines[:8]) + "7" * (3 << 20) + "\n" + "".join(lines[8:])
    path = tmp_path / ("long.swf.gz" if packed else "long.swf")
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    with pytest.raises(WorkloadError) as error:
        read_swf(path)
    assert str(error.value) == (f"{path}:9: line longer than 1048576 characters: not a trace line "
                                "(is this the right file?)")
    # a line of exactly the bound, newline aside, is read as any other (here: dropped as malformed)
    path.write_text("".join(lines[:8]) + "7" * (1 << 20) + "\n" + "".join(lines[8:]))
    table, log = read_swf(path)
    assert (9, "dropped", "malformed") in [(i.line, i.action, i.reason) for i in log.issues]


def test_times_beyond_the_engine_horizon_are_dropped_naming_the_line(tmp_path):
    # 1e300 s used to be written as a 300-digit subtime and delay, which the engine then refuses
    path = tmp_path / "huge.swf"
    path.write_text(SMALL.read_text() + "50 1e300 -1 100 4 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n"
                                        "51 100 -1 5e9 4 -1 -1 4 200 -1 1 7 1 1 1 1 -1 -1\n")
    table, log = read_swf(path)
    assert "50" not in set(table["source_id"]) and "51" not in set(table["source_id"])
    last = len(SMALL.read_text().splitlines())
    assert [str(i) for i in log.issues[-2:]] == [
        f"{path}:{last + 1}: dropped (malformed): submit time 1e300 beyond 2^32 s (about 136 years)",
        f"{path}:{last + 2}: dropped (malformed): run time 5e9 beyond 2^32 s (about 136 years)"]
