"""Evaluation windows with context (paper, Fig. 1)."""

import pandas as pd
import pytest

from batloc.workloads.window import LEAD_IN, extract_window


def _table(submits, epoch=1_000_000):
    table = pd.DataFrame({"id": range(1, len(submits) + 1), "user": "u", "cores": 1,
                          "submit": [float(s) for s in submits], "walltime": 10.0, "run_time": 5.0})
    table.attrs = {"epoch": epoch, "provenance": {"source": {"format": "test"}}}
    return table


def test_window_marks_evaluated_and_shifts_times():
    table = _table([0, 99, 100, 150, 199, 200, 299, 300, 400])
    out = extract_window(table, start=200, length=100, before=100, after=100)
    # Kept: [100, 400); evaluated: [200, 300); t = 1 s is the context opening (submit 100).
    assert out["id"].tolist() == [3, 4, 5, 6, 7, 8]
    assert out["evaluated"].tolist() == [False, False, False, True, True, False]
    assert out["submit"].tolist() == [1.0, 51.0, 100.0, 101.0, 200.0, 201.0]
    window = out.attrs["provenance"]["window"]
    assert window["origin"] == 100 - LEAD_IN
    assert window["origin_unix"] == 1_000_000 + 99
    assert window["evaluated"] == [101.0, 201.0]
    assert out.attrs["provenance"]["period"] == [101.0, 201.0]
    assert out.attrs["epoch"] == 1_000_099
    assert out.attrs["provenance"]["source"] == {"format": "test"}
    assert table["submit"].tolist()[0] == 0.0  # input untouched


def test_window_without_context_and_unknown_epoch():
    out = extract_window(_table([5, 10, 20], epoch=None), start=10, length=10)
    assert out["submit"].tolist() == [1.0]
    assert out.attrs["provenance"]["window"]["origin_unix"] is None


@pytest.mark.parametrize("kwargs", [dict(length=0), dict(length=10, before=-1)])
def test_bad_windows(kwargs):
    with pytest.raises(ValueError):
        extract_window(_table([0]), start=0, **kwargs)
