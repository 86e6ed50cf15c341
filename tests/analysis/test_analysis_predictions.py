"""Accuracy of predicted start times in the report (issue 23, contract §6 "Predicted starts").

The fixture tests/data/analysis/predicted: FCFS with `scheduling_period: 30` and
`predictions: true` on two nodes of two cores (n001 = cores 0-1, n002 = 2-3),
every job taking a whole node; the stock run `easy` wrote no predictions file.
  1 [0, 40) walltime 100 and 2 [0, 95) walltime 100 (not evaluated) start at once.
  3 (sub 10) placed by the pass at 30 behind job 1's walltime end: 100; job 1 ended
    at 40, the pass at 60 starts it: error −40 s, first and last.
  4 (sub 20) placed at 30 on n002 at job 2's walltime end 100; job 3 ended at 90,
    the pass at 90 starts it there: −10 s.
  5 (sub 45) placed at 60 on n001 at job 3's walltime end 110; at 90 moved to
    n002 at 100 (job 2's walltime end); the next pass after 100 is at 120: +10 s
    against the first prediction, +20 s against the last.
  6 (sub 70, not evaluated) placed at 90 at 140, started at 120: −20 s, left out.
  7 (evaluated) rejected at its submission (its file fits no node): no row.
Over the evaluated jobs with a row (1, 3, 4, 5), by hand:
  first errors 0, −40, −10, +10 → later 1/4, earlier 2/4, exactly 1/4, median −5 s,
    |errors| 0, 10, 10, 40 → 95 % within 40 s (the 4th of 4: nearest rank);
  last errors 0, −40, −10, +20 → the same shares, median −5 s, 95 % within 40 s;
  delays of the first prediction 0, 20, 10, 15 → 1/4 at submission, median 12.5 s,
    95 % within 20 s.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from batloc.analysis import predictions
from batloc.analysis.checks import RunLeftOut
from batloc.analysis.cli import main as report_main
from batloc.outputs import PREDICTIONS_COLUMNS

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "analysis" / "predicted"
HOUR = 3600.0


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("pred") / "predicted"
    shutil.copytree(FIXTURE, out)
    assert report_main([str(out)]) == 0
    return out


def test_the_fixture_is_what_fcfs_writes(tmp_path):
    # the hand-computed story above is the planning scheduler's, not only the analysis' reading of it
    from batloc.schedulers.fcfs import Fcfs
    from batloc.testing.dry_run import DryRun, make_resources

    run = json.loads((FIXTURE / "fcfs" / "run.json").read_text())
    prefix = str(tmp_path / "out")
    DryRun(Fcfs({"export_prefix": prefix, **run["scheduler"]["options"]}),
           *make_resources({"n001": 2, "n002": 2}), json.loads((FIXTURE / "workload.json").read_text())).run()
    assert Path(prefix + "_predictions.csv").read_bytes() == (FIXTURE / "fcfs" / "out_predictions.csv").read_bytes()


def test_summary_by_hand(report_dir):
    summary = pd.read_csv(report_dir / "summary.csv").set_index("run")
    fcfs = summary.loc["fcfs"]
    assert fcfs["has_predictions"] and fcfs["predicted_jobs"] == 4
    for kind in ("first", "last"):
        assert (fcfs[f"{kind}_prediction_later"], fcfs[f"{kind}_prediction_earlier"],
                fcfs[f"{kind}_prediction_exact"]) == (0.25, 0.5, 0.25)
        assert fcfs[f"{kind}_prediction_median_error"] == -5.0
        assert fcfs[f"{kind}_prediction_within"] == 40.0
    assert fcfs["first_prediction_at_submission"] == 0.25
    assert fcfs["first_prediction_median_delay"] == 12.5
    assert fcfs["first_prediction_delay_within"] == 20.0
    easy = summary.loc["easy"]
    assert not easy["has_predictions"] and np.isnan(easy["first_prediction_later"])


def test_per_job_columns(report_dir):
    table = pd.read_csv(report_dir / "per_job" / "fcfs.csv", dtype={"job_id": str}).set_index("job_id")
    # job 5: first predicted 110 at 60, last 100, started (cores taken) at 120
    assert table.loc["5", ["predicted_at", "predicted_start", "last_predicted_start", "reservation_start"]].tolist() \
        == [60.0, 110.0, 100.0, 120.0]
    assert np.isnan(table.loc["7", "predicted_start"])     # rejected: never predicted
    easy = pd.read_csv(report_dir / "per_job" / "easy.csv")
    assert easy["predicted_start"].isna().all()


def test_section_table_in_hours_and_the_run_left_out(report_dir):
    page = (report_dir / "report.html").read_text()
    start = page.index("<h2>Predicted start times")
    sec = page[start:page.index("<h2", start + 1)]
    first = sec.index("<td class='key'>fcfs</td><td class='key'>at first placement</td>")
    # jobs, later, earlier, exactly (%), median error (h), 95 % within (h), at submission (%), median delay, 95 % delay
    cells = ["4", "25.0", "50.0", "25.0", "−0.00139", "0.0111", "25.0", "0.00347", "0.00556"]
    assert sec[first:].startswith("<td class='key'>fcfs</td><td class='key'>at first placement</td>"
                                  + "".join(f"<td>{c}</td>" for c in cells))
    last = sec.index("<td class='key'>last before its start</td>")
    assert sec[last:].startswith("<td class='key'>last before its start</td>"
                                 + "".join(f"<td>{c}</td>" for c in cells[:6] + ["–"] * 3))
    assert "easy (easy): no predictions file" in sec
    assert "figures/predictions_-_workload.png" in sec and "<figcaption>" in sec
    for ext in ("png", "svg"):
        assert (report_dir / "figures" / f"predictions_-_workload.{ext}").stat().st_size > 1000


def test_unreadable_predictions_leave_only_this_section(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "r")
    path = tmp_path / "r" / "fcfs" / "out_predictions.csv"
    path.write_text(path.read_text().replace("w0!4,20.000000,30.000000,100.000000", "w0!4,20.000000,30.000000,soon"))
    assert report_main([str(tmp_path / "r")]) == 0           # the run stays in every other table
    page = (tmp_path / "r" / "report.html").read_text()
    assert f"fcfs (fcfs): {path}: line 5: predicted_start &#x27;soon&#x27; is not a time (job w0!4)" in page
    assert "No run wrote predicted starts." in page
    assert "predictions_-_workload.png" not in page


def test_read_keeps_quoted_ids_and_empty_times(tmp_path):
    path = tmp_path / "x_predictions.csv"
    path.write_text(",".join(PREDICTIONS_COLUMNS) + "\n"
                    + '"w0!a,""b""",1.000000,1.000000,5.000000,,7.000000\n', encoding="utf-8")
    df = predictions.read(path)
    assert df["job_id"].tolist() == ['w0!a,"b"']
    assert df.loc[0, "predicted_start"] == 5.0 and np.isnan(df.loc[0, "last_predicted_start"])
    jobs = pd.DataFrame({"job_id": ['a,"b"', "c"], "evaluated": [True, True]})
    out = predictions.attach(jobs, df)
    assert out["start_error"].tolist()[0] == 2.0 and np.isnan(out["start_error"].tolist()[1])
    assert predictions.read(tmp_path / "none_predictions.csv") is None


