"""The planning pass's availability on its own (compiled): t_k with and without backfilling."""

import numpy as np

from batloc.locality.platform_view import PlatformView
from batloc.schedulers.planning import availability as av
from batloc.schedulers.planning.flat_state import FlatState
from batloc.schedulers.planning.flat_state import END
from batloc.schedulers.planning.scratch import FREE, HEAD, P_NEXT, allocate
from batloc.testing.dry_run import make_resources


def view(nodes):
    return PlatformView.from_resources(*make_resources(nodes))


def _pass(pv, held, now, backfilling):
    flat = FlatState(pv)
    for node, pos, end in held:
        flat.hold(node, [pos], end)
    S = allocate(flat.n, flat.m, flat.words, 8, 64, 64, flat.mem_cap)
    av.load_all(backfilling, now, flat.core_end, flat.core_held, S.base, S.first_free, S.tails, S.core_iv, S.cols, S.tcols,
                S.tree, S.node_i, S.cand_times, S.ints)
    return S


def t_k(S, cores, now):
    """t_k for every node (free cores are kept as -inf and read as now)."""
    return [max(x, now) for x in S.cols[cores - 1, :-1]]


def test_core_availability_is_the_cth_smallest_core_end():
    pv = view({"n000": 3, "n001": 2})
    S = _pass(pv, [(0, 0, 50.0), (0, 1, 30.0)], 10.0, False)
    # n000: cores free at 50, 30, 10 -> 1 core at 10, 2 at 30, 3 at 50; n001 has only 2 cores.
    assert t_k(S, 2, 10.0) == [30.0, 10.0]
    assert t_k(S, 3, 10.0) == [50.0, np.inf]
    assert av.t_exact(0, 2, 10.0, S.cols, S.base, S.pos) == 30.0 and list(S.pos[0, :2]) == [1, 2]
    S.pos[1, :2] = [1, 2]
    av.reserve(0, 2, 30.0, 100.0, 10.0, S.base, S.cols, S.tree, S.node_i, S.cand_times, S.pos,
               S.ints)                                          # cores 1, 2 until 130
    assert list(S.cols[:, 0]) == [50.0, 130.0, 130.0] and S.node_i[0, FREE] == 0
    av.flush(S.tree, S.cols, 0)                 # the trees are lazy: read after the reservation is put in place
    assert av.least(S.tree, 0)[0] == 1     # the tree's least node: n001 is free now, n000 only at 50


def test_a_job_past_its_planned_end_keeps_its_cores_now():
    pv = view({"n000": 2})
    S = _pass(pv, [(0, 0, 5.0)], 10.0, False)      # its completion has not reached us
    assert t_k(S, 1, 10.0) == [10.0] and 10.0 < S.cols[1, 0] < 10.001 and S.node_i[0, FREE] == 1


def test_backfill_window_must_fit_before_the_next_reservation():
    pv = view({"n000": 2})
    S = _pass(pv, [(0, 0, 100.0)], 0.0, True)

    def t_bf(cores, walltime):
        return av.t_exact_bf(0, cores, walltime, 0.0, 0.0, S.cols, S.base, S.tails, S.pos, S.cand_times, S.core_iv,
                             S.iv, S.node_i, S.plan)
    t = t_bf(2, 50.0)
    assert t == 100.0
    S.pos[1] = S.pos[0]
    av.reserve_bf(0, 2, t, 50.0, 0.0, S.base, S.first_free, S.tails, S.cols, S.tcols, S.tree, S.node_i,
                  S.cand_times, S.pos, S.core_iv, S.iv, S.ints)       # both cores [100,150)
    S.node_i[0, HEAD], S.plan[0, END], S.plan[0, P_NEXT] = 0, 150.0, -1     # as the planner records it
    assert list(S.tails[0, :5]) == [150.0, 150.0, 150.0, 150.0, 100.0]  # last ends, sorted, longest gap
    assert t_bf(1, 100.0) == 0.0 and list(S.pos[0, :1]) == [1]      # [0,100) fits on core 1
    assert t_bf(1, 101.0) == 150.0 and list(S.pos[0, :1]) == [0]    # longer than any gap: after the last ends
    # Core 1's earliest free instant stays now (its interval starts at 100), core 0's is 150.
    assert list(S.first_free[0]) == [150.0, -np.inf] and t_k(S, 1, 0.0) == [0.0]


def test_working_memory_grows_only_where_it_is_outgrown():
    # A queue that keeps growing must not double the file tables (files x
    # nodes) with it: that ran a saturated week out of memory.
    from batloc.schedulers.planning.options import SchedulerOptions
    from batloc.schedulers.planning.planner import Planner
    from batloc.schedulers.planning.state import ClusterState
    planner = Planner(ClusterState(view({"n000": 4, "n001": 4}), SchedulerOptions()), "LEA")
    first = planner._scratch_for(16, 16, 64, 1)
    for slots in (40, 100, 300, 1000):
        S = planner._scratch_for(slots, 16, 64, 1)
    assert S.plan.shape[0] >= 1000
    assert S.pf_count.shape == first.pf_count.shape == (64, 2)
    assert S.pos_plan.shape[1] == 4
    S = planner._scratch_for(1000, 16, 65, 1)
    assert S.pf_count.shape[0] == 128 and S.plan.shape[0] >= 1000


