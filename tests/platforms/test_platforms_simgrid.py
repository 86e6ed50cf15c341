"""SimGrid loads every platform the generator writes, and loads take size / bandwidth.

Each platform is loaded in its own subprocess: SimGrid allows one Engine per
process. Skipped when SimGrid's Python bindings are not installed.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from batloc.platforms import rackham
from batloc.platforms.generator import PlatformSpec, write

pytestmark = pytest.mark.needs_simgrid

# SimGrid models TCP acknowledgements as 5 % cross-traffic on SHARED links unless
# network/crosstraffic is 0, which would make every load on a SHARED link 5 % slower than
# size / bandwidth; the paper's model needs it off (measured: 10.5 s instead of 10 s).
# Loads `path`, then moves `size` bytes lustre → n000_mem, `parallel` times at once, and prints
# the host count and the completion time of the transfers.
PROBE = textwrap.dedent("""
    import json, sys
    from batloc.engine.simgrid_loader import import_simgrid
    sg = import_simgrid()
    path, size, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    e = sg.Engine(["probe", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                   "--log=root.thres:critical"])
    e.load_platform(path)
    hosts = e.all_hosts
    names = [h.name for h in hosts]
    done = []
    def sender():
        src, dst = sg.Host.by_name("lustre"), sg.Host.by_name("n000_mem")
        comms = [sg.Comm.sendto_async(src, dst, size) for _ in range(parallel)]
        for c in comms:
            c.wait()
        done.append(sg.Engine.clock)
    sg.Actor.create("sender", sg.Host.by_name("master"), sender)
    e.run()
    print(json.dumps({"hosts": len(names), "time": done[0]}))
""")


def _probe(path, size=10**9, parallel=1):
    result = subprocess.run([sys.executable, "-c", PROBE, str(path), str(size), str(parallel)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("sharing, parallel, expected", [
    ("FATPIPE", 2, 10.0),   # each of two loads gets the whole 0.1 GB/s: 1 GB in 10 s
    ("SHARED", 2, 20.0),    # they split it: 20 s
])
def test_small_platform_load_times(tmp_path, sharing, parallel, expected):
    path = tmp_path / "small.xml"
    write(PlatformSpec(memory_mix=((3, 128e9),), cores=4, sharing=sharing), path)
    probe = _probe(path, 10**9, parallel)
    assert probe["hosts"] == 2 + 3 * 4 + 3
    assert probe["time"] == pytest.approx(expected, rel=1e-6)


def test_backbone_limits_concurrent_loads(tmp_path):
    path = tmp_path / "bb.xml"
    write(PlatformSpec(memory_mix=((2, 128e9),), cores=1, backbone_bandwidth=0.05e9, sharing="FATPIPE"), path)
    assert _probe(path, 10**9, 1)["time"] == pytest.approx(20.0, rel=1e-6)


def test_latency_is_added_once_per_link(tmp_path):
    path = tmp_path / "lat.xml"
    write(PlatformSpec(memory_mix=((1, 128e9),), cores=1, latency=1e-3), path)
    assert _probe(path, 10**8, 1)["time"] == pytest.approx(1.0 + 1e-3, rel=1e-6)


@pytest.mark.parametrize("filename", sorted(rackham.variants()))
def test_committed_rackham_files_load(filename):
    probe = _probe(rackham.committed_dir() / filename, 128 * 10**9, 1)
    assert probe["hosts"] == 2 + 486 * 20 + 486
    assert probe["time"] == pytest.approx(1280.0, rel=1e-6)  # 128 GB at 0.1 GB/s
