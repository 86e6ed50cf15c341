"""The validator on a dry run's outputs: clean schedules pass, broken ones are listed."""

import json

from batloc.analysis import validate
from batloc.testing.dry_run import DryRun, make_resources, write_jobs_csv
from batloc.schedulers.lea import Lea

PLATFORM = "tests/data/schedulers/two_nodes.xml"   # 2 nodes x 2 cores, 100 GB, 1 GB/s


def run_lea(tmp_path, cache="paper"):
    jobs = [{"id": i, "subtime": 1 + i, "res": 1 + i % 2, "walltime": 60, "profile": "d30",
             "input_file": "AB"[i % 2], "input_size": 5e9 * (1 + i % 2)} for i in range(12)]
    wl = {"nb_res": 4, "jobs": jobs, "profiles": {"d30": {"type": "delay", "delay": 30.0}}}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    prefix = tmp_path / "out"
    compute, storage = make_resources({"n000": 2, "n001": 2}, memory_bytes=100e9, bandwidth=1e9)
    run = DryRun(Lea({"export_prefix": str(prefix), "cache": cache}), compute, storage, wl)
    run.run()
    write_jobs_csv(run, f"{prefix}_jobs.csv")
    return prefix


def argv(tmp_path, prefix, *more):
    return [str(prefix), "--workload", str(tmp_path / "w.json"), "--platform", PLATFORM, *more]


def test_clean_run_validates(tmp_path, capsys):
    prefix = run_lea(tmp_path, "lru")
    assert validate.main(argv(tmp_path, prefix, "--cache", "lru")) == 0
    assert "ok: 12/12 jobs" in capsys.readouterr().out


def test_overlap_early_start_and_small_memory_are_reported(tmp_path, capsys):
    prefix = run_lea(tmp_path)
    path = f"{prefix}_jobs.csv"
    lines = open(path).read().splitlines()
    # Move the first computing job to start before its submission and on every core.
    for i, line in enumerate(lines[1:], start=1):
        f = line.split(",")
        if f[1] == "w0":
            f[8], f[14] = "0.000000", "0-3"
            lines[i] = ",".join(f)
            break
    open(path, "w").write("\n".join(lines) + "\n")
    small = tmp_path / "small.xml"
    small.write_text(open(PLATFORM).read().replace('value="100000000000"', 'value="1000"'))
    rc = validate.main([str(prefix), "--workload", str(tmp_path / "w.json"), "--platform", str(small)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "before its submission" in out
    assert "while" in out                       # a core used by two jobs
    assert "before its file" in out
    assert "> capacity 1000" in out