def _reserve_one(S, k, p, start, walltime, now):
    """Core p of node k reserved over [start, start + walltime)."""
    S.pos[1, 0] = p
    av.reserve_bf(k, 1, start, walltime, now, S.base, S.first_free, S.tails, S.cols, S.tcols, S.tree, S.node_i,
                  S.cand_times, S.pos, S.core_iv, S.iv, S.ints)


def _earliest(S, k, cores, walltime, now, spans):
    """t_k by brute force: the first instant (now, an actual job's end, a reservation's end) from which
    ``cores`` cores of node k are free for walltime, spans[p] being core p's reservations."""
    m = S.base.shape[1]
    ends = {max(S.base[k, p], now) for p in range(m)} | {e for sp in spans for _, e in sp if e >= now} | {now}
    for x in sorted(ends):
        free = sum(1 for p in range(m) if max(S.base[k, p], now) <= x
                   and all(e <= x or s >= x + walltime for s, e in spans[p]))
        if free >= cores:
            return x
    return np.inf


def test_gaps_as_long_as_the_job_bound_its_backfilling_start():
    # n000, 3 cores: core 0 held until 100; core 1 reserved [0,10) and [40,100); core 2 [20,200).
    pv = view({"n000": 3})
    S = _pass(pv, [(0, 0, 100.0)], 0.0, True)
    for p, start, wall in [(1, 0.0, 10.0), (1, 40.0, 60.0), (2, 20.0, 180.0)]:
        _reserve_one(S, 0, p, start, wall, 0.0)
    # Gaps: core 0 [100, inf); core 1 [10,40) and [100, inf); core 2 [0,20) and [200, inf).
    bound = lambda c, w, now=0.0: av.gap_bound(0, c, w, now, S.tails, S.cand_times)
    assert bound(1, 25.0) == 10.0      # core 1's 30 s gap; core 2's 20 s one is too short
    assert bound(1, 15.0) == 0.0       # core 2's first gap
    assert bound(2, 25.0) == 100.0     # [10, 100, 200]: the second
    assert bound(2, 15.0) == 10.0      # [0, 10, 100]
    assert bound(3, 1.0) == 100.0
    assert bound(1, 25.0, now=30.0) == 30.0     # raised to now (the first gap only shortens)
    # The row's first columns keep their meaning: the longest gap on the node.
    assert S.tails[0, 2 * 3] == 30.0


def test_gap_bound_never_exceeds_the_backfilling_start():
    # Random reservations on the cores of one node: the bound is at most t_k by brute force, for every
    # core count and walltime, also read at a later instant; for one core it is t_k where no core
    # has more gaps longer than all before than the row keeps.
    rng = np.random.default_rng(5)
    pv = view({"n000": 6})
    for trial in range(60):
        held = [(0, p, float(rng.integers(0, 50))) for p in range(6) if rng.random() < 0.5]
        S = _pass(pv, held, 0.0, True)
        spans = [[] for _ in range(6)]
        for p in range(6):
            t = max(S.base[0, p], 0.0)
            for _ in range(int(rng.integers(0, 7))):
                t += float(rng.integers(0, 40))
                wall = float(rng.integers(1, 40))
                _reserve_one(S, 0, p, t, wall, 0.0)
                spans[p].append((t, t + wall))
                t += wall
        records = []
        for p in range(6):
            prev, longest, kept = max(S.base[0, p], 0.0), 0.0, 0
            for s, e in spans[p]:
                if s - prev > longest:
                    longest, kept = s - prev, kept + 1
                prev = e
            records.append(kept)
        for now in (0.0, float(rng.integers(1, 60))):
            for c in range(1, 7):
                for w in (0.5, 3.0, 10.0, 25.0, 60.0):
                    exact = _earliest(S, 0, c, w, now, spans)
                    got = av.gap_bound(0, c, w, now, S.tails, S.cand_times)
                    assert got <= exact, (trial, now, c, w, got, exact)
                    if c == 1 and now == 0.0 and max(records) < av.FRONT:
                        assert got == exact, (trial, w, got, exact)


def test_the_pass_stops_after_the_last_job_that_fits_a_gap_from_now():
    # Some node has 1 core free for 100 s, 2 cores for 30 s, no node 3.
    gaps = np.array([100.0, 30.0, -np.inf])
    cores = np.array([1, 2, 3, 2, 1, 4], dtype=np.int64)
    walls = np.array([500.0, 20.0, 1.0, 40.0, 150.0, 1.0])
    assert av.last_fitting(gaps, cores, walls, 0, 5) == 1    # job 1: 2 cores for 20 s; none after it fits
    assert av.last_fitting(gaps, cores, walls, 2, 5) == 1    # from job 2 on, none: i - 1
    walls[4] = 100.0
    assert av.last_fitting(gaps, cores, walls, 0, 5) == 4    # 1 core for exactly the gap's 100 s
    assert av.last_fitting(gaps, cores, walls, 0, 3) == 1    # a later call starts at the last answer
