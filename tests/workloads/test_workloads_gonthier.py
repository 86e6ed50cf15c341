"""Reader for the authors' published workload format, both spellings."""

from pathlib import Path

import pytest

from batloc.workloads.errors import WorkloadError
from batloc.workloads.gonthier import parse_line, read_gonthier

DATA = Path(__file__).resolve().parents[1] / "data" / "workloads"


def test_keyed_lines_field_by_field():
    table, log = read_gonthier(DATA / "gonthier-keyed.txt")
    columns = ["source_id", "line", "user", "submit", "cores", "walltime", "run_time",
               "input_file", "input_size", "phase", "evaluated"]
    assert [tuple(r) for r in table[columns].itertuples(index=False)] == [
        ("1", 1, "mjbit", 0.0, 2, 864000.0, 808260.0, "1", 12.8e9, -2, False),
        ("2", 2, "marvin", 10.0, 20, 3600.0, 120.0, "2", 128e9, 1, True),
        ("3", 3, "marvin", 10.0, 20, 3600.0, 500.0, "2", 128e9, 1, True),
        ("7", 7, "zed", 50.0, 1, 120.0, 60.0, "4", 6.4e9, 2, False),  # capitalised keys, any order
    ]
    assert [(i.line, i.reason, i.detail) for i in log.issues] == [
        (4, "zero-length", ""),
        (5, "malformed", "delay is not a number: 'abc'"),
        (6, "malformed", "missing field(s) delay"),
    ]


def test_positional_lines():
    table, log = read_gonthier(DATA / "gonthier-positional.txt")
    assert table[["source_id", "line", "user", "submit", "cores", "run_time", "walltime"]].values.tolist() == [
        ["1", 2, "alice", 0.0, 4, 100.0, 200.0],
        ["2", 4, "bob", 5.0, 1, 50.0, 60.0],
    ]
    assert table["input_size"].tolist() == [25.6e9, 6.4e9]
    assert table["evaluated"].tolist() == [True, False]
    assert [(i.line, i.detail) for i in log.issues] == [(5, "negative cores: -1")]


def test_parse_line_ignores_unknown_and_multi_valued_keys():
    record = parse_line("{ id: 0 subtime: 0 delay: 15 walltime: 15 cores: 20 user: credit "
                        "duration_on_machine: 101.6 16.8 function_name: dna }")
    assert record["delay"] == "15" and record["duration_on_machine"] == "101.6"


def test_strict(tmp_path):
    with pytest.raises(WorkloadError, match=r"gonthier-keyed\.txt:4: zero-length"):
        read_gonthier(DATA / "gonthier-keyed.txt", strict=True)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(WorkloadError, match=r"empty\.txt: no job lines found"):
        read_gonthier(empty)
