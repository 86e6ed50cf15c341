"""Every input the engine reads is bounded (issue 37): a file that never ends, is not a file, is too large or
lies outside the workload's folder is refused in one line naming it and the bound, quickly, and an error
quotes a short excerpt of what it read, never the whole of it."""

import json
import os
import subprocess

import pytest

from engine_harness import ENGINE, platform_xml, write
from batloc import reading

pytestmark = pytest.mark.needs_simgrid


def trace_workload(tmp_path, trace="list.txt"):
    return write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "u",
                                                             "walltime": 10}],
                                      "profiles": {"u": {"type": "usage_trace", "trace": trace}}})


def engine(tmp_path, platform, workload, *extra, timeout=30):
    return subprocess.run(ENGINE + ["-p", platform, "-w", workload, "-e", str(tmp_path / "o"),
                                    "-s", "tcp://127.0.0.1:9", "--ready-timeout", "1", *extra],
                          capture_output=True, text=True, timeout=timeout)


def one_line(proc, *fragments):
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("name, fragments", [
    ("/dev/zero", ["/dev/zero is outside the workload's folder", "--traces-anywhere"]),
    ("../../../../../../../../etc/passwd", ["is outside the workload's folder"]),
])
def test_a_trace_outside_the_workloads_folder_is_not_followed(tmp_path, platform, name, fragments):
    (tmp_path / "list.txt").write_text(name + "\n")
    err = one_line(engine(tmp_path, platform, trace_workload(tmp_path)), *fragments)
    assert "root:" not in err   # nothing of the file is read, so nothing of it is shown


def test_a_symbolic_link_out_of_the_folder_is_outside_too(tmp_path, platform):
    os.symlink("/etc/passwd", tmp_path / "rank0.txt")
    (tmp_path / "list.txt").write_text("rank0.txt\n")
    one_line(engine(tmp_path, platform, trace_workload(tmp_path)), "rank0.txt is outside the workload's folder")


def test_with_traces_anywhere_a_device_is_still_refused(tmp_path, platform):
    (tmp_path / "list.txt").write_text("/dev/zero\n")
    one_line(engine(tmp_path, platform, trace_workload(tmp_path), "--traces-anywhere"),
             "/dev/zero (", "rank 0's trace) is a device, not a regular file")


def test_a_fifo_is_not_waited_on(tmp_path, platform):
    os.mkfifo(tmp_path / "rank0.txt")   # nobody ever writes it: opening it to read would block for ever
    (tmp_path / "list.txt").write_text("rank0.txt\n")
    one_line(engine(tmp_path, platform, trace_workload(tmp_path), timeout=20), "rank0.txt (", "is a FIFO")


def test_traces_past_their_bound_are_not_read(tmp_path, platform):
    with open(tmp_path / "rank0.txt", "wb") as f:   # sparse: 1 GiB and one byte, written in no time
        f.truncate(reading.TRACE_BYTES + 1)
    (tmp_path / "list.txt").write_text("rank0.txt\n")
    one_line(engine(tmp_path, platform, trace_workload(tmp_path)), "past 1 GiB, their bound: not read")


def test_a_long_line_is_quoted_short(tmp_path, platform):
    (tmp_path / "rank0.txt").write_text("0 " + "x" * 5_000_000 + " 1 1\n")
    (tmp_path / "list.txt").write_text("rank0.txt\n")
    err = one_line(engine(tmp_path, platform, trace_workload(tmp_path)), "unknown replay action 'xxx",
                   "(5000000 characters)")
    assert len(err) < 1000


def test_a_huge_job_id_is_quoted_short(tmp_path, platform):
    job = {"id": "j" * 3_000_000, "subtime": 1, "res": 1, "profile": "nosuch"}
    path = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [job], "profiles": {}})
    assert len(one_line(engine(tmp_path, platform, path), "(3000000 characters)", "'nosuch' is not defined")) < 1000


