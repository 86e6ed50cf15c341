"""`batloc validate` and the report read a workload within its bound, as the engine does (``batloc.reading``,
contract §2's bounds): a FIFO nobody writes, a device, an over-sized file is refused in one line naming it, never
read for ever or into memory; so is a run folder's run.json that is not a regular file."""

import json
import os
import subprocess
import sys

import pytest

from batloc.analysis import load, validate
from batloc.outputs import JOBS_HEADER

PLATFORM = "tests/data/schedulers/two_nodes.xml"
ROW = ("1,w0,d10,10.000000,1,60.000000,1,COMPLETED_SUCCESSFULLY,"
       "10.000000,10.000000,20.000000,0.000000,10.000000,1.000000,0,0.000000,\"\"")
WORKLOAD = {"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10}},
            "jobs": [{"id": 1, "subtime": 10, "res": 1, "walltime": 60, "profile": "d10"}]}


def outputs(tmp_path):
    (tmp_path / "out_jobs.csv").write_text(JOBS_HEADER + "\n" + ROW + "\n")
    return str(tmp_path / "out")


def check(prefix, workload, *more):
    """`batloc validate` in a child, so that a reader waiting for ever fails the test instead of hanging it."""
    return subprocess.run([sys.executable, "-m", "batloc.cli.main", "validate", prefix, "--workload", str(workload),
                           "--platform", PLATFORM, *more], capture_output=True, text=True, timeout=60)


def test_the_workload_read_within_its_bound_is_the_run_checked(tmp_path):
    (tmp_path / "w.json").write_text(json.dumps(WORKLOAD))
    done = check(outputs(tmp_path), tmp_path / "w.json")
    assert done.returncode == 0 and done.stdout.startswith("ok: 1/1 jobs"), done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_endless_workload_is_refused_in_one_line(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "w.json"
        os.mkfifo(path)       # nobody writes it: an open that waits would wait for ever
    else:
        path = "/dev/zero"    # endless: a reader that trusts it fills the memory
    done = check(outputs(tmp_path), path)
    assert done.returncode == 2, done.stdout + done.stderr
    kind_text = "a FIFO" if kind == "fifo" else "a device"
    assert done.stderr == f"batloc validate: error: {path} (workload) is {kind_text}, not a regular file: not read\n"


def test_an_over_sized_workload_is_refused_naming_the_bound(tmp_path, monkeypatch, capsys):
    (tmp_path / "w.json").write_text(json.dumps(WORKLOAD))
    size = (tmp_path / "w.json").stat().st_size
    monkeypatch.setattr(validate, "WORKLOAD_BYTES", size - 1)
    rc = validate.main([outputs(tmp_path), "--workload", str(tmp_path / "w.json"), "--platform", PLATFORM])
    err = capsys.readouterr().err
    assert rc == 2 and err == (f"batloc validate: error: {tmp_path / 'w.json'} (workload) is larger than {size - 1} "
                               "bytes, the bound batloc reads: not read\n"), err
    # the report's reader too: one line for the run left out
    monkeypatch.setattr(load, "WORKLOAD_BYTES", size - 1)
    with pytest.raises(ValueError, match=r"\(workload\) is larger than .* the bound batloc reads"):
        load.read_workload(tmp_path / "w.json")


def test_a_run_folder_whose_run_json_is_a_fifo_is_refused(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    outputs(folder)
    os.mkfifo(folder / "run.json")
    done = subprocess.run([sys.executable, "-m", "batloc.cli.main", "validate", str(folder)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "run.json" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    # the report's reader of run.json, in a child too
    said = subprocess.run([sys.executable, "-c", "import sys; from batloc.analysis.load import read_run_json; "
                           "print(read_run_json(sys.argv[1]))", str(folder / "run.json")],
                          capture_output=True, text=True, timeout=60)
    assert said.stdout.startswith("({}, ") and "is a FIFO, not a regular file" in said.stdout, said.stdout + said.stderr
