"""The two-resource profile of I/O-aware list scheduling, and packs' first fit, by hand."""

import math
from types import SimpleNamespace

import pytest

from batloc.schedulers.ioaware.packs import first_fit
from batloc.schedulers.ioaware.profile import Profile


def profile():
    # P = 4, B = 1: a job of 2 cores and 0.6 until 100, another of 1 core and 0.3 until 40
    p = Profile(0.0, 4, 1.0, 1e-9)
    p.reserve(0.0, 100.0, 2, 0.6)
    p.reserve(0.0, 40.0, 1, 0.3)
    return p


def test_earliest_start_needs_cores_and_bandwidth_for_the_whole_window():
    p = profile()
    assert p.earliest(1, 0.1, 50, 0.0) == 0.0      # 1 core, 0.1 free from the start
    assert p.earliest(2, 0.1, 30, 0.0) == 40.0     # two cores only once the short job ends
    assert p.earliest(1, 0.6, 10, 0.0) == 100.0    # 0.4 left until 100
    assert p.earliest(1, 0.4, 10, 0.0) == 40.0     # exactly B: allowed (strict constraint, ≤ B)
    assert p.earliest(4, 1.0, 1, 0.0) == 100.0
    assert p.earliest(1, 0.1, 50, 70.0) == 70.0    # not before 70


def test_a_window_that_would_overlap_a_later_reservation_waits_for_it():
    p = profile()
    p.reserve(60.0, 90.0, 1, 0.0)                   # from 60 only one core is left
    assert p.earliest(2, 0.0, 30, 0.0) == 90.0      # [40, 70) would cross 60
    assert p.earliest(2, 0.0, 20, 0.0) == 40.0      # [40, 60) fits before it


def test_reservations_to_infinity_and_impossible_jobs():
    p = Profile(5.0, 2, 1.0, 1e-9)
    p.reserve(5.0, math.inf, 1, 0.5)
    assert p.earliest(2, 0.0, 1, 5.0) == math.inf
    assert p.earliest(1, 0.5, 1, 5.0) == 5.0


def test_first_fit_packs_under_the_average_constraint():
    jobs = [SimpleNamespace(cores=q, walltime=d, bw=b) for q, d, b in
            [(2, 100, 0.6), (1, 50, 0.6), (1, 40, 0.3), (2, 30, 0.1)]]
    packs = first_fit(jobs, 4, lambda avg: avg <= 1.0 + 1e-9)
    assert [[jobs.index(j) for j in p.items] for p in packs] == [[0, 1], [2, 3]]
    assert packs[0].load / packs[0].duration == pytest.approx(0.9)
    assert packs[1].load / packs[1].duration == pytest.approx(0.375)
    assert packs[0].average_with(jobs[2]) == pytest.approx(1.02)
