"""Same inputs and seed, byte-identical outputs, for every new scheduler (through the real engine,
I/O phases under exclusive file-system access)."""

import json

import pytest

from batloc.platforms.generator import PlatformSpec, write
from batloc.workloads.synth_io import IoSpec, generate
from policy_run import simulate

pytestmark = pytest.mark.needs_engine

SUFFIXES = ("_jobs.csv", "_schedule.csv", "_machine_states.csv")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("det")
    platform = d / "p.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=4, node_bandwidth=10e9, backbone_bandwidth=1e9,
                       io_routes=True, pfs_access="exclusive"), platform)
    data = generate(IoSpec("uniform", "no", 0.5, cores=8, bandwidth=1e9, jobs=14, users=3, seed=5))
    for i, job in enumerate(data["jobs"]):   # spread the submissions: online decisions, early ends
        job["subtime"] = 1 + 300 * i
    workload = d / "w.json"
    workload.write_text(json.dumps(data))
    return platform, workload


@pytest.mark.parametrize("policy,options,extra", [
    ("io_list", {}, ()), ("io_pack_random", {"seed": 7}, ()), ("io_pack_max", {}, ()), ("io_pack_char", {}, ()),
    ("cons_tabu", {"seed": 3, "tabu_period": 100}, ("_tabu.csv",))])
def test_same_seed_same_bytes(tmp_path, inputs, policy, options, extra):
    platform, workload = inputs
    first = simulate(tmp_path, policy, platform, workload, options, name="a")
    second = simulate(tmp_path, policy, platform, workload, options, name="b")
    assert len(first.rows) == 14
    for suffix in SUFFIXES + extra:
        a = (tmp_path / f"a{suffix}").read_bytes()
        assert a == (tmp_path / f"b{suffix}").read_bytes(), suffix
    if extra:
        assert len((tmp_path / "a_tabu.csv").read_text().splitlines()) > 1, "no Tabu move to compare"
