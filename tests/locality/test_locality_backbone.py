"""The shared-storage load model (``locality/backbone.py``), on loads computed by hand.

Node links of 1 GB/s, a backbone of 2 GB/s unless said: two loads fit side by side, a third
makes each go at 2/3 GB/s.
"""

import math

import pytest

from batloc.locality.backbone import ActualLoads, load_end, max_min, share

GB = 1e9


def test_share_is_max_min_with_equal_caps_and_a_lower_bound_otherwise():
    assert share(1 * GB, 0, 0.0, 2 * GB) == 1 * GB                 # alone: its link
    assert share(1 * GB, 1, 1 * GB, 2 * GB) == 1 * GB              # two fit
    assert share(1 * GB, 2, 2 * GB, 2 * GB) == pytest.approx(2 / 3 * GB)
    # beside one load capped at 0.5 GB/s, max-min gives 1 GB/s (its cap): B - caps = 1.5 GB/s
    assert share(1 * GB, 1, 0.5 * GB, 2 * GB) == 1 * GB
    assert max_min([1 * GB, 1 * GB, 1 * GB], 2 * GB) == pytest.approx([2 / 3 * GB] * 3)
    assert max_min([0.5 * GB, 2 * GB, 2 * GB], 2 * GB) == pytest.approx([0.5 * GB, 0.75 * GB, 0.75 * GB])
    assert max_min([0.5 * GB, 1 * GB], math.inf) == [0.5 * GB, 1 * GB]


def test_a_load_alone_or_without_backbone_takes_size_over_its_link_exactly():
    assert load_end(3.0, 10 * GB, 1 * GB, [], 2 * GB) == 3.0 + 10 * GB / (1 * GB)
    assert load_end(3.0, 7 * GB, 0.3 * GB, [(0.0, 100.0, 1 * GB)] * 5, math.inf) == 3.0 + 7 * GB / (0.3 * GB)
    # one other load: both fit in 2 GB/s, so still its link's time, to the bit
    assert load_end(1.0, 7 * GB, 0.3 * GB, [(0.0, 50.0, 1 * GB)], 2 * GB) == 1.0 + 7 * GB / (0.3 * GB)


def test_a_load_beside_others_integrates_its_share():
    # 10 GB from t=0 beside two loads over [0, 5): 2/3 GB/s for 5 s (10/3 GB), then 1 GB/s: ends at
    # 5 + (10 - 10/3) = 11.667
    assert load_end(0.0, 10 * GB, 1 * GB, [(0.0, 5.0, GB), (0.0, 5.0, GB)], 2 * GB) == pytest.approx(35 / 3)
    # a load beginning later joins at its start: [0,2) alone 1 GB/s (2 GB), [2,4) with two (2/3: 4/3 GB),
    # then alone again: 10 - 10/3 = 6.667 GB more, ends 10.667
    assert load_end(0.0, 10 * GB, 1 * GB, [(2.0, 4.0, GB), (2.0, 4.0, GB)], 2 * GB) == pytest.approx(32 / 3)
    # intervals over before t, or empty, do not count
    assert load_end(5.0, 1 * GB, 1 * GB, [(0.0, 5.0, GB), (6.0, 6.0, GB), (0.0, 1.0, GB)] * 3, 2 * GB) == 6.0


def test_loads_in_flight_are_replayed_at_max_min_and_projected():
    loads = ActualLoads(2 * GB)
    loads.begin("a", 0.0, 10 * GB, 1 * GB)
    loads.begin("b", 0.0, 10 * GB, 1 * GB)
    loads.begin("c", 0.0, 5 * GB, 1 * GB)
    # three at 2/3 GB/s: c is done at 7.5, then a and b at 1 GB/s each: 5 GB left, done at 12.5
    assert loads.projection(0.0) == pytest.approx({"c": 7.5, "a": 12.5, "b": 12.5})
    # the engine ends c early (at 3): a and b have 8 GB left each, at 1 GB/s from then on
    loads.end("c", 3.0)
    assert loads.projection(3.0) == pytest.approx({"a": 11.0, "b": 11.0})
    # a load the model finishes before the engine does ends "now" in the projection
    loads.begin("d", 3.0, 1 * GB, 1 * GB)
    assert loads.projection(20.0) == {"a": 20.0, "b": 20.0, "d": 20.0}
