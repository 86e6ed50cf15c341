"""The workload tools' readers are bounded (issue 37): a trace, instance or description that is a FIFO, a
device or too large is refused in one error naming it, at once (a FIFO is never waited on)."""

import gzip
import os
from types import SimpleNamespace

import pytest

from batloc import reading
from batloc.workloads.errors import WorkloadError
from batloc.workloads.export import read_batsim
from batloc.workloads.gonthier import read_gonthier
from batloc.workloads.sacct import read_sacct
from batloc.workloads.source import read_lines
from batloc.workloads.swf import read_swf
from batloc.workloads.wfcommons import read_instance


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)   # nobody writes it: a reader that opens it plainly waits for ever
    return str(path)


@pytest.mark.parametrize("reader", [read_swf, read_sacct, read_gonthier, read_instance, read_batsim])
@pytest.mark.parametrize("which", ["fifo", "device"])
def test_no_reader_waits_on_a_fifo_or_reads_a_device(reader, which, fifo):
    path = fifo if which == "fifo" else "/dev/zero"
    with pytest.raises(WorkloadError, match="is a FIFO|is a device"):
        result = reader(path)
        list(result) if hasattr(result, "__next__") else None


def test_a_gzip_trace_that_unpacks_past_the_bound_is_refused(tmp_path):
    path = tmp_path / "t.swf.gz"
    with gzip.open(path, "wt") as f:
        f.write("1 0 0 10 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n" * 1000)
    assert os.path.getsize(path) < 1000
    with pytest.raises(WorkloadError, match="unpacks to more than 4.0 KiB|unpacks to more than 4096 bytes"):
        list(read_lines(path, limit=4096))
    assert len(list(read_lines(path))) == 1000


def test_a_workload_over_its_bound_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "w.json"
    with open(path, "wb") as f:
        f.truncate(reading.WORKLOAD_BYTES + 1)   # sparse
    with pytest.raises(WorkloadError, match=r"w.json \(Batsim workload\) is larger than 2 GiB"):
        read_batsim(str(path))


def test_robin_and_scheduler_options_read_within_bounds(fifo):
    from batloc.cli.scheduler import LaunchError, read_options
    from batloc.robin.description import DescriptionError, load_description

    with pytest.raises(DescriptionError, match="is a FIFO"):
        load_description(fifo)
    with pytest.raises(LaunchError, match="is a device"):
        read_options(SimpleNamespace(options_file="/dev/zero", options=None))
    with pytest.raises(LaunchError, match=r"\(3000001 characters\)") as refused:
        read_options(SimpleNamespace(options_file=None, options="{" + "x" * 3_000_000))
    assert len(str(refused.value)) < 500


def test_a_dropped_line_quotes_its_field_short(tmp_path):
    # a field of a 1 MiB line (the line bound) was echoed whole into the drop log and its error
    path = tmp_path / "t.swf"
    path.write_text("1 " + "x" * 500_000 + " 0 10 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    with pytest.raises(WorkloadError) as refused:
        read_swf(str(path), strict=True)
    assert "(500000 characters)" in str(refused.value) and len(str(refused.value)) < 500
