"""`batloc workload synth --io`: α as asked, declared fields from the truths, truths kept
out of the jobs, same seed same bytes, and the bad inputs as one-line errors."""

import json

import numpy as np
import pytest

from batloc.platforms.generator import PlatformSpec, write
from batloc.workloads.cli import main
from batloc.workloads.synth_io import IoSpec, generate, io_load

GB = 1e9


@pytest.fixture
def platform(tmp_path):
    path = tmp_path / "io.xml"
    write(PlatformSpec(memory_mix=((16, 128e9),), cores=16, node_bandwidth=10 * GB, backbone_bandwidth=GB,
                       io_routes=True, pfs_access="exclusive"), path)
    return path


def synth(tmp_path, platform, *extra, name="w.json"):
    out = tmp_path / name
    code = main(["synth", "-o", str(out), "--platform", str(platform), "--jobs", "80", *extra])
    return code, out


@pytest.mark.parametrize("family,mix,alpha", [("uniform", "bn", 0.4), ("uniform", "no", 0.2), ("mira", "bn", 0.5),
                                              ("mira", "no", 0.7)])
def test_alpha_is_reached_and_fields_follow_the_truths(tmp_path, platform, family, mix, alpha):
    code, out = synth(tmp_path, platform, "--io", family, "--io-mix", mix, "--alpha", str(alpha))
    assert code == 0
    data = json.loads(out.read_text())
    io = data["batloc"]["io"]
    assert io["alpha"] == pytest.approx(alpha, abs=0.01) and io["bandwidth"] == GB and io["cores"] == 256
    assert data["nb_res"] == 256 and len(data["jobs"]) == 80
    x_load, rows = [], []
    for job in data["jobs"]:
        n, w, v, t = io["jobs"][str(job["id"])]
        assert set(job) == {"id", "subtime", "res", "walltime", "profile", "user", "evaluated", "io_bw", "io_period"}
        assert job["subtime"] == 1 and 1 <= job["res"] <= 256 and 10 <= n <= 100
        assert t == pytest.approx(w + v / GB)
        assert job["io_bw"] == pytest.approx(v / t) and job["io_period"] == pytest.approx(t / n)
        assert job["walltime"] == pytest.approx(2 * t)
        composed = data["profiles"][job["profile"]]
        compute, io_phase = (data["profiles"][p] for p in composed["seq"])
        assert composed["type"] == "composed" and composed["repeat"] == n
        assert compute["delay"] * n == pytest.approx(w)
        assert io_phase["type"] == "parallel_homogeneous_pfs"
        assert io_phase["bytes_to_read"] * job["res"] * n == pytest.approx(v)
        rows.append((v / GB, job["res"], t))
    # Eq. 2 from the truths
    total_io = sum(r[0] for r in rows)
    area = sum(q * t / 256 for _, q, t in rows)
    assert total_io / area == pytest.approx(io["alpha"])


def test_the_same_seed_gives_the_same_bytes(tmp_path, platform):
    a = synth(tmp_path, platform, "--io", "mira", "--alpha", "0.4", "--seed", "3", name="a.json")[1]
    b = synth(tmp_path, platform, "--io", "mira", "--alpha", "0.4", "--seed", "3", name="b.json")[1]
    c = synth(tmp_path, platform, "--io", "mira", "--alpha", "0.4", "--seed", "4", name="c.json")[1]
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_an_alpha_out_of_reach_names_the_option_and_the_range(tmp_path, platform, capsys):
    code, _ = synth(tmp_path, platform, "--io", "uniform", "--io-mix", "bn", "--alpha", "0.8")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("batloc workload: error: --alpha 0.8 cannot be reached by the uniform-bn family "
                          "with 80 jobs on 256 cores (seed 0): reachable α 0.")
    assert "\n" not in err


def test_a_platform_without_backbone_names_the_file(tmp_path, capsys):
    path = tmp_path / "plain.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=2, io_routes=True), path)
    code, _ = synth(tmp_path, path, "--io", "uniform")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"batloc workload: error: {path}: the platform has no backbone link for I/O phases")


def test_io_load_of_the_paper():
    # one job alone using the whole machine with X = 1: I/O time = compute time -> α = 1/2
    assert io_load(np.array([1.0]), np.array([100.0]), np.array([4]), 4) == pytest.approx(0.5)


def test_generate_refuses_a_bad_alpha():
    from batloc.workloads.errors import WorkloadError
    with pytest.raises(WorkloadError, match=r"--alpha must be in \(0, 1\)"):
        generate(IoSpec("uniform", "no", 1.5, cores=64, bandwidth=GB))
