"""Old or odd platforms are refused in one line before SimGrid can crash the engine (issue 37): batloc's flat
Dijkstra layout from before 2026-11 (no route from the hosts to the master: SimGrid segfaulted), the same in
a Floyd zone (a Python error at the first job end), a model SimGrid aborts on (Batsim's graphene.xml)."""

import subprocess

import pytest

from engine_harness import ENGINE, write

pytestmark = pytest.mark.needs_simgrid

HOSTS = "".join(f'<host id="n000_c0{c}" speed="1Gf" core="1"><prop id="node" value="n000"/></host>' for c in (0, 1))


def flat(routing, to_master=False):
    """batloc's layout before 2026-11, cut down: one zone, a route lustre -> node memory, none to the master."""
    extra = "".join(f'<route src="{h}" dst="master"><link_ctn id="m"/></route>'
                    for h in ("lustre", "n000_c00", "n000_c01", "n000_mem")) if to_master else ""
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="cluster" routing="{routing}">
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <host id="lustre" speed="1Gf"><prop id="role" value="storage"/></host>
    {HOSTS}
    <host id="n000_mem" speed="1Gf"><prop id="role" value="storage"/><prop id="node" value="n000"/><prop id="memory_bytes" value="1e9"/><prop id="bandwidth" value="1e8"/></host>
    <link id="n000_link" bandwidth="100MBps" latency="0s"/>
    <link id="m" bandwidth="1TBps" latency="0s"/>
    <route src="lustre" dst="n000_mem"><link_ctn id="n000_link"/></route>{extra}
  </zone>
</platform>
"""


COMPOUND = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<config id="General"><prop id="host/model" value="compound"/></config>
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="h0" speed="1Gf"/>
    <link id="l" bandwidth="1GBps" latency="0s"/>
    <route src="master_host" dst="h0"><link_ctn id="l"/></route>
  </zone>
</platform>
"""


def engine(tmp_path, text):
    plat = write(tmp_path, "p.xml", text)
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})
    return subprocess.run(ENGINE + ["-p", plat, "-w", wl, "-e", str(tmp_path / "o"), "-s", "tcp://127.0.0.1:9",
                                    "--ready-timeout", "1"], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("text, fragments", [
    (flat("Dijkstra"), ["SimGrid crashes (killed by SIGSEGV) when asked for the route from host 'lustre' to the "
                        "master 'master'", "batloc platform generate"]),
    (flat("Floyd"), ["no route from host 'lustre' to the master 'master'", "batloc platform generate"]),
    (COMPOUND, ["SimGrid cannot run this platform: it aborts loading it (killed by SIGABRT)",
                "Unable to find host model 'compound'"]),
])
def test_a_platform_simgrid_would_crash_on_is_refused_in_one_line(tmp_path, text, fragments):
    proc = engine(tmp_path, text)
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Segmentation" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("batloc-batsim: error: "), proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_the_same_layout_with_routes_to_the_master_passes_the_probe(tmp_path):
    proc = engine(tmp_path, flat("Dijkstra", to_master=True))
    assert "no scheduler answered" in proc.stderr, proc.stderr   # it went on to the scheduler


def test_platform_show_refuses_what_the_engine_refuses(tmp_path):
    from batloc.platforms.reader import PlatformError, read_platform

    for routing in ("Dijkstra", "Floyd"):
        with pytest.raises(PlatformError, match=rf"no route from host 'lustre' to the master 'master' in zone "
                                                rf"'cluster' \(routing={routing}; 4 host\(s\) lack one\)"):
            read_platform(write(tmp_path, "p.xml", flat(routing)))
    assert read_platform(write(tmp_path, "p.xml", flat("Dijkstra", to_master=True))).total_cores == 2
