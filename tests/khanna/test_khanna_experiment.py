"""experiments/khanna-paper.yaml on a slice of its smallest workload, through robin and the engine."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.needs_engine


def test_khanna_sweep_runs_every_policy_on_a_slice(tmp_path):
    desc = yaml.safe_load((ROOT / "experiments" / "khanna-paper.yaml").read_text())
    assert desc["schedulers"][:5] == ["met", "mct", "sa", "jdp_dll", "online_hps"]
    workload = json.loads((ROOT / desc["workloads"][0]).read_text())
    workload["jobs"] = workload["jobs"][:60]
    (tmp_path / "slice.json").write_text(json.dumps(workload))
    desc.update({"output-dir": str(tmp_path / "out"), "workloads": [str(tmp_path / "slice.json")]})
    (tmp_path / "desc.yaml").write_text(yaml.safe_dump(desc))
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", str(tmp_path / "desc.yaml"), "--jobs", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = pd.read_csv(tmp_path / "out" / "summary.csv").set_index("scheduler")
    assert sorted(summary.index) == sorted(desc["schedulers"])
    assert (summary["jobs_completed"] == 60).all()
    for sched, row in summary.iterrows():
        jobs = pd.read_csv(tmp_path / "out" / "runs" / f"khanna-platform__slice__{sched}" / "out_jobs.csv")
        stagings = jobs[jobs["workload_name"] == "batloc-stage"]
        assert row["remote_transfers"] == len(stagings)
        assert row["replications"] == stagings["job_id"].str.startswith("rep-").sum()
    assert summary.loc["jdp_dll", "replications"] > 0 and summary.loc["met", "replications"] == 0
