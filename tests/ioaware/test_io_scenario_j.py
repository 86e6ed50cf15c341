"""Scenario J (seed-schedulers.md §2) through the real engine: 2 nodes x 2 cores (P = 4),
B = 1 GB/s, four jobs submitted at t = 1 that run exactly their walltime.

J1 Q2 d100 β0.6 χ10; J2 Q1 d50 β0.6 χ10; J3 Q1 d40 β0.3 χ20; J4 Q2 d30 β0.1 χ5.
"""

import pytest

from batloc.platforms.generator import PlatformSpec, write
from policy_run import simulate

pytestmark = pytest.mark.needs_engine

GB = 1e9
JOBS = [(1, 2, 100, 0.6, 10), (2, 1, 50, 0.6, 10), (3, 1, 40, 0.3, 20), (4, 2, 30, 0.1, 5)]


def workload(jobs=JOBS, drop=None):
    out = []
    for jid, q, d, beta, chi in jobs:
        job = {"id": jid, "subtime": 1, "res": q, "walltime": d, "profile": f"d{d}", "user": "u",
               "io_bw": beta * GB, "io_period": chi}
        if drop:
            job.pop(drop, None)
        out.append(job)
    return {"nb_res": 4, "jobs": out,
            "profiles": {f"d{d}": {"type": "delay", "delay": float(d)} for _, _, d, _, _ in jobs}}


@pytest.fixture
def platform(tmp_path):
    path = tmp_path / "j.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=2, node_bandwidth=GB, backbone_bandwidth=GB,
                       io_routes=True, pfs_access="exclusive"), path)
    return path


def test_list_scheduling_reserves_bandwidth(tmp_path, platform):
    # J1, J3 start at 1 (cores 3/4, bandwidth 0.9); J4 needs 2 cores: reserved at 41 when J3
    # ends; J2 fits in cores at 1 but only 0.4 of B is left until J1 ends: 101. Makespan 151.
    out = simulate(tmp_path, "io_list", platform, workload())
    assert out.starts() == {"1": 1.0, "2": 101.0, "3": 1.0, "4": 41.0}
    assert out.makespan() == 151.0


def test_list_scheduling_without_backfilling_keeps_submission_order(tmp_path, platform):
    # J2 at 101 (bandwidth); J3 and J4 may not start before it: at 101 the three fit
    # together (4 cores, 0.6 + 0.3 + 0.1 = B exactly).
    out = simulate(tmp_path, "io_list", platform, workload(), {"backfill": False})
    assert out.starts() == {"1": 1.0, "2": 101.0, "3": 101.0, "4": 101.0}


def test_plain_fcfs_backfilling_ignores_bandwidth(tmp_path, platform):
    # The contrast of the note: bandwidth-unaware FCFS-BF starts J2 at 1.
    out = simulate(tmp_path, "fcfs_bf", platform, workload())
    assert out.starts()["2"] == 1.0


def test_pack_max(tmp_path, platform):
    # Order J1, J2, J3, J4; packs {J1, J2} (average 0.9), {J3, J4} (0.375): J3 in pack 1 gives 1.02.
    # At 51 (J2 ends) J3 still gives 1.02, J4 fits (0.93, ends 81 <= 101); J3 at 101. Makespan 141.
    out = simulate(tmp_path, "io_pack_max", platform, workload())
    assert out.starts() == {"1": 1.0, "2": 1.0, "3": 101.0, "4": 51.0}
    assert out.makespan() == 141.0


def test_pack_char(tmp_path, platform):
    # Order J3, J1, J2, J4; packs {J3, J1} (0.72), {J2, J4}; at 41 J2 would give 1.02,
    # J4 joins (0.75, ends 71); J2 starts at the boundary 101.
    out = simulate(tmp_path, "io_pack_char", platform, workload())
    assert out.starts() == {"1": 1.0, "2": 101.0, "3": 1.0, "4": 41.0}
    assert out.makespan() == 151.0


def test_pack_with_the_order_option_is_the_same_policy(tmp_path, platform):
    out = simulate(tmp_path, "io_pack", platform, workload(), {"order": "char"})
    assert out.starts() == {"1": 1.0, "2": 101.0, "3": 1.0, "4": 41.0}
