"""Bad input for the I/O-aware schedulers: one line naming the job, option or platform part at fault."""

import pytest

from batloc.platforms.generator import PlatformSpec, write
from policy_run import simulate

pytestmark = pytest.mark.needs_engine

GB = 1e9


def workload(fields=({"io_bw": 0.5 * GB, "io_period": 10}, {"io_period": 10})):
    jobs = [{"id": i + 1, "subtime": 1, "res": 1, "walltime": 10, "profile": "d10", "user": "u", **f}
            for i, f in enumerate(fields)]
    return {"nb_res": 2, "jobs": jobs, "profiles": {"d10": {"type": "delay", "delay": 10.0}}}


def platform(tmp_path, backbone=GB):
    path = tmp_path / "p.xml"
    write(PlatformSpec(memory_mix=((1, 128e9),), cores=2, node_bandwidth=GB, backbone_bandwidth=backbone,
                       io_routes=True), path)
    return path


def _error_lines(out):
    return [line for line in out.sched_out.splitlines() if "error" in line]


@pytest.mark.parametrize("policy", ["io_list", "io_pack_max"])
def test_a_job_without_io_bw_stops_the_run_naming_the_job(tmp_path, policy):
    out = simulate(tmp_path, policy, platform(tmp_path), workload(), check=False)
    assert _error_lines(out) == [f"batloc {policy}: error: job w0!2 has no io_bw field; I/O-aware policies need "
                                 "the declared fields io_bw (bytes/s) and io_period (s) of `batloc workload synth "
                                 "--io` (docs/contract.md §7)"]
    assert "Traceback" not in out.sched_out
    # it decides nothing more: every job rejected, the simulation ends (real Batsim would wait for ever
    # for a scheduler that left), then the scheduler exits with status 2
    assert out.engine.returncode == 0 and out.sched_status == 2
    assert [r["final_state"] for r in out.rows.values()] == ["REJECTED", "REJECTED"]


def test_pack_char_needs_io_period(tmp_path):
    out = simulate(tmp_path, "io_pack_char", platform(tmp_path), workload(({"io_bw": 1.0},)), check=False)
    assert any("job w0!1 has no io_period field" in line for line in _error_lines(out))


def test_a_platform_without_backbone_is_refused(tmp_path):
    out = simulate(tmp_path, "io_list", platform(tmp_path, backbone=None), workload(), check=False)
    (line,) = _error_lines(out)
    assert line.startswith("batloc io_list: error: the platform has no backbone link: storage 'lustre' "
                           "lacks the property 'bandwidth'")
    assert "Traceback" not in out.sched_out
    assert out.engine.returncode == 0 and out.sched_status == 2
    assert [r["final_state"] for r in out.rows.values()] == ["REJECTED", "REJECTED"]


def test_a_job_asking_more_bandwidth_than_the_file_system_is_rejected(tmp_path):
    fields = ({"io_bw": 0.5 * GB}, {"io_bw": 2 * GB})
    out = simulate(tmp_path, "io_list", platform(tmp_path), workload(fields))
    assert "batloc io_list: job w0!2 declares io_bw 2e+09 B/s, more than the file system's 1e+09: rejected" \
        in out.sched_out
    # job 1 runs: its 10 s delay reaches its 10 s walltime, which Batsim 4.2.1 (and the engine) ends as such
    assert out.rows["2"]["final_state"] == "REJECTED" and out.rows["1"]["final_state"] == "COMPLETED_WALLTIME_REACHED"


def test_unknown_or_bad_options_are_one_line_errors(tmp_path):
    out = simulate(tmp_path, "io_pack", platform(tmp_path), workload(), {"order": "min"}, check=False,
                   engine_args=["--ready-timeout", "2"])
    assert "batloc scheduler: io_pack: option 'order' must be one of random, max, char, got 'min'" \
        in out.sched_out
    assert "Traceback" not in out.sched_out
