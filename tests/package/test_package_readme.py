"""The README's short commands work as written, while another simulation loads the machine.

Run as a newcomer runs them, in order in one folder (batloc.testing.readme):
the demo (its install is what CI has just done), and the example from a trace
to a comparison on a KTH-SP2 snippet made here under the trace's own name (the
real log is not shipped). The long ones — the install itself, Batsim's own
files (a clone of Batsim), the paper's study (the real traces) — are for
benchmarks/readme_commands.py. Until 2026-11 the example's sweep failed all
its runs on a loaded machine: robin's flag form gave each scheduler 10 s to
listen, and dropped --ready-timeout.
"""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from batloc.testing.readme import BackgroundLoad, blocks, run, simulation_load

pytestmark = pytest.mark.needs_engine

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = blocks(ROOT / "README.md")
TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
EPOCH = 844473600           # 1996-10-05 00:00 UTC: the snippet's first second


def kth_snippet(path: Path) -> None:
    """A few dozen jobs around the week of 1996-10-07 in KTH-SP2's format: 100 processors, users submitting
    bursts of same-width jobs (which share a file), walltimes with time to spare."""
    header = ["; Computer: IBM SP2", "; Installation: KTH (snippet made by the README's test)",
              f"; UnixStartTime: {EPOCH}", "; MaxNodes: 100", "; MaxProcs: 100"]
    lines, job = [], 0
    for day in range(11):                   # 1996-10-05 .. 10-15
        for burst, (user, cores) in enumerate(((1, 4), (2, 20), (3, 1), (4, 8))):
            for k in range(2):
                job += 1
                submit = day * 86400 + burst * 5000 + k * 120
                run_time = 300 + 200 * ((job * 7) % 5)
                lines.append(f"{job} {submit} 0 {run_time} {cores} -1 -1 {cores} {run_time + 1800} -1 1 {user} "
                             "1 -1 1 -1 -1 -1")
    with gzip.open(path, "wt") as f:
        f.write("\n".join(header + lines) + "\n")


def example_block():
    [block] = [b for b in BLOCKS if b.names(f"from-swf {TRACE}")]
    return block


def test_the_blocks_are_what_this_test_and_the_script_expect():
    kinds = [("install" if b.install else "python" if b.python else "shell") for b in BLOCKS]
    assert kinds.count("install") == 2 and kinds.count("python") == 1
    assert example_block().text.rstrip().endswith("--schedulers fcfs,fcfs-bf,lea,lea-bf --jobs 2")


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """A newcomer's folder after the README's demo and trace example, run as written beside another
    simulation: (folder, the example's output, the other simulation's record)."""
    tmp = tmp_path_factory.mktemp("readme")
    work = tmp / "reader"
    work.mkdir()
    kth_snippet(work / TRACE)
    with BackgroundLoad(simulation_load(tmp / "load"), tmp / "load") as load:
        [demo] = [b for b in BLOCKS if b.names("batloc demo")]
        rc, seconds, out, cpu = run(demo.after_install(), False, work, timeout=900)
        assert rc == 0, out
        rc, seconds, example_out, cpu = run(example_block().text, False, work, timeout=900)
        assert rc == 0, example_out
    return work, example_out, load


def test_the_readmes_demo_works_as_written(reader):
    work, _, load = reader
    assert (work / "batloc-demo" / "report.html").exists()
    assert load.started >= 1 and load.failed == 0      # the other simulation ran all along


def test_the_readmes_trace_example_works_as_written_beside_another_simulation(reader):
    work, out, load = reader
    assert "did not listen" not in out
    assert (work / "comparison" / "report.html").exists()
    runs = sorted(p.name for p in (work / "comparison" / "runs").iterdir())
    assert runs == [f"kth-machine__week__{s}" for s in ("fcfs", "fcfs-bf", "lea", "lea-bf")]
    for run_dir in runs:
        meta = json.loads((work / "comparison" / "runs" / run_dir / "run.json").read_text())
        assert (meta["status"], meta["validation"]["valid"], meta["timeouts"]["ready"]) == ("success", True, 120.0)
    week = json.loads((work / "week.json").read_text())
    assert sum(j["evaluated"] for j in week["jobs"]) == 56         # 7 days x 8 jobs


@pytest.mark.skipif(importlib.util.find_spec("batloc.api") is None, reason="batloc.api (the Python API) is absent")
def test_the_readmes_python_example_works_as_written(reader):
    work = reader[0]
    [python] = [b for b in BLOCKS if b.python]
    rc, seconds, out, cpu = run(python.text, True, work, timeout=900)
    assert rc == 0, out
    assert (work / "comparison-py" / "report.html").exists()