@pytest.mark.parametrize("make, fragments", [
    (lambda p: "/dev/zero", ["/dev/zero (workload) is a device, not a regular file"]),
    (lambda p: (os.mkfifo(p / "w.json"), str(p / "w.json"))[1], ["(workload) is a FIFO"]),
    (lambda p: (open(p / "w.json", "wb").truncate(reading.WORKLOAD_BYTES + 1), str(p / "w.json"))[1],
     ["(workload) is larger than 2 GiB, the bound batloc reads"]),
    (lambda p: write(p, "w.json", b"\xef\xbb\xbf".decode("latin-1") and "\ufeff{}"),
     ["(workload) starts with a UTF-8 byte order mark"]),
    (lambda p: write(p, "w.json", "[" * 100_000), ["JSON nested too deeply"]),
])
def test_a_workload_that_is_no_file_or_too_large_is_refused(tmp_path, platform, make, fragments):
    one_line(engine(tmp_path, platform, make(tmp_path), timeout=20), *fragments)


CLUSTER = """<?xml version='1.0'?>
<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-1999999999" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
"""


def test_a_platform_of_two_billion_hosts_is_refused_before_simgrid(tmp_path):
    wl = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [], "profiles": {}})
    one_line(engine(tmp_path, write(tmp_path, "p.xml", CLUSTER), wl, timeout=20),
             "declares 2000000000 hosts, more than 1048576, the bound batloc loads")


def test_a_platform_with_a_byte_order_mark_is_refused_saying_so(tmp_path, platform):
    with open(platform, encoding="utf-8") as f:
        text = f.read()
    bom = write(tmp_path, "bom.xml", "\ufeff" + text)
    wl = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [], "profiles": {}})
    one_line(engine(tmp_path, bom, wl), "bom.xml (platform) starts with a UTF-8 byte order mark")


def test_the_readers_bounds(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert reading.read_bytes(str(path), 100) == b"x" * 100
    with pytest.raises(reading.Refused, match=r"is larger than 99 bytes") as refused:
        reading.read_bytes(str(path), 99)
    assert refused.value.bound == 99
    assert reading.excerpt("y" * 1000) == repr("y" * 60) + "... (1000 characters)"
    assert reading.excerpt(list(range(10**6))).startswith("[0, 1, 2, 3, 4, 5, ...]")
    assert reading.clipped("1.5") == "1.5"


@pytest.mark.parametrize("job, profiles, what", [
    ({"subtime": 1e308}, {"d": {"type": "delay", "delay": 1.7e308}}, "plus its delays (1.7e+308 s)"),
    ({"subtime": 1e308, "walltime": 1.7e308}, {"d": {"type": "delay", "delay": 1}}, "plus its walltime (1.7e+308 s)"),
    ({"subtime": 1}, {"d": {"type": "sequence", "seq": ["e"], "repeat": 10 ** 400}, "e": {"type": "delay", "delay": 1}},
     "plus its delays (inf s)"),
])
def test_a_job_whose_end_overflows_the_clock_is_refused(tmp_path, platform, job, profiles, what):
    # the clock reached +inf: inf and nan on a COMPLETED_SUCCESSFULLY row, the scheduler blamed
    path = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "res": 1, "profile": "d", **job}],
                                      "profiles": profiles})
    one_line(engine(tmp_path, platform, path), "job '1': subtime", what, "past the largest time a double holds")


LATE = '''
from batsim.batsim import BatsimScheduler


class Late(BatsimScheduler):
    def onJobSubmission(self, job):
        self.job = job
        self.bs.wake_me_up_at(1.7e308)

    def onRequestedCall(self):
        self.job.allocation = "0"
        self.bs.execute_jobs([self.job])
'''


@pytest.mark.parametrize("latency", ["0s", "1ms"])   # the instant and the timed modes
def test_a_job_started_so_late_that_its_end_overflows_the_clock_is_refused(tmp_path, latency):
    # a call at 1.7e308 s, then a start: its end was +inf, never reached, and the run said "deadlock"
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, latency=latency))
    path = write(tmp_path, "w.json", {"nb_res": 1, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                                      "profiles": {"d": {"type": "delay", "delay": 1e308}}})
    proc = subprocess.run(ENGINE + ["-p", platform, "-w", path, "-e", str(tmp_path / "o"), "--in-process",
                                    write(tmp_path, "late.py", LATE)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("batloc-batsim: error: EXECUTE_JOB of 'w0!1' at t=") and (
        ": its start 1.7e+308 plus its delays (1e+308 s) is past the largest time a double holds (the clock would "
        "reach +inf); outputs written to") in last, last
    assert ",SUBMITTED," in (tmp_path / "o_jobs.csv").read_text()
