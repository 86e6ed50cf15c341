"""The CONS plan against brute force: rule 1 by trying every position, lists re-evaluated
from scratch after placements and Tabu rounds (no stale state from the early stops)."""

import copy
import random
from types import SimpleNamespace

import numpy as np
import pytest

from batloc.schedulers.tabu.plan import Plan
from batloc.schedulers.tabu.search import optimise, seed_state


def evaluate(base, jobs, now):
    """Starts of `jobs` [(cores, walltime)] in list order from the availability vector `base`."""
    avail = sorted(base)
    starts = []
    for c, w in jobs:
        t = max(now, avail[c - 1])
        avail = sorted(avail[c:] + [t + w] * c)
        starts.append(t)
    return starts


def brute_rule1(base, jobs, c, w, now):
    """(position, start) of the earliest start that leaves every other start unchanged."""
    old = evaluate(base, jobs, now)
    best = None
    for p in range(len(jobs) + 1):
        new = evaluate(base, jobs[:p] + [(c, w)] + jobs[p:], now)
        if new[:p] + new[p + 1:] == old and (best is None or new[p] < best[1]):
            best = (p, new[p])
    return best


def item(i, cores, wall, sub=0.0):
    return SimpleNamespace(id=f"j{i}", cores=cores, walltime=wall, subtime=sub)


def node_jobs(plan, k):
    return [(int(plan.cores[s]), float(plan.wall[s])) for s in plan.order(k)]


def assert_consistent(plan, bases, now):
    for k, base in enumerate(bases):
        order = plan.order(k)
        assert list(plan.start[order]) == evaluate(base, node_jobs(plan, k), now)
        assert list(plan.pos[order]) == list(range(len(order)))


@pytest.mark.parametrize("seed", range(40))
def test_rule1_is_the_earliest_start_that_delays_nobody(seed):
    rng = random.Random(seed)
    cores = rng.choice([1, 2, 4, 6])
    base = [rng.choice([0.0, 0.0, rng.uniform(0, 50)]) for _ in range(cores)]
    plan = Plan([cores])
    plan.set_available(0, base, 0.0)
    for i in range(rng.randint(0, 12)):
        c, w = rng.randint(1, cores), float(rng.choice([5, 10, 20, rng.randint(1, 60)]))
        expected = brute_rule1(base, node_jobs(plan, 0), c, w, 0.0)
        before = list(plan.start[plan.order(0)])
        slot = plan.place(item(i, c, w), 0, 0.0)
        order = list(plan.order(0))
        assert (order.index(slot), plan.start[slot]) == expected
        assert [plan.start[s] for s in order if s != slot] == before
        assert_consistent(plan, [base], 0.0)


@pytest.mark.parametrize("seed", range(10))
def test_tabu_rounds_leave_a_consistent_plan_and_are_deterministic(seed):
    rng = random.Random(seed)
    node_cores = [4, 4, 8]
    bases = [[rng.choice([100.0, rng.uniform(100, 400)]) for _ in range(c)] for c in node_cores]
    plan = Plan(node_cores)
    for k, base in enumerate(bases):
        plan.set_available(k, base, 100.0)
    for i in range(60):
        plan.place(item(i, rng.choice([1, 2, 3, 4]), float(rng.randint(10, 300)), rng.uniform(0, 100)),
                   rng.randrange(6), 100.0)
    twin = copy.deepcopy(plan)
    wait, den = np.linspace(0, 500, 6), np.linspace(100, 1000, 6)
    moves = optimise(plan, wait, den, 100.0, seed_state(seed))
    again = optimise(twin, wait, den, 100.0, seed_state(seed))
    assert moves, "no improving move on a random CONS plan"
    assert [(m[0].id, m[1], m[2], m[3]) for m in moves] == [(m[0].id, m[1], m[2], m[3]) for m in again]
    assert all(m[3] > 0 for m in moves)
    assert_consistent(plan, bases, 100.0)
    assert sorted(plan.planned_slots()) == sorted(twin.planned_slots())
    for k in range(len(node_cores)):
        assert list(plan.node[plan.order(k)]) == [k] * int(plan.length[k])
