"""The pieces of Khanna et al.'s policies, by hand: value eviction, transfer chart,
walltime projection, hypergraph weights, greedy partition, options and bad input."""

import numpy as np
import pytest

from batloc.locality.value_cache import FileCensus, ValueCache
from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.filesharing import hypergraph
from batloc.schedulers.filesharing.state import Job
from batloc.schedulers.filesharing.options import OptionsError
from batloc.schedulers.filesharing.partition import GreedyPartitioner
from batloc.schedulers.filesharing.projection import Projection
from batloc.schedulers.filesharing.transfers import TransferChart
from batloc.schedulers.jdp_dll import Jdp_dll
from batloc.schedulers.met import Met
from batloc.schedulers.online_hps import Online_hps
from batloc.schedulers.sa import Sa, balance_index


def job(i, file, size=10.0, walltime=20.0, cores=1):
    return Job(f"w0!{i}", cores, walltime, file, size, 1.0, i)


def test_value_policy_evicts_the_least_valuable_unused_file():
    census = FileCensus()
    caches = [ValueCache(30, census), ValueCache(30, census)]

    def run(node, file, size, t):
        census.accessed(file)
        case, evicted = caches[node].start_job(file, size, t)
        census.drop(evicted, node)
        census.add(file, node)
        caches[node].load_done(file, t)
        census.drop(caches[node].end_job(file, t + 1), node)
        return evicted

    run(0, "A", 10, 0)       # A: 1 access, 1 copy  -> value 10
    run(0, "B", 10, 1)
    run(0, "B", 10, 2)       # B: 2 accesses, 1 copy -> 20
    run(1, "C", 10, 3)
    run(0, "C", 10, 4)       # C: 2 accesses, 2 copies -> 10, used after A (LRU tie-break)
    assert run(0, "D", 10, 5) == ["A"]
    assert census.nodes("A") == ()
    # D now has value 10 like C; C was used last at 5 (its end), D at 6: C goes first.
    assert run(0, "E", 10, 7) == ["C"]


def test_value_policy_never_evicts_a_file_in_use():
    census = FileCensus()
    cache = ValueCache(15, census)
    cache.start_job("A", 10, 0)                  # A's user still runs
    case, evicted = cache.start_job("B", 10, 1)
    assert (case, evicted) == ("miss", []) and cache.overflows == [(1, "B", 20.0)]


def test_transfer_chart_serialises_loads_into_a_node_and_optionally_out_of_lustre():
    chart = TransferChart([1.0, 2.0])
    assert chart.reserve(0, 10, 5) == (5, 15)
    assert chart.tct(0, 10, 6) == 25          # after the load into node 0
    assert chart.tct(1, 10, 6) == 11          # node 1 is free: 6 + 10 / 2
    lane = TransferChart([1.0, 2.0], shared_lane=True)
    lane.reserve(0, 10, 5)
    assert lane.tct(1, 10, 6) == 20           # Lustre busy until 15
    assert list(lane.tct_all(10, np.array([6.0, 6.0]))) == [25, 20]


def test_projection_plays_each_fifo_queue_with_walltimes():
    proj = Projection([2, 1])
    proj.rebuild(0, [30.0, 10.0], [(2, 5.0), (1, 7.0)], now=0.0)
    # the 2-core job waits for both cores (30), the next one starts no earlier (FIFO): 35 and 35
    assert list(proj.t_k(1, 0.0)) == [35.0, 0.0]
    assert list(proj.t_k(2, 0.0)) == [42.0, np.inf]
    assert list(proj.ready(0.0)) == [42.0, 0.0]


def test_k2_hypergraph_weights_cap_and_greedy_partition():
    pending = [job(1, "A"), job(2, "A"), job(3, "B"), job(4, "B")]
    hg = hypergraph.build(pending, [{}, {}], lambda f: (), np.array([1.0, 1.0]), now=1.0)
    assert list(hg.job_weight) == [27.5] * 4              # 10 x (0.5 + 0.5 x 0.5) + 20
    caps = 1.1 * hg.total_weight * np.array([1, 1]) / 2
    assert list(caps) == pytest.approx([60.5, 60.5])
    assert list(GreedyPartitioner().partition(hg, caps, np.array([1, 1]))) == [0, 0, 1, 1]


def test_greedy_partition_follows_the_anchor_of_a_cached_file():
    # B is cached on node 1: J (needing B) goes there although node 0 is as light.
    hg = hypergraph.build([job(1, "B")], [{}, {}], lambda f: (1,) if f == "B" else (), np.array([1.0, 1.0]), 0.0)
    assert list(hg.net_anchors) == [[1]]
    assert list(GreedyPartitioner().partition(hg, np.array([100.0, 100.0]), np.array([1, 1]))) == [1]


def test_greedy_partition_without_room_overloads_parts_least():
    # Three idle parts, caps below one job's weight (a big cluster, few jobs): J1 overloads every
    # part alike and takes part 0; J2 shares A but would overload part 0 twice: part 1.
    hg = hypergraph.build([job(1, "A"), job(2, "A"), job(3, "B")], [{}, {}, {}], lambda f: (),
                          np.array([1.0, 1.0, 1.0]), 0.0)
    caps = np.full(3, 1.0)
    assert list(GreedyPartitioner().partition(hg, caps, np.array([1, 1, 1]))) == [0, 1, 2]
    # with room everywhere, the cut wins: J1, J2 together; J3 to the lighter of the others
    assert list(GreedyPartitioner().partition(hg, np.full(3, 1e9), np.array([1, 1, 1]))) == [0, 0, 1]


