"""Batsim JSON as docs/contract.md §2/§6 fixes it."""

import json
from pathlib import Path

import pytest

from batloc.workloads import annotate
from batloc.workloads.errors import WorkloadError
from batloc.workloads.export import read_batsim, write_batsim
from batloc.workloads.swf import read_swf
from batloc.workloads.table import split_wide_jobs

SMALL = Path(__file__).resolve().parents[1] / "data" / "workloads" / "small.swf"


@pytest.fixture
def table():
    table, _ = read_swf(SMALL)
    table = split_wide_jobs(table, 20)
    table = annotate.annotate_files(table, "paper")
    return annotate.annotate_sessions(table, 300)


def test_json_shape(table, tmp_path):
    path = tmp_path / "w.json"
    write_batsim(table, path, nb_res=9720)
    data = json.loads(path.read_text())
    assert set(data) == {"nb_res", "jobs", "profiles", "batloc"}
    assert data["nb_res"] == 9720
    first = data["jobs"][0]
    assert first == {"id": 1, "subtime": 0, "res": 4, "walltime": 7200, "profile": "d3600", "user": "7",
                     "input_file": "f7-4-0", "input_size": 25.6e9, "evaluated": True, "session": "s7-0",
                     "source_id": "1"}
    # The 45-processor job's three pieces share their delay profile; 20-core pieces share a file.
    assert [j["profile"] for j in data["jobs"][2:5]] == ["d100"] * 3
    assert [j["input_file"] for j in data["jobs"][2:5]] == ["f7-20-0", "f7-20-0", "f7-5-0"]
    assert data["profiles"] == {name: {"type": "delay", "delay": delay} for name, delay in
                                [("d100", 100), ("d1800", 1800), ("d300", 300), ("d3600", 3600), ("d500", 500)]}
    assert sorted(data["profiles"]) == sorted({j["profile"] for j in data["jobs"]})
    meta = data["batloc"]
    assert meta["source"]["format"] == "swf"
    assert meta["sharing"]["rule"] == "paper" and meta["sessions"] == {"window": 300.0}
    assert meta["epoch"] == 1641168000


def test_output_is_byte_deterministic(table, tmp_path):
    write_batsim(table, tmp_path / "a.json", 9720)
    write_batsim(table, tmp_path / "b.json", 9720)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_read_back(table, tmp_path):
    path = tmp_path / "w.json"
    write_batsim(table, path, 9720)
    back = read_batsim(path)
    for column in ("id", "user", "submit", "cores", "walltime", "run_time", "input_file", "input_size", "session"):
        assert back[column].tolist() == table[column].tolist(), column
    assert back.attrs["nb_res"] == 9720 and back.attrs["epoch"] == 1641168000


def test_export_needs_files_and_reading_needs_json(table, tmp_path):
    with pytest.raises(WorkloadError, match="annotate files"):
        write_batsim(table.drop(columns=["input_file"]), tmp_path / "x.json", 1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [\n')
    with pytest.raises(WorkloadError, match=r"bad\.json:2: not valid JSON"):
        read_batsim(bad)


def test_a_workload_appears_whole_or_not_at_all(table, tmp_path):
    # Cut short (here: provenance that JSON cannot hold, after every job was written), no file is left,
    # temporary or final; an earlier workload at that path stays.
    path = tmp_path / "w.json"
    path.write_text("an earlier workload")
    with pytest.raises(TypeError, match="cannot store object in provenance"):
        write_batsim(table, path, nb_res=9720, provenance={"bad": object()})
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"] and path.read_text() == "an earlier workload"


@pytest.mark.parametrize("target, reason", [("/nonexistent/w.json", "No such file or directory"),
                                            ("/dev/full", "No space left on device")])
def test_a_workload_that_cannot_be_written_is_one_line_naming_it(table, target, reason):
    if target.startswith("/dev") and not Path(target).exists():
        pytest.skip(f"no {target}")
    with pytest.raises(WorkloadError) as error:
        write_batsim(table, target, nb_res=9720)
    assert str(error.value) == f"{target}: cannot write: {reason}"