def test_exact_means_the_same_microsecond():
    jobs = pd.DataFrame({"job_id": list("abc"), "evaluated": True, "predicted_start": [1.0, 1.0, 1.0],
                         "start_error": [0.1 + 0.2 - 0.3, 1e-6, -1e-6], "last_start_error": [0.0, 0.0, 0.0],
                         "prediction_delay": [0.0, 0.0, 0.0]})
    s = predictions.summary(jobs)
    assert (s["first_prediction_exact"], s["first_prediction_later"], s["first_prediction_earlier"]) == (1 / 3, 1 / 3, 1 / 3)


def test_a_file_cut_short_is_not_read_as_shorter_times(tmp_path):
    path = tmp_path / "x_predictions.csv"
    path.write_text(",".join(PREDICTIONS_COLUMNS) + "\nw0!1,1.000000,1.000000,5.000000,5.000000,7.0")
    with pytest.raises(RunLeftOut, match=r"x_predictions.csv: line 2 is cut short"):
        predictions.read(path)


@pytest.mark.parametrize("damage,line", [
    # cut at a line's end: 2 rows of the 6 jobs that took cores (7 was rejected)
    (lambda text: "".join(text.splitlines(keepends=True)[:3]),
     "out_predictions.csv: rows for 2 of the 6 jobs that took cores (no row for job 3 and others): the file is "
     "truncated or the scheduler lost rows"),
    (lambda text: text.replace("w0!6,", "w0!8,"),
     "out_predictions.csv: line 7: job w0!8 is not a job of the run's workload: the file belongs to another run"),
    (lambda text: text[:-10],
     "out_predictions.csv: line 7 is cut short (no end of line): the file is truncated"),
])
def test_predictions_not_whole_leave_the_run_out_as_jobs_csv_would(tmp_path, capsys, damage, line):
    # before: 30 of 40 rows missing, or a job of another run, and the report said nothing (exit status 0)
    shutil.copytree(FIXTURE, tmp_path / "r")
    path = tmp_path / "r" / "fcfs" / "out_predictions.csv"
    path.write_text(damage(path.read_text()))
    assert report_main([str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert f"batloc report: leaving out run fcfs: {tmp_path / 'r' / 'fcfs'}/{line}" in err, err
    assert "No run wrote predicted starts." in (tmp_path / "r" / "report.html").read_text()
