"""The rule for predictions (contract §6, docs/scheduler-semantics.md): a job's planned start, whenever
the standing plan holds one for it, is the one a full re-plan of the whole queue gives at that instant.

After every pass of the standing plan (the dry run, saturated inputs, the ten variants), a second
planner on the same state and queue plans every queued job from scratch (``standing`` off, the whole
queue: the simple planner); each job the standing plan holds a reservation for must have the same node,
start, file time, score and cores there. The jobs the standing plan holds form a prefix of the queue,
and in list scheduling a prefix's placements depend on nothing after it, so the full pass is the oracle
for each of them, wherever that pass of the standing plan stopped."""

import numpy as np
import pytest

from oracle_planner import scenarios
from oracle_planner.golden import policy_class
from batloc.schedulers.planning.planner import Planner, plan_pass
from batloc.schedulers.planning.scratch import P_NODE, UNPLANNED
from batloc.schedulers.planning.flat_state import AVAIL, START

VARIANTS = [(v, bf) for v in ("fcfs", "eft", "lea", "leo", "lem") for bf in (False, True)]
NO_DIRTY = np.zeros(0, dtype=np.int64)


class FullPass(Planner):
    """The simple planner: every queued job placed from the actual state, at every pass."""

    def __init__(self, state, policy_name):
        super().__init__(state, policy_name)
        self.standing = False
        self.whole_queue = True

    def rows(self, now, queue):
        S, f = self._prepare(queue)
        self._configure(S, f, now)
        plan_pass(*f.arrays(), *S, NO_DIRTY, *queue.arrays(), len(queue), self.saturation, False)
        return S


def checking(cls, mismatches, counts):
    class Checked(cls):
        def make_planner(self):
            planner = super().make_planner()
            full = FullPass(self.state, self.policy_name)
            plan = planner.plan

            def checked_plan(now, queue):
                decisions = plan(now, queue)
                S, R = planner._scratch, full.rows(now, queue)
                for i in range(len(queue)):
                    slot = queue.slots[i]
                    if S.plan[slot, P_NODE] == UNPLANNED:
                        break
                    counts[0] += 1
                    c = queue.cores[i]
                    mine = (S.plan[slot, P_NODE], S.plan[slot, START], S.plan[slot, AVAIL],
                            tuple(S.pos_plan[slot, :c]))
                    ref = (R.plan[slot, P_NODE], R.plan[slot, START], R.plan[slot, AVAIL],
                           tuple(R.pos_plan[slot, :c]))
                    if mine != ref and len(mismatches) < 5:
                        mismatches.append((now, queue.jobs[i].id, mine, ref))
                return decisions

            planner.plan = checked_plan
            return planner
    return Checked


@pytest.mark.parametrize("variant,bf", VARIANTS, ids=[v + ("-bf" if bf else "") for v, bf in VARIANTS])
def test_every_held_prediction_is_the_full_re_plan_s(variant, bf):
    mismatches, counts = [], [0]
    wl = scenarios.workload(seed=21, hours=8.0)
    scenarios.decisions(checking(policy_class(variant, bf), mismatches, counts), {}, scenarios.platform(), wl)
    assert not mismatches, mismatches
    assert counts[0] > 1000        # predictions held across many passes, not a trivial input
