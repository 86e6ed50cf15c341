"""docs/examples/notebook.py, the worked example of docs/python-api.md, runs as written and does what it says:
one run read as a DataFrame of the run's jobs.csv rows, a 3-scheduler comparison read as the report's summary,
a figure saved; using only the documented API."""

import csv
import re
import runpy
from pathlib import Path

import pandas as pd
import pytest

import batloc.api as bl

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = DOCS / "examples" / "notebook.py"


def test_the_example_uses_only_the_documented_api():
    text = EXAMPLE.read_text()
    reference = (DOCS / "python-api.md").read_text()
    used = set(re.findall(r"\bbl\.(\w+)", text))
    assert used and used <= set(bl.__all__), used - set(bl.__all__)
    for name in used:
        assert f"`{name}(" in reference or f"`{name}`" in reference, name
    for attribute in ("jobs", "jobset", "summary", "decisions", "validate", "folder", "report", "figures"):
        assert f"`.{attribute}" in reference, attribute


@pytest.mark.needs_engine
def test_the_example_runs_and_gives_what_it_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = runpy.run_path(str(EXAMPLE), run_name="__main__")
    run, comparison = done["run"], done["comparison"]
    with open(run.folder / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 50 and list(run.jobs["job_id"]) == [r["job_id"] for r in rows]
    assert list(run.jobs["final_state"]) == [r["final_state"] for r in rows]
    summary = pd.read_csv(tmp_path / "batloc-notebook" / "comparison" / "summary.csv")
    assert sorted(summary["scheduler"]) == ["fcfs", "lea", "lea-bf"]
    pd.testing.assert_frame_equal(comparison.summary, summary)
    assert comparison.report.is_file() and comparison.figures and all(p.is_file() for p in comparison.figures)
    assert (tmp_path / "batloc-notebook" / "stretch_and_loads.png").stat().st_size > 1000
    # the LEA run alone and LEA in the comparison: the same run, the same numbers
    lea = summary.set_index("scheduler").loc["lea", "mean_stretch"]
    assert run.summary["mean_stretch"] == pytest.approx(lea, rel=1e-6)   # summary.csv holds six decimals
