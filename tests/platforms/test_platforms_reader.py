"""The one platform reader: Batsim 4.2's ids (compute hosts by name, then storages), the schedulers' view."""

import pytest

from batloc.platforms.reader import PlatformError, read_platform, read_resources, read_view

TWO_NODES = "tests/data/schedulers/two_nodes.xml"   # master, lustre, n000/n001 x 2 cores, n000_mem, n001_mem


def test_resources_are_numbered_as_batsim_numbers_them():
    res = read_resources(TWO_NODES)
    assert [(r["id"], r["name"]) for r in res.compute] == [
        (0, "n000_c00"), (1, "n000_c01"), (2, "n001_c00"), (3, "n001_c01")]
    assert [(r["id"], r["name"]) for r in res.storage] == [(4, "lustre"), (5, "n000_mem"), (6, "n001_mem")]
    assert res.storage[2]["properties"] == {"role": "storage", "node": "n001", "memory_bytes": "100000000000",
                                            "bandwidth": "1000000000"}


def test_view_is_the_schedulers_platform_view():
    view = read_view(TWO_NODES)
    n001 = view.by_name["n001"]
    assert (n001.core_ids, n001.mem_id, n001.memory_bytes, n001.bandwidth) == ((2, 3), 6, 100e9, 1e9)
    assert view.lustre_id == 4
    summary = read_platform(TWO_NODES)
    assert (summary.total_cores, summary.cores_per_node) == (4, 2)


def test_a_platform_off_contract_is_one_error_naming_the_file(tmp_path):
    bad = tmp_path / "nomem.xml"
    bad.write_text(open(TWO_NODES).read().replace('<prop id="memory_bytes" value="100000000000"/>', ""))
    with pytest.raises(PlatformError, match=r"nomem.xml: storage 'n000_mem' lacks a numeric 'memory_bytes'"):
        read_view(bad)
    with pytest.raises(PlatformError, match=r"broken.xml: cannot read platform"):
        (tmp_path / "broken.xml").write_text("<platform>")
        read_resources(tmp_path / "broken.xml")


def test_a_batsim_cluster_platform_after_a_blank_line_is_read_as_batsim_reads_it(tmp_path):
    plat = tmp_path / "c.xml"
    plat.write_text("""
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="AS0" routing="Full">
  <cluster id="c1" prefix="a" suffix=".x" radical="0-2,10" speed="1Gf" bw="1GBps" lat="0us">
    <prop id="kind" value="cpu"/></cluster>
  <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1GBps" lat="0us">
    <prop id="role" value="master"/></cluster>
</zone></platform>""")
    res = read_resources(plat)
    assert [(r["id"], r["name"]) for r in res.compute] == [(0, "a0.x"), (1, "a1.x"), (2, "a10.x"), (3, "a2.x")]
    assert res.compute[0]["properties"] == {"kind": "cpu"} and res.storage == []


# Batsim 4.2.1's platforms/cluster_locality_8x16.xml, in small: its master is a cabinet's host, master_host0
CABINET_MASTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <zone id="c" routing="Cluster">
      <cabinet id="a" prefix="algol" suffix="" speed="3Gf" bw="56Gbps" lat="1us" radical="10-12"/>
      <cabinet id="m" prefix="master_host" suffix="" speed="3Gf" bw="56Gbps" lat="1us" radical="0-0"/>
      <router id="router1"/>
      <backbone id="backbone1" bandwidth="2.25GBps" latency="500us"/>
    </zone>
  </zone>
</platform>
"""


def test_platform_show_names_the_master_that_would_do_and_takes_batsims_m(tmp_path, capsys):
    from batloc.platforms.cli import main

    plat = tmp_path / "cabinets.xml"
    plat.write_text(CABINET_MASTER)
    assert main(["show", str(plat)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith(
        "no master host: no host has the property role=master and none is named 'master_host' (Batsim's "
        "-m/--master-host, default master_host); a host is named like one: master_host0 (-m master_host0 makes "
        "it the master, as on Batsim)"), err
    assert main(["show", str(plat), "-m", "master_host0"]) == 0
    assert capsys.readouterr().out.startswith(f"{plat}: 3 nodes, 3 cores")
    assert main(["show", str(plat), "-r", "master_host0:master"]) == 0
    copy = tmp_path / "copy.xml"
    assert main(["annotate", str(plat), "-o", str(copy), "-m", "master_host0"]) == 0
    assert main(["show", str(copy), "-m", "master_host0"]) == 0
    assert "3 x 1 cores, 128 GB, 0.1 GB/s" in capsys.readouterr().out


def test_no_master_and_no_host_named_like_one_says_how_to_name_it():
    from batloc.platforms.numbering import RoleError, batsim_roles

    with pytest.raises(RoleError, match="; name one of its hosts with -m, or give it the property role=master$"):
        batsim_roles([("a", None), ("b", None)])


SIMPLE = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/>
</zone></platform>
"""


@pytest.mark.parametrize("change, message", [
    # what SimGrid refuses (the engine too) is refused by the reader `batloc platform show` uses, in one line
    (('id="h2"', 'id="h1"'), "host 'h1' is declared twice"),
    (('id="h2" speed="1Gf"', 'id="h2" speed="-1Gf"'), "host 'h2' has a negative speed '-1Gf'"),
    (('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">', ""),
     'no line <!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd"> before <platform>'),
    (("https://simgrid.org/simgrid.dtd", "simgrid.dtd"), "no line <!DOCTYPE platform"),
])
def test_what_simgrid_refuses_is_refused_by_the_reader(tmp_path, change, message):
    plat = tmp_path / "odd.xml"
    plat.write_text(SIMPLE)
    assert read_platform(plat).total_cores == 2
    plat.write_text(SIMPLE.replace(*change))
    with pytest.raises(PlatformError, match="odd.xml: " + message.replace("(", r"\(").replace(")", r"\)")):
        read_platform(plat)


def test_simgrid_s_older_dtd_location_is_read(tmp_path):
    plat = tmp_path / "old.xml"
    plat.write_text(SIMPLE.replace('"https://simgrid.org/simgrid.dtd"',
                                   "'http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd'"))
    assert read_platform(plat).total_cores == 2
