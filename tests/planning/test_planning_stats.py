"""The pass's statistics of where its time goes (``Planner.stats_walk``'s ``cycles_*``), read by
benchmarks/saturated_day.py: each part counted where its work happened, and the parts within the
whole pass."""

from oracle_planner import scenarios
from oracle_planner.golden import policy_class

PARTS = ("compact", "reload", "walk", "drop", "place")


def _stats(variant, bf):
    box = {}

    class Recording(policy_class(variant, bf)):
        def __init__(self, opts):
            super().__init__(opts)
            box["s"] = self

    scenarios.decisions(Recording, {}, scenarios.platform(), scenarios.workload(seed=11, hours=16.0))
    planner = box["s"].planner
    return planner.stats_walk(), planner.stats_jobs_walked, planner.stats_jobs_dropped


def test_each_part_of_the_pass_counts_its_cycles_within_the_whole_pass():
    st, walked, dropped = _stats("fcfs", True)
    cycles = {part: st[f"cycles_{part}"] for part in PARTS}
    assert walked > 0 and dropped > 0 and st["compactions"] > 0    # a saturated input: every part did work
    assert all(c > 0 for c in cycles.values()), cycles
    # the parts are timed one after the other inside the pass: their sum is within it, and the pass's
    # own bookkeeping (the queue's cores summed, the busy count, the changed nodes cleared) is small
    assert 0.8 * st["cycles_pass"] < sum(cycles.values()) <= st["cycles_pass"], (cycles, st["cycles_pass"])
    # the choices are inside the placements, the listing inside the choices; with backfilling the nodes
    # whose gaps fit a job are listed
    assert 0 < st["cycles_list"] < st["cycles_choose"] < cycles["place"] and st["listed"] > 0
    # reserving the chosen cores is in the placements too, beside the choices
    assert 0 < st["cycles_reserve"] and st["cycles_choose"] + st["cycles_reserve"] < cycles["place"]


def test_a_pass_without_backfilling_never_compacts():
    st, _, _ = _stats("fcfs", False)
    assert st["compactions"] == 0 and st["cycles_compact"] == 0 and st["cycles_place"] > 0
