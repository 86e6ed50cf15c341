"""The Python planning pass's fast paths (the test oracle) against plain reference computations.

Backfilling availability (per-core sorted intervals, bisection, chained first
free instant), FileOutlook kept up to date with ``add`` instead of rebuilt, and
the planner's lazy choice of nodes to score exactly: each must give what the
straightforward computation gives, on small hand-checkable or seeded cases.
The compiled pass is held to this oracle by test_planning_differential.py;
the LEA cases at the top run the shipped schedulers.
"""

import random

import numpy as np

from batloc.locality.cache import NodeCache
from batloc.locality.platform_view import PlatformView
from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.lea import Lea
from batloc.schedulers.lea_bf import Lea_bf
from oracle_planner.availability import BackfillAvailability
from oracle_planner.file_outlook import FileOutlook, Window
from oracle_planner.scheduler import oracle_class

GB = 1e9


def _reference_t_exact(base, intervals, now, cores, walltime, lower):
    """Conservative backfilling by brute force: every candidate instant, every core."""
    cands = sorted({now} | {x for x in base if now < x < np.inf}
                   | {e for _, e, _ in intervals if now < e < np.inf})
    for x in cands:
        if lower is not None and x < lower:
            continue
        free = [p for p, b in enumerate(base)
                if b <= x and not any(q == p and s < x + walltime and e > x for s, e, q in intervals)]
        if len(free) >= cores:
            return x, free[:cores]
    return np.inf, None


def test_backfill_matches_brute_force_on_random_reservations():
    rng = random.Random(3)
    for trial in range(40):
        pv = PlatformView.from_resources(*make_resources({"n000": 6}))
        av = BackfillAvailability(pv)
        for p in range(6):
            if rng.random() < 0.5:
                av.hold(0, [p], float(rng.choice([5, 10, 20, 40])))
        av.begin_pass(0.0)
        base = list(av.base[0])
        intervals = []
        for _ in range(12):
            c, w = rng.randint(1, 6), float(rng.choice([5, 10, 15, 30, np.inf]))
            lower = float(av.t_lower(c, w)[0])
            t, pos = av.t_exact(0, c, w, lower=lower)
            rt, rpos = _reference_t_exact(base, intervals, 0.0, c, w, lower)
            assert t == rt and (pos is None) == (rpos is None)
            assert t == _reference_t_exact(base, intervals, 0.0, c, w, None)[0] == av.t_exact(0, c, w)[0]
            if pos is None:
                continue
            assert list(pos) == rpos
            av.reserve(0, pos, t, w)
            intervals += [(t, t + w, int(p)) for p in pos]
            # first_free: the end of the run of intervals covering each core's base.
            for p in range(6):
                ff, moved = base[p], True
                while moved:
                    moved = False
                    for s, e, q in intervals:
                        if q == p and s <= ff < e:
                            ff, moved = e, True
                assert av.first_free[0, p] == ff


def test_outlook_add_equals_rebuild():
    rng = random.Random(5)
    for model in ("paper", "lru", "strict"):
        for trial in range(30):
            cache = NodeCache(30 * GB, model)
            cache.start_job("A", 10 * GB, 0.0)
            cache.load_done("A", 1.0)
            cache.end_job("A", 2.0)
            cache.start_job("B", 10 * GB, 3.0, load_end=9.0)      # still loading
            actual = [Window(3.0, 9.0, 50.0, "B", 10 * GB)]
            kept = FileOutlook(cache, actual, [], 5.0)
            planned = []
            for _ in range(5):
                s = float(rng.choice([5, 10, 20, 30]))
                w = Window(s, s + 1.0, s + float(rng.choice([5, 20])), rng.choice(["A", "B", "C", None]),
                           10 * GB)
                planned.append(w)
                kept.add(w)
                fresh = FileOutlook(cache, actual, planned, 5.0)
                for f in ("A", "B", "C", None):
                    for t in (5.0, 8.0, 12.0, 25.0, 60.0):
                        assert kept.evaluate(f, 10 * GB, t, GB) == fresh.evaluate(f, 10 * GB, t, GB)
                        assert kept.penalty_bytes(f, t) == fresh.penalty_bytes(f, t)


