"""The committed experiments/*.yaml, run by robin on batloc's engine (skipped without SimGrid).

Each test copies a committed description, only redirecting its output
directory (and, for the batexpe-format file, its fixed port) so that tests
may run beside other simulations.
"""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from batloc.robin.runs import PortAllocator

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "analysis"
sys.path.insert(0, str(DATA))
import recompute  # noqa: E402  (independent of batloc.analysis)


pytestmark = pytest.mark.needs_engine


def robin(desc: dict, tmp_path: Path, *args, timeout=600):
    path = tmp_path / "desc.yaml"
    path.write_text(yaml.safe_dump(desc))
    return subprocess.run([sys.executable, "-m", "batloc.robin", str(path), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def experiment(name: str) -> dict:
    return yaml.safe_load((ROOT / "experiments" / name).read_text())


def test_embedded_engine_with_batloc_lea(tmp_path):
    desc = experiment("robin-lea.yaml")
    desc["output-dir"] = str(tmp_path / "lea")
    proc = robin(desc, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "lea"
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "success" and meta["scheduler"]["policy"] == "lea"
    jobs = pd.read_csv(out / "out_jobs.csv")
    n_jobs = len(json.loads((ROOT / desc["workload"]).read_text())["jobs"])
    assert (jobs["workload_name"] == "w0").sum() == n_jobs
    assert (out / "out_decisions.csv").exists()
    assert (out / "log" / "batsim.stderr").exists() and (out / "log" / "sched.stdout").exists()


def test_batexpe_format_with_stock_fcfs(tmp_path):
    desc = experiment("robin-stock-fcfs.yaml")
    port = str(PortAllocator().take())
    out = tmp_path / "stock"
    for key in ("batcmd", "schedcmd"):
        desc[key] = desc[key].replace("28731", port).replace(desc["output-dir"], str(out))
    desc["output-dir"] = str(out)
    proc = robin(desc, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jobs = pd.read_csv(out / "out_jobs.csv")
    assert len(jobs) > 0 and jobs["final_state"].eq("COMPLETED_SUCCESSFULLY").all()


def test_sweep_report_matches_jobs_csv(tmp_path):
    desc = experiment("sweep-small.yaml")
    out = tmp_path / "sweep"
    desc["output-dir"] = str(out)
    proc = robin(desc, tmp_path, "--jobs", "2", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == sorted(f"{p}__small_workload__{s}" for p in ("rackham", "rackham-shared") for s in ("fcfs", "lea", "lem"))

    html = (out / "report.html").read_text()
    for fig in ["improvement_boxplot.png", "improvement_ecdf.png", "sessions_faster_slower.png"] + \
               [f"{kind}_{r}.png" for r in runs for kind in ("usage", "gantt")]:
        assert (out / "figures" / fig).stat().st_size > 1000, fig
        assert f"figures/{fig}" in html

    summary = pd.read_csv(out / "summary.csv").set_index("run")
    workload = ROOT / desc["workloads"][0]
    grand = {}
    for run in runs:
        t = recompute.totals(out / "runs" / run, workload)
        assert summary.loc[run, "total_load_time"] == pytest.approx(t["load"], abs=1e-6)
        assert summary.loc[run, "total_core_time"] == pytest.approx(t["core"], rel=1e-9)
        grand[run] = t
    for plat in ("rackham", "rackham-shared"):
        base = grand[f"{plat}__small_workload__fcfs"]
        for sched in ("lea", "lem"):
            run = f"{plat}__small_workload__{sched}"
            x = grand[run]
            if base["load"]:
                # summary.csv prints six decimals
                assert summary.loc[run, "transfer_reduction_pct"] == pytest.approx(
                    100 * (base["load"] - x["load"]) / base["load"], abs=1e-6)
            assert summary.loc[run, "core_time_reduction_pct"] == pytest.approx(
                100 * (base["core"] - x["core"]) / base["core"], abs=1e-6)
            assert summary.loc[run, "sessions_compared"] == summary.loc[run, "sessions"] > 0
            assert summary.loc[run, "faster"] + summary.loc[run, "slower"] + summary.loc[run, "equal"] == summary.loc[run, "sessions_compared"]
    # Tables I-III's "all" row sums both platforms
    for sched in ("lea", "lem"):
        b = sum(grand[f"{p}__small_workload__fcfs"]["core"] for p in ("rackham", "rackham-shared"))
        x = sum(grand[f"{p}__small_workload__{sched}"]["core"] for p in ("rackham", "rackham-shared"))
        assert f"{100 * (b - x) / b:.3f}" in html

    # a second sweep finds every run complete and only rewrites the report
    proc = robin(desc, tmp_path, "--jobs", "2", timeout=300)
    assert proc.returncode == 0 and "6 already complete, 0 to run" in proc.stdout
