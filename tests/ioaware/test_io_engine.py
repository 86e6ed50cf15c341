"""I/O phases through the real engine: a shared Lustre backbone slows concurrent I/O
down as SimGrid's max-min sharing says, and `pfs_access=exclusive` serialises it
(one job's I/O at a time, first come first served). Hand-computed on 2 nodes:
node links and backbone at 1 GB/s, no latency."""

import pytest

from batloc.platforms.generator import PlatformSpec, render
from engine_harness import run, write

pytest.importorskip("zmq")

GB = 1e9


def platform(tmp_path, backbone=GB, access="shared", cores=1):
    spec = PlatformSpec(memory_mix=((2, 128e9),), cores=cores, node_bandwidth=GB, backbone_bandwidth=backbone,
                        io_routes=True, pfs_access=access)
    return write(tmp_path, "p.xml", render(spec))


def io_profiles(compute, read_gb, repeat=1):
    """`repeat` periods of [compute seconds, then read_gb GB per host from the file system]."""
    return {"compute": {"type": "delay", "delay": compute},
            "io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": read_gb * GB, "storage": "pfs"},
            "job": {"type": "composed", "seq": ["compute", "io"], "repeat": repeat}}


class Placer:
    """Start every job at its submission on the cores named in `hosts` (job id -> host names)."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.ids = {}

    def __call__(self, msg):
        out = []
        for e in msg["events"]:
            d = e["data"]
            if e["type"] == "SIMULATION_BEGINS":
                self.ids = {r["name"]: r["id"] for r in d["compute_resources"] + d["storage_resources"]}
            elif e["type"] == "JOB_SUBMITTED":
                alloc = " ".join(str(self.ids[h]) for h in self.hosts[d["job_id"]])
                out.append({"type": "EXECUTE_JOB", "data": {"job_id": d["job_id"], "alloc": alloc,
                                                             "storage_mapping": {"pfs": self.ids["lustre"]}}})
        return out


def simulate(tmp_path, plat, jobs, profiles, hosts):
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": profiles})
    res = run(tmp_path, plat, [wl], Placer(hosts))
    assert res.returncode == 0, res.stderr
    return {r["job_id"]: (float(r["starting_time"]), float(r["finish_time"])) for r in res.jobs_rows()}


def two_jobs(res=1):
    return [{"id": i, "subtime": 1, "res": res, "profile": "job", "walltime": -1} for i in (1, 2)]


def test_concurrent_io_shares_the_backbone(tmp_path):
    # Both compute [1, 6), then read 10 GB each through their own node link (1 GB/s) and
    # the shared backbone (1 GB/s): 0.5 GB/s each, [6, 26).
    times = simulate(tmp_path, platform(tmp_path), two_jobs(), io_profiles(5, 10),
                     {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"]})
    assert times == {"1": (1.0, 26.0), "2": (1.0, 26.0)}


def test_without_a_backbone_each_node_link_carries_its_own_io(tmp_path):
    times = simulate(tmp_path, platform(tmp_path, backbone=None), two_jobs(), io_profiles(5, 10),
                     {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"]})
    assert times == {"1": (1.0, 16.0), "2": (1.0, 16.0)}


def test_a_multi_core_job_shares_the_backbone_between_its_own_hosts(tmp_path):
    # One job on both cores of n000, 5 GB per host: two flows share 1 GB/s -> 10 s.
    jobs = [{"id": 1, "subtime": 1, "res": 2, "profile": "job", "walltime": -1}]
    times = simulate(tmp_path, platform(tmp_path, cores=2), jobs, io_profiles(5, 5),
                     {"w0!1": ["n000_c00", "n000_c01"]})
    assert times == {"1": (1.0, 16.0)}


def test_exclusive_access_serialises_io_first_come_first_served(tmp_path):
    # Two periods of [10 s compute, 5 GB read]. J1 and J2 ask for I/O together at 11:
    # J1 (first in request order) reads [11,16), J2 waits and reads [16,21).
    # Second period: J1 computes [16,26), reads [26,31); J2 computes [21,31), reads [31,36).
    # Shared access would give both [11,21), [21,31), [31,41): finish 41 each.
    plat = platform(tmp_path, access="exclusive")
    times = simulate(tmp_path, plat, two_jobs(), io_profiles(10, 5, repeat=2),
                     {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"]})
    assert times == {"1": (1.0, 31.0), "2": (1.0, 36.0)}
    shared = simulate(tmp_path, platform(tmp_path), two_jobs(), io_profiles(10, 5, repeat=2),
                      {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"]})
    assert shared == {"1": (1.0, 41.0), "2": (1.0, 41.0)}


def test_a_job_killed_while_waiting_for_the_file_system_leaves_the_queue(tmp_path):
    # J1 reads 20 GB [6, 26). J2 (walltime 15) asks at 6, waits, and is killed at 16;
    # J3 asks at 11 and reads after J1: [26, 31) (5 GB), finishing at 31.
    profiles = {**io_profiles(5, 20), "io5": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 5 * GB},
                "job3": {"type": "composed", "seq": ["wait10", "io5"]}, "wait10": {"type": "delay", "delay": 10}}
    jobs = [{"id": 1, "subtime": 1, "res": 1, "profile": "job", "walltime": -1},
            {"id": 2, "subtime": 1, "res": 1, "profile": "job", "walltime": 15},
            {"id": 3, "subtime": 1, "res": 1, "profile": "job3", "walltime": -1}]
    plat = platform(tmp_path, access="exclusive", cores=2)
    times = simulate(tmp_path, plat, jobs, profiles,
                     {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"], "w0!3": ["n000_c01"]})
    assert times == {"1": (1.0, 26.0), "2": (1.0, 16.0), "3": (1.0, 31.0)}


def test_a_job_granted_the_file_system_after_waiting_has_the_wait_counted_in_its_walltime(tmp_path):
    # As above with J2's walltime 30: it waits [6, 26), is granted at 26 and reads 20 GB, which would end at
    # 46, but its walltime ends at 1 + 30 = 31, the wait counted (not 26 + 25 left after its compute, 51).
    # Killed there, it frees the file system: J3 (queued at 11) reads [31, 36).
    profiles = {**io_profiles(5, 20), "io5": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 5 * GB},
                "job3": {"type": "composed", "seq": ["wait10", "io5"]}, "wait10": {"type": "delay", "delay": 10}}
    jobs = [{"id": 1, "subtime": 1, "res": 1, "profile": "job", "walltime": -1},
            {"id": 2, "subtime": 1, "res": 1, "profile": "job", "walltime": 30},
            {"id": 3, "subtime": 1, "res": 1, "profile": "job3", "walltime": -1}]
    plat = platform(tmp_path, access="exclusive", cores=2)
    times = simulate(tmp_path, plat, jobs, profiles,
                     {"w0!1": ["n000_c00"], "w0!2": ["n001_c00"], "w0!3": ["n000_c01"]})
    assert times == {"1": (1.0, 26.0), "2": (1.0, 31.0), "3": (1.0, 36.0)}


def test_an_unknown_access_mode_is_an_error_naming_the_platform(tmp_path):
    plat = write(tmp_path, "p.xml", render(PlatformSpec(memory_mix=((2, 128e9),), cores=1, io_routes=True))
                 .replace('<prop id="role" value="storage"/></host>',
                          '<prop id="role" value="storage"/><prop id="pfs_access" value="fifo"/></host>', 1))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": two_jobs(), "profiles": io_profiles(5, 10)})
    res = run(tmp_path, plat, [wl], Placer({}))
    assert res.returncode != 0
    assert "p.xml: host 'lustre' has pfs_access='fifo' (expected one of shared, exclusive)" in res.stderr
    assert "Traceback" not in res.stderr
