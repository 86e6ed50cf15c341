"""`batloc validate` on workflow runs: dry-run schedules pass; tampered ones are caught."""

import json

import pytest

from batloc.analysis import validate
from batloc.platforms.generator import PlatformSpec, write
from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.lea import Lea
from batloc.testing.dry_run import DryRun, make_resources, write_jobs_csv

from test_workflow_schedules import CHAIN, DIAMOND, FORK_JOIN, GB, task


def dry_run_files(tmp_path, cls, jobs, options=None):
    """Run `jobs` on the dry run; (prefix, workload path, platform path) for the validator."""
    static = [j for j in jobs if "parents" not in j]
    deps = [j for j in jobs if "parents" in j]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    wl = {"nb_res": 2, "jobs": static, "dependent_jobs": deps, "profiles": profiles}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    write(PlatformSpec(memory_mix=((2, 100 * GB),), cores=1, node_bandwidth=1 * GB), tmp_path / "p.xml")
    prefix = tmp_path / "out"
    sched = cls({**(options or {}), "decisions": f"{prefix}_decisions.csv"})
    compute, storage = make_resources({"n000": 1, "n001": 1}, memory_bytes=100 * GB, bandwidth=1 * GB)
    dry = DryRun(sched, compute, storage, wl)
    dry.run()
    write_jobs_csv(dry, f"{prefix}_jobs.csv")
    return str(prefix), str(tmp_path / "w.json"), str(tmp_path / "p.xml")


@pytest.mark.parametrize("cls, jobs, options", [
    (Fcfs, CHAIN, {}), (Lea, CHAIN, {}), (Fcfs, CHAIN, {"write_back": "staged"}), (Lea, FORK_JOIN, {}),
    (Fcfs, DIAMOND, {"cache": "lru"}), (Lea, DIAMOND, {"cache": "strict"}),
    # a killed parent: its descendants are registered and rejected, so present with a final state
    (Fcfs, [task(1, 200, reads=[("X", 10)], writes=[("oA", 5)], t=1, wall=50)] + CHAIN[1:3], {}),
])
def test_workflow_runs_are_valid(tmp_path, cls, jobs, options):
    prefix, wl, pf = dry_run_files(tmp_path, cls, jobs, options)
    violations = validate.validate(prefix, wl, pf, options.get("cache", "paper"))[0]
    assert violations == []


def _edit(path, job_id, **times):
    lines = open(path).read().splitlines()
    head = lines[0].split(",")
    for i, line in enumerate(lines[1:], 1):
        fields = line.split(",")
        if fields[0] == job_id and fields[1] == "w0":
            for k, v in times.items():
                fields[head.index(k)] = f"{v:.6f}"
            lines[i] = ",".join(fields)
    open(path, "w").write("\n".join(lines) + "\n")


def test_a_consumer_started_before_its_parent_ended_is_caught(tmp_path):
    prefix, wl, pf = dry_run_files(tmp_path, Lea, CHAIN)
    # LEA ran C on n000 [31,41) after B [21,31): move C's start before B's end
    _edit(f"{prefix}_jobs.csv", "3", starting_time=25.0, submission_time=25.0)
    kinds = {k for k, _ in validate.validate(prefix, wl, pf)[0]}
    assert validate.PARENT_LATE in kinds and validate.UNWRITTEN in kinds


def test_a_hit_on_an_output_its_producer_never_left_there_is_caught(tmp_path):
    # Under LEA, B hits oA on n000 at 21. Say A ran on n001 instead: oA was never in n000's memory.
    prefix, wl, pf = dry_run_files(tmp_path, Lea, CHAIN)
    dec = open(f"{prefix}_decisions.csv").read().replace("w0!1,LEA,n000,0", "w0!1,LEA,n001,1")
    open(f"{prefix}_decisions.csv", "w").write(dec)
    kinds = {k for k, _ in validate.validate(prefix, wl, pf)[0]}
    assert validate.FALSE_HIT in kinds
