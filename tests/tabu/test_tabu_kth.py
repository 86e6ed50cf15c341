"""CONS + Tabu search against FCFS-BF on a week of the KTH SP2 trace (the PWA mapping of
seed-schedulers.md §3: the machine as one node of 100 cores; files ignored), through the
real engine: lower mean wait and a narrower NUWT spread (Klusáček & Rudová's direction).
Skipped when ../shared/data/traces/ is absent."""

from pathlib import Path

import pytest

from batloc.analysis import load, metrics
from batloc.analysis.fairness import nuwt_per_user, nuwt_summary
from batloc.platforms.cli import main as platform_main
from batloc.workloads.cli import main as workload_main
from policy_run import simulate

# ../shared/data/traces/ beside the checkout (the project's data folder for tests)
TRACE = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"

pytestmark = [pytest.mark.skipif(not TRACE.exists(), reason="PWA traces folder absent"),
              pytest.mark.needs_engine]


def measures(prefix, workload):
    wl = load.read_workload(workload)
    table = metrics.per_job(load.read_jobs(f"{prefix}_jobs.csv"), wl, None, float("inf"))
    done = table[table["evaluated"] & table["completed"]]
    return len(done), float(done["queue_time"].mean()), nuwt_summary(nuwt_per_user(table))["nuwt_std"]


def test_cons_tabu_waits_less_and_is_fairer_than_fcfs_bf_on_kth(tmp_path):
    platform, full, week = tmp_path / "kth.xml", tmp_path / "kth.json", tmp_path / "week.json"
    assert platform_main(["generate", "-o", str(platform), "--nodes", "1", "--cores", "100"]) == 0
    assert workload_main(["from-swf", str(TRACE), "-o", str(full), "--platform", str(platform)]) == 0
    assert workload_main(["window", str(full), "-o", str(week), "--start", "1997-02-03", "--length", "7d",
                          "--before", "1d", "--after", "1d"]) == 0
    simulate(tmp_path, "fcfs_bf", platform, week, {"ignore_files": True}, name="fcfs_bf")
    simulate(tmp_path, "cons_tabu", platform, week, {}, name="cons_tabu")
    jobs_bf, wait_bf, spread_bf = measures(tmp_path / "fcfs_bf", week)
    jobs_ts, wait_ts, spread_ts = measures(tmp_path / "cons_tabu", week)
    assert jobs_bf == jobs_ts > 500
    assert wait_ts < wait_bf
    assert spread_ts < spread_bf
