"""`batloc report` end to end on the hand-made runs: files exist, numbers match jobs.csv."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from batloc.analysis.cli import main as report_main

DATA = Path(__file__).resolve().parents[1] / "data" / "analysis"
HAND = DATA / "hand"
sys.path.insert(0, str(DATA))
import recompute  # noqa: E402  (independent of batloc.analysis)
EXPECTED_FIGURES = ["improvement_boxplot.png", "improvement_ecdf.png", "sessions_faster_slower.png",
                    "usage_fcfs.png", "usage_lea.png", "gantt_fcfs.png", "gantt_lea.png"]


def independent_totals(run_dir: Path, workload: Path) -> dict:
    return recompute.totals(run_dir, workload)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "hand"
    shutil.copytree(HAND, out)
    assert report_main([str(out)]) == 0
    return out


def test_report_files_exist(report_dir):
    html = (report_dir / "report.html").read_text()
    for name in EXPECTED_FIGURES:
        assert (report_dir / "figures" / name).stat().st_size > 1000, name
        assert f"figures/{name}" in html
    for heading in ("Tables I, II", "Table III", "Figs. 2, 7", "Provenance", "Runs"):
        assert heading in html
    assert "hand-made test fixture" in html  # workload provenance is carried into the report


def test_summary_matches_jobs_csv(report_dir):
    summary = pd.read_csv(report_dir / "summary.csv").set_index("run")
    totals = {run: independent_totals(report_dir / run, report_dir / "workload.json") for run in ("fcfs", "lea")}
    for run, t in totals.items():
        assert summary.loc[run, "total_load_time"] == pytest.approx(t["load"])
        assert summary.loc[run, "total_core_time"] == pytest.approx(t["core"])
    expected = 100 * (totals["fcfs"]["load"] - totals["lea"]["load"]) / totals["fcfs"]["load"]
    assert summary.loc["lea", "transfer_reduction_pct"] == pytest.approx(expected)
    assert expected == pytest.approx(48.888889, abs=1e-5)  # and equal to the hand value
    assert summary.loc["lea", "baseline"] == "fcfs"
    assert (summary.loc["lea", "faster"], summary.loc["lea", "slower"], summary.loc["lea", "equal"]) == (3, 1, 1)


def test_report_rejects_missing_dir(tmp_path):
    assert report_main([str(tmp_path / "nope")]) == 2
    assert report_main([str(tmp_path)]) == 1  # a directory without any run


def test_gantt_range_option(tmp_path):
    shutil.copytree(HAND, tmp_path / "hand")
    assert report_main([str(tmp_path / "hand"), "--gantt-range", "0:50", "--baseline", "lea"]) == 0
    summary = pd.read_csv(tmp_path / "hand" / "summary.csv").set_index("run")
    assert summary.loc["fcfs", "baseline"] == "lea"
    assert summary.loc["fcfs", "transfer_reduction_pct"] == pytest.approx(100 * (23 - 45) / 23)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_provenance_names_a_commit_only_when_batloc_runs_from_its_checkout(tmp_path):
    from batloc.analysis.report_html import _git_commit

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "a project")
    # a wheel installed in a virtualenv inside someone's repository is not that repository's commit
    installed = tmp_path / ".venv" / "lib" / "site-packages" / "batloc"
    installed.mkdir(parents=True)
    assert _git_commit(installed) == "unknown"
    assert _git_commit(tmp_path) == git("rev-parse", "--short", "HEAD").strip()


def test_a_baseline_no_run_has_is_one_line_naming_the_runs(tmp_path, capsys):
    shutil.copytree(HAND, tmp_path / "hand")
    assert report_main([str(tmp_path / "hand"), "--baseline", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err == (f"batloc report: --baseline nosuch: no run under {tmp_path / 'hand'} has that scheduler; its "
                   "runs' schedulers: fcfs, lea\n")
    assert not (tmp_path / "hand" / "report.html").exists()


def test_a_report_with_no_baseline_run_says_so_in_its_headline_and_still_shows_the_table(tmp_path):
    # Batsim's own files run with stock schedulers (schedFcfs, easyBackfill) under the default baseline fcfs
    from batloc.analysis.report import build_report

    shutil.copytree(HAND, tmp_path / "hand")
    html = build_report(tmp_path / "hand", baseline="schedFcfs", log=lambda msg: None).html.read_text()
    assert "<h2>Headline: no run is compared with another (no baseline run)</h2>" in html
    assert ("Nothing compared here: no run of the baseline <code>schedFcfs</code> (runs: <code>fcfs</code>, "
            "<code>lea</code>)") in html
    headline = html[html.index("<h2>Headline"):html.index("<h2>Reduction")]
    table = headline[headline.index("<table"):]
    assert table.count("mean wait (h)") == 1 and "class='better'" not in table   # each run's own figures
    compared = build_report(tmp_path / "hand", baseline="fcfs", log=lambda msg: None).html.read_text()
    assert "<h2>Headline: each variant against its baseline</h2>" in compared and "Nothing compared" not in compared


def test_unchanged_sessions_are_counted_and_explain_a_median_of_exactly_one():
    from batloc.analysis import compare

    imp = pd.Series([1.0, 1.0, 1.005, 2.0, 0.5])
    counts = compare.count_faster(imp)
    assert (counts["faster"], counts["equal"], counts["unchanged"], counts["slower"]) == (1, 3, 2, 1)
    assert counts["median_improvement"] == 1.0
    both = pd.DataFrame({"stretch_x": [1.0, 3.0, 1.0], "stretch_base": [1.0, 3.0, 2.0]})
    assert compare.at_once(both) == 1          # stretch 1 under both: started at submission in each


def test_the_session_table_says_what_the_unchanged_sessions_are(report_dir):
    summary = pd.read_csv(report_dir / "summary.csv").set_index("run")
    lea = summary.loc["lea"]
    assert lea["unchanged"] <= lea["equal"] and lea["at_once"] <= lea["unchanged"]
    html = (report_dir / "report.html").read_text()
    assert "of which<br>unchanged" in html and "unchanged: exactly the same stretch under both" in html
