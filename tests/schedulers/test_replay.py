"""The replay floor (schedulers/replay.py): a finished run's decisions played again on the engine give
its outputs byte for byte, on a small saturated input with loads, waits, backfilling and window kills."""

import subprocess
import sys

import pytest

import policy_run

pytestmark = pytest.mark.needs_engine

OUTPUTS = ("jobs", "schedule", "machine_states", "decisions", "predictions")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    cli = [sys.executable, "-m", "batloc.cli.main"]
    subprocess.run([*cli, "platform", "generate", "-o", str(d / "p.xml"), "--nodes", "4", "--cores", "4",
                    "--memory", "64GB", "--node-bw", "1GB/s"], check=True, capture_output=True)
    # a queue that stays long: 1.5 times what the cluster can run, files shared by bursts of jobs
    subprocess.run([*cli, "workload", "synth", "-o", str(d / "w.json"), "--platform", str(d / "p.xml"),
                    "--duration", "1d", "--load", "1.5", "--jobs-per-file", "4", "--seed", "3", "--users", "10",
                    "--core-mix", "1:4,2:2,3:1,4:1"], check=True, capture_output=True)
    return d / "p.xml", d / "w.json"


@pytest.mark.parametrize("policy", ["fcfs_bf", "lea"])
def test_a_replayed_run_writes_the_same_outputs(tmp_path, inputs, policy):
    platform, workload = inputs
    run = policy_run.simulate(tmp_path, policy, platform, workload, name="run")
    again = policy_run.simulate(tmp_path, "replay", platform, workload, {"replay": run.prefix}, name="again")
    decisions = (tmp_path / "run_decisions.csv").read_text()
    assert decisions.count("\n") > 150 and ",miss," in decisions and ",wait," in decisions
    for name in OUTPUTS:
        assert (tmp_path / f"run_{name}.csv").read_bytes() == (tmp_path / f"again_{name}.csv").read_bytes(), name


def test_a_replay_without_its_run_stops_in_one_line(tmp_path, inputs):
    platform, workload = inputs
    run = policy_run.simulate(tmp_path, "replay", platform, workload, {"replay": str(tmp_path / "none")},
                              check=False)
    assert run.sched_status == 2
    assert "replay: cannot read" in run.sched_out and "Traceback" not in run.sched_out
