"""Platform XML layout (docs/contract.md §1, §6) and the committed Rackham files."""

import xml.etree.ElementTree as ET

import pytest

from batloc.platforms import rackham
from batloc.platforms.cli import main
from batloc.platforms.generator import PlatformSpec, render
from batloc.platforms.reader import read_platform
from batloc.platforms.units import parse_bandwidth, parse_bytes, parse_duration

TINY = PlatformSpec(memory_mix=((2, 128e9), (1, 256e9)), cores=2, node_bandwidth=0.1e9,
                    backbone_bandwidth=0.05e9, latency=2e-6, sharing="SHARED", name="tiny")


def _props(host):
    return {p.get("id"): p.get("value") for p in host.findall("prop")}


def test_layout_of_a_tiny_platform():
    root = ET.fromstring(render(TINY))
    assert root.get("version") == "4.1"
    (top,) = root.findall("zone")
    assert top.get("id") == "tiny" and top.get("routing") == "Full" and not top.findall("host")
    zones = {z.get("id"): z for z in top.findall("zone")}
    assert list(zones) == ["master_zone", "lustre_zone", "n000", "n001", "n002"]
    assert {z.get("routing") for z in zones.values()} == {"Full"}
    assert [[h.get("id") for h in z.findall("host")] for z in zones.values()] == [
        ["master"], ["lustre"], ["n000_c00", "n000_c01", "n000_mem"], ["n001_c00", "n001_c01", "n001_mem"],
        ["n002_c00", "n002_c01", "n002_mem"]]
    hosts = {h.get("id"): h for h in root.iter("host")}
    assert _props(hosts["master"]) == {"role": "master"}
    # the backbone's bandwidth, which every load shares (schedulers see properties, not links)
    assert _props(hosts["lustre"]) == {"role": "storage", "bandwidth": "50000000"}
    assert _props(hosts["n001_c01"]) == {"node": "n001"} and hosts["n001_c01"].get("core") == "1"
    assert hosts["n001_c01"].get("speed") == "1Gf"
    assert _props(hosts["n002_mem"]) == {"role": "storage", "node": "n002", "memory_bytes": "256000000000",
                                         "bandwidth": "100000000"}
    links = {link.get("id"): link.attrib for link in top.findall("link")}
    assert links["n000_link"] == {"id": "n000_link", "bandwidth": "100000000Bps", "latency": "2e-06s",
                                  "sharing_policy": "SHARED"}
    assert links["backbone"]["sharing_policy"] == "SHARED" and links["backbone"]["bandwidth"] == "50000000Bps"
    assert links["master_link"] == {"id": "master_link", "bandwidth": "1000000000000Bps", "latency": "0s",
                                    "sharing_policy": "FATPIPE"}
    routes = [(r.get("src"), r.get("dst"), r.get("gw_src"), r.get("gw_dst"), [c.get("id") for c in r.findall("link_ctn")])
              for r in top.findall("zoneRoute")]
    # lustre -> each node (arriving at its memory) over the node link and the backbone; every zone -> master
    assert routes == ([("lustre_zone", "master_zone", "lustre", "master", ["master_link"])]
                      + [("lustre_zone", f"n00{i}", "lustre", f"n00{i}_mem", [f"n00{i}_link", "backbone"])
                         for i in range(3)]
                      + [(f"n00{i}", "master_zone", f"n00{i}_mem", "master", ["master_link"]) for i in range(3)])
    assert not list(root.iter("route"))


def test_a_zone_name_taken_by_the_layout_is_refused():
    for name in ("master_zone", "lustre_zone", "n001"):
        with pytest.raises(ValueError, match="taken by one of its zones"):
            render(PlatformSpec(memory_mix=((2, 1e9),), cores=1, name=name))


def test_names_stay_in_node_order_when_sorted():
    spec = PlatformSpec(memory_mix=((1001, 1e9),), cores=120)
    root = ET.fromstring(render(spec))
    cores = [h.get("id") for h in root.iter("host") if h.get("core")]
    assert cores[0] == "n0000_c000" and cores == sorted(cores)


