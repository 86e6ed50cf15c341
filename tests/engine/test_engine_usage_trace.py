"""Batsim 4.2.1's usage_trace profile (engine/usage_trace.py), every instant computed by hand.

The rules (jobs_execution.cpp, SimGrid 3.34's xbt_replay.cpp): rank i runs on allocated host i mod the job's
size and replays its file line by line ('#' lines and other ranks' lines skipped, a last line without newline
never read); `m_usage U F` is a parallel task of k = max(round(U x cores), 1) copies of the host, F flops each
(each copy at most one core's speed, all of them at most the host's cores); a rank done sends 4 bytes to the
job's first host, one rank at a time; the job ends when the last has arrived.

The platform is test_engine_batsim_time.py's, with 4-core hosts and a route from h1 to itself (1 ms): a job
submitted at 0 starts at 0.005 s there (hello, ready, submission, bye, EXECUTE_JOB: 1 ms each, the submission
and the decision crossing lo).
"""

import pytest

from engine_harness import Fifo, run, write

pytest.importorskip("zmq")

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="h1" speed="1Gf" core="4"/>
    <host id="h2" speed="1Gf" core="4"/>
    <link id="lo" bandwidth="1e12Bps" latency="1ms" sharing_policy="FATPIPE"/>
    <link id="l1" bandwidth="1e12Bps" latency="2ms"/>
    <link id="l2" bandwidth="1e12Bps" latency="3ms"/>
    <link id="l11" bandwidth="1e12Bps" latency="1ms"/>
    <link id="l12" bandwidth="1e6Bps" latency="5ms"/>
    <route src="master_host" dst="master_host"><link_ctn id="lo"/></route>
    <route src="h1" dst="master_host"><link_ctn id="l1"/></route>
    <route src="h2" dst="master_host"><link_ctn id="l2"/></route>
    <route src="h1" dst="h1"><link_ctn id="l11"/></route>
    <route src="h1" dst="h2"><link_ctn id="l12"/></route>
  </zone>
</platform>
"""


def case(tmp_path, ranks, res, walltime=-1):
    """A workload of one job (submitted at 0) whose usage trace has one file per rank, texts as given."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for rank, text in enumerate(ranks):
        (folder / f"rank{rank}.txt").write_text(text)
    (folder / "list.txt").write_text("".join(f"rank{rank}.txt\n" for rank in range(len(ranks))))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [
        {"id": 1, "subtime": 0, "res": res, "profile": "ut", "walltime": walltime}],
        "profiles": {"ut": {"type": "usage_trace", "trace": "traces/list.txt"}}})
    return write(tmp_path, "p.xml", PLATFORM), wl


def row(res):
    r = res.jobs()["1"]
    return float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"], r["final_state"]


def test_two_ranks_on_one_host_share_its_cores_and_round_half_up(tmp_path):
    # res 1: both ranks on h1. Rank 0's first task: round(0.625 x 4) = 3 copies (C's round; Python's would
    # give 2), rank 1's: round(0.5 x 4) = 2; 5 copies of 1e9 flops on 4 cores: both end after 5/4 = 1.25 s.
    # Rank 1 is then done: its 4 bytes cross h1 -> h1 in 1 ms. Rank 0 skips the other rank's line and runs
    # max(round(0.4), 1) = 1 copy of 2e9 flops (2 s), and never reads its last line (no newline after it):
    # done at 3.25 s, its 4 bytes arrive 1 ms later. 0.005 + 3.251 = 3.256.
    plat, wl = case(tmp_path, ["# rank 0\n0 m_usage 0.625 1e9\n1 m_usage 1 1e12\n\n0 m_usage 0.1 2e9\n"
                               "0 m_usage 1 9e9", "1 m_usage 0.5 1e9\n"], res=1)
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert row(res) == (0.005, 3.256, "0", "COMPLETED_SUCCESSFULLY")


def test_the_ranks_ends_cross_one_after_the_other(tmp_path):
    # res 2: rank 0 on h1, rank 1 on h2, 4 copies each of 1e9 flops on 4 cores: both done at 1 s. Their
    # ends go to the executor on h1 one at a time: 1 ms (h1 -> h1) and 5 ms + 4 bytes at 1e6 B/s (h2 -> h1),
    # 6.004 ms in all (together they would take 5.004 ms): 0.005 + 1.006004.
    plat, wl = case(tmp_path, ["0 m_usage 1 1e9\n", "1 m_usage 1 1e9\n"], res=2)
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert row(res) == (0.005, 1.011004, "0-1", "COMPLETED_SUCCESSFULLY")


def test_the_walltime_kills_the_ranks(tmp_path):
    # the first test's job with a 2 s walltime: killed at 0.005 + 2; its ranks' tasks stop there (a parallel
    # task would run on: its next job could not start)
    plat, wl = case(tmp_path, ["0 m_usage 0.625 1e9\n0 m_usage 0.1 2e9\n", "1 m_usage 0.5 1e9\n"], res=1,
                    walltime=2)
    res = run(tmp_path, plat, [wl], Fifo())
    assert res.returncode == 0, res.stderr
    assert row(res) == (0.005, 2.005, "0", "COMPLETED_WALLTIME_REACHED")


@pytest.mark.parametrize("ranks, fragment", [
    (["0 m_sleep 1\n"], "rank0.txt:1: unknown replay action 'm_sleep'"),
    (["0 m_usage 1.5 1e9\n"], "rank0.txt:1: invalid usage 1.5: not in [0,1]"),
    (["\n0 m_usage 1 -3\n"], "rank0.txt:2: invalid flops -3: not positive and finite"),
    (["0 m_usage 1\n"], "rank0.txt:1: m_usage needs a usage and a number of flops"),
])
def test_a_bad_trace_is_refused_in_one_line_naming_file_and_line(tmp_path, ranks, fragment):
    plat, wl = case(tmp_path, ranks, res=1)
    res = run(tmp_path, plat, [wl], Fifo(), timeout=30)
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert fragment in res.stderr and "profile 'ut'" in res.stderr, res.stderr


def test_a_missing_trace_file_is_refused_naming_it(tmp_path):
    plat, wl = case(tmp_path, ["0 m_usage 1 1e9\n"], res=1)
    (tmp_path / "traces" / "rank0.txt").unlink()
    res = run(tmp_path, plat, [wl], Fifo(), timeout=30)
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "profile 'ut': rank 0's trace" in res.stderr and "rank0.txt cannot be read" in res.stderr, res.stderr