def _run(sched, nodes, jobs):
    profiles = {f"d{j['delay']}": {"type": "delay", "delay": j["delay"]} for j in jobs}
    wl = [{"id": j["id"], "subtime": j["sub"], "res": j["res"], "walltime": j["wall"],
           "profile": f"d{j['delay']}", "input_file": j["file"], "input_size": j["size"]} for j in jobs]
    compute, storage = make_resources(nodes, memory_bytes=100 * GB, bandwidth=1 * GB)
    res = DryRun(sched, compute, storage, {"jobs": wl, "profiles": profiles}).run()
    return {j: (r["start"], r["alloc"]) for j, r in res.items()}


def test_lea_scores_past_an_inexact_bound():
    # n000 holds A's orphan copy (10 GB), n001 runs job 2. Job 3 needs B: both
    # nodes miss; n000 has the smallest bound, but its exact score adds the
    # eviction penalty of A, so the planner must check the other bounds.
    jobs = [dict(id=1, sub=0, res=2, wall=100, delay=5, file="A", size=10 * GB),
            dict(id=2, sub=0, res=2, wall=100, delay=60, file="C", size=1 * GB),
            dict(id=3, sub=30, res=1, wall=100, delay=5, file="B", size=10 * GB)]
    res = _run(Lea({}), {"n000": 2, "n001": 2}, jobs)
    assert res["w0!1"][1] == [0, 1] and res["w0!2"][1] == [2, 3]
    # At 30: n000 is idle with A unused (penalty); n001 runs job 2 until 61.
    # n000: 30 + 500*10 + 10*10/100/1 = 5031; n001: 61 + 5000 = 5061 -> n000.
    assert res["w0!3"][1] == [0]


def test_lea_bf_backfills_behind_a_stacked_node():
    # Job 1 holds core 0 over [0, 100) (its load ends at 1). Job 2 (2 cores) is
    # reserved at 100; job 3 (1 core, [2, 52)) fits in the hole on core 1; job 4
    # ([3, 203) on one core) would overlap job 2's reservation, so it waits and
    # starts when job 2 really ends (110).
    jobs = [dict(id=1, sub=0, res=1, wall=100, delay=100, file="A", size=1 * GB),
            dict(id=2, sub=1, res=2, wall=100, delay=10, file="A", size=1 * GB),
            dict(id=3, sub=2, res=1, wall=50, delay=10, file="A", size=1 * GB),
            dict(id=4, sub=3, res=1, wall=200, delay=10, file="A", size=1 * GB)]
    res = _run(Lea_bf({}), {"n000": 2}, jobs)
    assert res["w0!1"] == (1.0, [0]) and res["w0!3"] == (2.0, [1])
    assert res["w0!2"] == (100.0, [0, 1]) and res["w0!4"] == (110.0, [0])


def _exhaustive(variant):
    """The oracle's policy scoring every node exactly, penalty always computed."""
    base = oracle_class(variant, False)

    class Exhaustive(base):
        def make_planner(self):
            planner = super().make_planner()
            policy = planner.inner.policy
            policy.penalty_counts = None
            policy.lower_bound = lambda ctx, t_k, overhead, penalty: np.full(len(t_k), -np.inf)
            return planner
    return Exhaustive


def _random_jobs(seed, n=120):
    rng = random.Random(seed)
    return [dict(id=i, sub=rng.randint(0, 400), res=rng.choice([1, 1, 2, 3]), wall=rng.choice([60, 120, 400]),
                 delay=rng.randint(5, 60), file=rng.choice("ABCDEFG"), size=rng.choice([5, 20, 40]) * GB)
            for i in range(n)]


def test_pruned_planning_equals_exhaustive_scoring_for_every_policy():
    # LEO's bound is its own score at the lower t_k, LEO and LEM skip the
    # penalty where their score ignores it: none of that may change a decision.
    nodes = {f"n{i:03d}": 3 for i in range(5)}
    for variant in ("eft", "lea", "leo", "lem"):
        for opts in ({}, {"backfilling": True}, {"saturation": 0.6}, {"cache": "lru"}):
            for seed in (1, 2):
                jobs = _random_jobs(seed)
                fast = _run(oracle_class(variant, False)(dict(opts)), nodes, jobs)
                slow = _run(_exhaustive(variant)(dict(opts)), nodes, jobs)
                assert fast == slow, (variant, opts, seed)