def test_committed_files_are_what_the_generator_writes():
    for filename, spec in rackham.variants().items():
        committed = (rackham.committed_dir() / filename).read_text(encoding="ascii")
        assert committed == render(spec), f"{filename} is stale: run `batloc platform rackham -d platforms`"


def test_committed_rackham_summaries():
    base = read_platform(rackham.committed_dir() / "rackham.xml")
    assert len(base.nodes) == 486 and base.total_cores == 9720
    assert {(n.memory_bytes, n.bandwidth) for n in base.nodes} == {(128e9, 0.1e9)}
    hetero = read_platform(rackham.committed_dir() / "rackham-hetero.xml")
    memories = [n.memory_bytes for n in hetero.nodes]
    assert (memories.count(128e9), memories.count(256e9), memories.count(1024e9)) == (450, 32, 4)
    backbone = ET.parse(rackham.committed_dir() / "rackham-backbone.xml").getroot()
    link = next(l for l in backbone.iter("link") if l.get("id") == "backbone")
    assert link.get("bandwidth") == "12150000000Bps"  # 486 x 0.1 GB/s / 4


def test_cli_generate_and_show(tmp_path, capsys):
    out = tmp_path / "mine.xml"
    assert main(["generate", "-o", str(out), "--memory-mix", "2x64GB,1x1TiB", "--cores", "4",
                 "--node-bw", "1GB/s", "--backbone-bw", "auto", "--sharing", "shared"]) == 0
    summary = read_platform(out)
    assert [n.memory_bytes for n in summary.nodes] == [64e9, 64e9, 2.0**40]
    assert summary.total_cores == 12
    root = ET.parse(out).getroot()
    assert next(l for l in root.iter("link") if l.get("id") == "backbone").get("bandwidth") == "750000000Bps"
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "3 nodes, 12 cores" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["generate", "-o", "x.xml", "--memory", "lots"], "cannot read size 'lots'"),
    (["generate", "-o", "x.xml", "--memory-mix", "2*64GB"], "expected COUNTxSIZE"),
    (["generate", "-o", "x.xml", "--nodes", "0"], "at least one node"),
    (["show", "nowhere.xml"], "nowhere.xml: cannot read platform"),
    # a name that ends the file's XML comment, or that the ASCII file cannot hold (issue 37's probe)
    (["generate", "-o", "x.xml", "--name", "a--b"], "the platform name 'a--b' must be printable ASCII without '--'"),
    (["generate", "-o", "x.xml", "--name", "clüster"], "the platform name 'clüster' must be printable ASCII"),
    (["generate", "-o", "x.xml", "--memory", "1e400"], "node memory must be finite and > 0, got inf bytes"),
    (["generate", "-o", "x.xml", "--nodes", "100000", "--cores", "100"],
     "100000 nodes x 100 cores make 10100002 hosts (with the node memories), more than 1048576"),
])
def test_cli_errors(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.xml").write_text("previous\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert (tmp_path / "x.xml").read_text() == "previous\n"    # a refused spec leaves the file as it was


@pytest.mark.parametrize("field, value", [("memory_mix", ((1, float("nan")),)), ("node_bandwidth", float("inf")),
                                          ("backbone_bandwidth", float("nan")), ("latency", float("inf"))])
def test_a_spec_holding_nan_or_inf_is_refused(field, value):
    spec = PlatformSpec(**{"memory_mix": ((1, 1e9),), "cores": 2, field: value})
    with pytest.raises(ValueError, match="finite"):
        render(spec)


def test_units():
    assert parse_bytes("128GB") == 128e9 and parse_bytes("1KiB") == 1024
    assert parse_bandwidth("0.1GB/s") == 1e8 and parse_bandwidth("100MBps") == 1e8
    assert parse_duration("5min") == 300 and parse_duration("2us") == 2e-6 and parse_duration("7d") == 604800
    with pytest.raises(ValueError):
        parse_duration("5 parsecs")
