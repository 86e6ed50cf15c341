"""The SWF reader on a real Parallel Workloads Archive log, when the shared data folder is there."""

from pathlib import Path

import pytest

from batloc.workloads.annotate import group_ids
from batloc.workloads.swf import read_swf

KTH = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} not available")
def test_kth_sp2():
    table, log = read_swf(KTH)
    counts = log.counts()
    assert "malformed" not in counts["dropped"]
    assert len(table) + sum(counts["dropped"].values()) == 28476  # every job line accounted for
    assert table.attrs["epoch"] == 843480031
    assert table["user"].nunique() == 214 and table["cores"].max() <= 100
    # About a third of jobs join a file under the paper's rule (data/README.md measured 34 %
    # following a same-user, same-width job within 800 s).
    files = group_ids(table, "paper")
    assert 0.25 < 1 - files.nunique() / len(table) < 0.45
