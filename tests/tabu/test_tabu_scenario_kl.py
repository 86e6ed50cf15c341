"""Scenario Kl (seed-schedulers.md §3): n1, n2 of 1 core; t=1 J1-J4 (user u1, walltime 100);
t=2 J5 (u2, walltime 10); every job runs exactly its walltime.

CONS: J1 -> n1, J2 -> n2 start at 1; J3 n1@101, J4 n2@101; J5 n1@201 (tie with n2).
Tabu move: J3 back onto n1 after J5: J5@101, J3@111. W 133 -> 103, R 203 -> 173,
S 8.3 -> 5.0, F 190.18 -> 45.945 (NUWT u1 0.5 -> 0.525, u2 19.9 -> 9.9):
D = 10 x 0.7584 + 0.148 + 0.2256 + 0.3976 = 8.355 (0.771 with w_F = 0).
"""

import csv

import pytest

from batloc.platforms.generator import PlatformSpec, write
from batloc.schedulers.cons_tabu import Cons_tabu
from batloc.testing.dry_run import DryRun, make_resources
from policy_run import simulate

JOBS = ([{"id": i, "subtime": 1, "res": 1, "walltime": 100, "profile": "d100", "user": "u1"} for i in range(1, 5)]
        + [{"id": 5, "subtime": 2, "res": 1, "walltime": 10, "profile": "d10", "user": "u2"}])
WORKLOAD = {"nb_res": 2, "jobs": JOBS, "profiles": {"d100": {"type": "delay", "delay": 100.0},
                                                    "d10": {"type": "delay", "delay": 10.0}}}
CONS = {"w0!1": 1.0, "w0!2": 1.0, "w0!3": 101.0, "w0!4": 101.0, "w0!5": 201.0}
MOVED = {"w0!1": 1.0, "w0!2": 1.0, "w0!3": 111.0, "w0!4": 101.0, "w0!5": 101.0}
# A round at t=2 (a period of 2 s), right after J5's placement; seed 0 tries n1 first for J3.
TABU = {"tabu_period": 2, "seed": 0}


def dry(options):
    compute, storage = make_resources({"n1": 1, "n2": 1})
    sched = Cons_tabu(options)
    results = DryRun(sched, compute, storage, WORKLOAD).run()
    return sched, {k: v["start"] for k, v in results.items()}, {k: v["alloc"] for k, v in results.items()}


def test_cons_plan():
    sched, starts, alloc = dry({"tabu": False})
    assert starts == CONS
    assert alloc["w0!3"] == alloc["w0!1"] == alloc["w0!5"] and alloc["w0!4"] == alloc["w0!2"]
    assert sched.moves == []


def test_the_accepted_tabu_move():
    sched, starts, alloc = dry(TABU)
    assert starts == MOVED
    [(time, job, src, dst, gain)] = sched.moves
    assert (time, job, src, dst) == (2, "w0!3", "n1", "n1")
    f_old = (1 + 10.2 - 0.5) ** 2 + (1 + 10.2 - 19.9) ** 2            # 190.18
    f_new = (1 + 5.2125 - 0.525) ** 2 + (1 + 5.2125 - 9.9) ** 2       # 45.945
    assert gain == pytest.approx(10 * (f_old - f_new) / f_old + 30 / 203 + 30 / 133 + 3.3 / 8.3, rel=1e-12)
    assert round(gain, 3) == 8.355
    assert alloc["w0!3"] == alloc["w0!5"]


def test_without_fairness_the_move_is_still_accepted():
    sched, starts, _ = dry({**TABU, "fairness_weight": 0})
    assert starts == MOVED
    assert round(sched.moves[0][4], 3) == 0.771


def test_another_seed_may_take_the_other_improving_move_first():
    # Seed 1 tries n2 first: J3 after J4 at 201 also improves (D = 8.055: W and R unchanged,
    # S 8.3 -> 5.3, F 190.18 -> 43.86).
    sched, starts, _ = dry({"tabu_period": 2, "seed": 1})
    assert [(m[1], m[2], m[3], round(m[4], 3)) for m in sched.moves][0] == ("w0!3", "n1", "n2", 8.055)


@pytest.mark.needs_engine
def test_scenario_kl_through_the_engine(tmp_path):
    platform = tmp_path / "kl.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=1), platform)
    cons = simulate(tmp_path, "cons_tabu", platform, WORKLOAD, {"tabu": False}, name="cons")
    assert cons.starts() == {k.split("!")[1]: v for k, v in CONS.items()}
    assert cons.rows["5"]["allocated_resources"] == cons.rows["1"]["allocated_resources"]
    moved = simulate(tmp_path, "cons_tabu", platform, WORKLOAD, TABU, name="tabu")
    assert moved.starts() == {k.split("!")[1]: v for k, v in MOVED.items()}
    with open(tmp_path / "tabu_tabu.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows == [{"time": "2.000000", "job_id": "w0!3", "from_node": "n000", "to_node": "n000",
                     "gain": "8.355052"}]