def test_mtkahypar_option_partitions_k2_like_the_greedy_one():
    pytest.importorskip("mtkahypar")
    jobs = [{"id": i, "subtime": 1, "res": 1, "walltime": 20, "profile": "d10", "input_file": f, "input_size": 10.0}
            for i, f in ((1, "A"), (2, "A"), (3, "B"), (4, "B"))]
    compute, storage = make_resources({"n000": 1, "n001": 1}, memory_bytes=1e6, bandwidth=1.0)
    res = DryRun(Online_hps({"partitioner": "mtkahypar"}), compute, storage, wl(jobs)).run()
    together = {tuple(res[f"w0!{i}"]["alloc"]) for i in (1, 2)}, {tuple(res[f"w0!{i}"]["alloc"]) for i in (3, 4)}
    assert len(together[0]) == len(together[1]) == 1 and together[0] != together[1]
    assert sum(1 for k in res if k.startswith("batloc-stage")) == 2


def test_sa_balance_index():
    assert balance_index(np.array([0.0, 0.0])) == 1.0
    assert balance_index(np.array([35.0, 49.0])) == pytest.approx(0.714, abs=1e-3)


def test_unknown_or_bad_options_name_the_valid_ones():
    with pytest.raises(OptionsError, match=r"MET: unknown option\(s\) 'threshold'; valid options: bandwidth, cache"):
        Met.parse_options({"threshold": 2})
    with pytest.raises(OptionsError, match="epsilon, export_prefix, partitioner"):
        Online_hps.parse_options({"eps": 0.1})
    with pytest.raises(OptionsError, match="cache.*value, paper, strict, lru"):
        Sa.parse_options({"cache": "fifo"})
    with pytest.raises(OptionsError, match="threshold.*integer >= 1"):
        Jdp_dll.parse_options({"threshold": 0})
    with pytest.raises(OptionsError, match="partitioner.*greedy, mtkahypar"):
        Online_hps.parse_options({"partitioner": "patoh"})
    assert Jdp_dll({}).opts.cache == "lru" and Met({}).opts.cache == "value"


def wl(jobs):
    return {"jobs": jobs, "profiles": {"d10": {"type": "delay", "delay": 10.0}}}


@pytest.mark.parametrize("policy", [Met, Online_hps])
def test_workload_without_files_runs_with_a_warning(capsys, policy):
    # Two 1-core nodes, three 10 s jobs at t=1: two start at once, the third at 11.
    jobs = [{"id": i, "subtime": 1, "res": 1, "walltime": 20, "profile": "d10"} for i in (1, 2, 3)]
    compute, storage = make_resources({"n000": 1, "n001": 1})
    res = DryRun(policy({}), compute, storage, wl(jobs)).run()
    assert sorted(r["start"] for r in res.values()) == [1.0, 1.0, 11.0]
    assert "job w0!1 has no input_file/input_size" in capsys.readouterr().err


@pytest.mark.parametrize("policy", [Sa, Jdp_dll, Online_hps])
def test_job_wider_than_a_node_is_rejected_with_its_id(capsys, policy):
    jobs = [{"id": 7, "subtime": 1, "res": 3, "walltime": 20, "profile": "d10", "input_file": "A", "input_size": 1e9},
            {"id": 8, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10", "input_file": "A", "input_size": 1e9}]
    compute, storage = make_resources({"n000": 2, "n001": 2}, bandwidth=1e9)
    run = DryRun(policy({}), compute, storage, wl(jobs))
    res = run.run()
    assert run.rejected == ["w0!7"]
    assert "job w0!7 requests 3 cores but a job must fit on one node" in capsys.readouterr().err
    assert res["w0!8"]["start"] == 2.0     # 1 + 1 GB / 1 GB/s


def test_decisions_are_deterministic(tmp_path):
    rng = np.random.default_rng(3)
    jobs = [{"id": i, "subtime": float(rng.integers(1, 50)), "res": int(rng.integers(1, 3)), "walltime": 40,
             "profile": "d10", "input_file": f"f{rng.integers(0, 6)}", "input_size": 5e9} for i in range(60)]
    logs = []
    for k in range(2):
        compute, storage = make_resources({"n000": 2, "n001": 2, "n002": 2}, bandwidth=1e9, memory_bytes=12e9)
        path = tmp_path / f"d{k}.csv"
        DryRun(Online_hps({"decisions": str(path)}), compute, storage, wl(jobs)).run()
        logs.append(path.read_text())
    assert logs[0] == logs[1] and logs[0].count("\n") == 61


@pytest.mark.parametrize("policy", [Met, Sa, Jdp_dll, Online_hps])
def test_a_window_end_in_the_message_of_the_jobs_completion_kills_nothing(policy):
    # Window [1, 21): its 10 GB file loads [1, 11), it computes [11, 21) and completes at its
    # window's end. The kill timer, asked at 1, comes first in that instant's message, as Batsim
    # 4.2.1 sends it: a KILL_JOB in the answer would abort Batsim (the dry run refuses it).
    jobs = [{"id": 1, "subtime": 1, "res": 1, "walltime": 20, "profile": "d10", "input_file": "A",
             "input_size": 10e9}]
    compute, storage = make_resources({"n000": 1}, bandwidth=1e9)
    res = DryRun(policy({}), compute, storage, wl(jobs)).run()
    assert (res["w0!1"]["start"], res["w0!1"]["finish"], res["w0!1"]["state"]) == (
        11.0, 21.0, "COMPLETED_SUCCESSFULLY")
