"""`batloc workload synth-khanna` and Khanna's metrics in `batloc report`."""

import json

import pandas as pd
import pytest

from batloc.analysis.khanna import STAGING_WORKLOAD, run_metrics
from batloc.analysis.report import build_report
from batloc.testing.dry_run import DryRun, make_resources, write_jobs_csv
from batloc.schedulers.jdp_dll import Jdp_dll
from batloc.workloads import cli
from batloc.workloads.synth_khanna import KhannaSpec, generate
from engine_harness import platform_xml


def test_generator_hits_the_overlap_and_the_paper_s_file_sizes():
    table = generate(KhannaSpec(jobs=400, overlap=0.85, seed=4))
    assert table["input_file"].nunique() == 60                       # (1 - 0.85) x 400
    per_image = {4e6, 64e6}
    sizes = table.drop_duplicates("input_file")["input_size"]
    assert all(any(s / img in range(4, 11) for img in per_image) for s in sizes)
    # walltime = load at 50 MB/s + 0.001 s/MB, rounded up to 1/100 s, + 0.01
    row = table.iloc[0]
    assert row["run_time"] == pytest.approx(row["input_size"] / 1e6 * 0.001)
    assert 0.01 <= row["walltime"] - (row["input_size"] / 50e6 + row["run_time"]) <= 0.02 + 1e-9
    assert table["submit"].min() == 1.0 and table["submit"].max() == pytest.approx(601.0)


def test_clustered_order_keeps_the_jobs_of_a_file_together():
    clustered = generate(KhannaSpec(jobs=300, overlap=0.85, order="clustered", seed=1))["input_file"]
    shuffled = generate(KhannaSpec(jobs=300, overlap=0.85, order="random", seed=1))["input_file"]
    runs = lambda s: int((s != s.shift()).sum())       # noqa: E731
    assert runs(clustered) == 45 and runs(shuffled) > 200


def test_load_sets_the_span_by_eq_11():
    spec = KhannaSpec(jobs=200, nodes=4, load=2.0, seed=2)
    table = generate(spec)
    expected = table.attrs["provenance"]["expected_load"]
    # the last job arrives at AvgExecTime x N / P / load
    assert expected["span"] == pytest.approx(expected["avg_exec_time"] * 200 / 4 / 2.0)
    assert table["submit"].max() - 1.0 == pytest.approx(expected["span"], abs=1e-3)
    assert expected["load"] == pytest.approx(2.0)


def test_cli_writes_the_same_workload_for_the_same_seed(tmp_path, capsys):
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml(nodes=4, cores=1, bandwidth=7e7, memory=15e9))
    outs = []
    for k in range(2):
        out = tmp_path / f"k{k}.json"
        assert cli.main(["synth-khanna", "-o", str(out), "--jobs", "80", "--platform", str(platform)]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    data = json.loads(outs[0])
    assert data["nb_res"] == 4 and len(data["jobs"]) == 80
    assert data["batloc"]["source"]["params"]["bandwidth"] == 7e7
    assert "80 jobs over 600 s, 12 files" in capsys.readouterr().out


def test_report_counts_replications_bytes_and_khanna_wait(tmp_path):
    # K1 under JDP+DLL (see test_khanna_engine): stagings of A (J1) and B (J2), replications
    # A -> n001 and B -> n000 of 10 bytes each. Start (Eq. 1): J1 1 and J2 2 (their loads
    # start at submission), J3 61 and J4 47 (hits): waits 0, 0, 49, 34.
    jobs = [(1, 1, "A", 60), (2, 2, "B", 45), (3, 12, "A", 20), (4, 13, "B", 20)]
    workload = {"nb_res": 2, "jobs": [{"id": i, "subtime": t, "res": 1, "walltime": w, "profile": f"d{w - 10}",
                                       "user": "u", "input_file": f, "input_size": 10.0, "evaluated": True}
                                      for i, t, f, w in jobs],
                "profiles": {f"d{w - 10}": {"type": "delay", "delay": w - 10} for *_, w in jobs}}
    run_dir = tmp_path / "jdp"
    run_dir.mkdir()
    (tmp_path / "w.json").write_text(json.dumps(workload))
    (tmp_path / "p.xml").write_text(platform_xml(nodes=2, cores=1, bandwidth=1, memory=1e6))
    (run_dir / "run.json").write_text(json.dumps({"name": "jdp", "workload": str(tmp_path / "w.json"),
                                                  "platform": str(tmp_path / "p.xml"),
                                                  "scheduler": {"name": "jdp_dll"}}))
    compute, storage = make_resources({"n000": 1, "n001": 1}, memory_bytes=1e6, bandwidth=1.0)
    run = DryRun(Jdp_dll({"export_prefix": str(run_dir / "out")}), compute, storage, workload)
    run.run()
    write_jobs_csv(run, run_dir / "out_jobs.csv")
    report = build_report(tmp_path, baseline="jdp_dll", log=lambda m: None)
    row = pd.read_csv(report.summary_csv).iloc[0]
    assert (row["remote_transfers"], row["replications"], row["bytes_staged"]) == (4, 2, 40.0)
    assert row["khanna_mean_wait"] == pytest.approx(83 / 4)
    assert (row["mean_response"], row["makespan"]) == (52.0, 71.0)
    assert "Khanna et al.'s metrics" in report.html.read_text()


def test_bytes_staged_counts_replications_on_nodes_whose_names_hold_dashes():
    # Two jobs miss (10 + 20 bytes loaded); two replications of file "f-1" (20 bytes each) to
    # nodes "rack-a-01" and "rack-b-02": cutting the id at its dashes would read the file as
    # "f-1-rack-a" or "f-1-rack" and count 0 bytes for them.
    jobs_table = pd.DataFrame({
        "evaluated": [True, True], "ended": [True, True], "reservation_start": [0.0, 0.0],
        "cache": ["miss", "miss"], "starting_time": [5.0, 9.0], "transfer_time": [1.0, 2.0],
        "submission_time": [0.0, 0.0], "input_file": ["g", "f-1"], "input_size": [10.0, 20.0],
        "flow": [10.0, 12.0]})
    jobs_csv = pd.DataFrame({"workload_name": [STAGING_WORKLOAD] * 4,
                             "job_id": ["stage-1", "stage-2", "rep-f-1-rack-a-01-1", "rep-f-1-rack-b-02-2"]})
    metrics = run_metrics(jobs_table, jobs_csv)
    assert (metrics["replications"], metrics["bytes_staged"]) == (2, 70.0)
