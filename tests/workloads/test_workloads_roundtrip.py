"""A generated workload goes through the engine untouched: every custom field reaches the scheduler."""

import json
import subprocess
import sys

from engine_harness import Fifo, run


def batloc(*args):
    proc = subprocess.run([sys.executable, "-m", "batloc.cli.main", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_synthetic_workload_round_trips_through_the_engine(tmp_path):
    platform = str(tmp_path / "p.xml")
    wl = str(tmp_path / "w.json")
    batloc("platform", "generate", "-o", platform, "--nodes", "3", "--cores", "4", "--memory", "16GB")
    batloc("workload", "synth", "-o", wl, "--platform", platform, "--duration", "30min", "--load", "0.5",
           "--users", "4", "--seed", "3")
    with open(wl) as f:
        written = json.load(f)
    assert written["jobs"], "the generator wrote no job"
    res = run(tmp_path, platform, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    received = {e["data"]["job_id"]: e["data"]["job"] for _, e in res.events("JOB_SUBMITTED")}
    assert len(received) == len(written["jobs"])
    custom = set()
    for job in written["jobs"]:
        got = dict(received[f"w0!{job['id']}"])
        assert got.pop("id") == f"w0!{job['id']}"
        expected = {k: v for k, v in job.items() if k != "id"}
        assert got == expected  # same keys, same values, same types
        custom |= set(job) - {"id", "subtime", "res", "walltime", "profile"}
    assert {"user", "input_file", "input_size", "evaluated"} <= custom
    # the profiles reached the scheduler as written, and every job ended
    begins = res.messages[0]["events"][0]["data"]
    assert begins["profiles"]["w0"] == written["profiles"]
    assert len(res.jobs_rows()) == len(written["jobs"])
