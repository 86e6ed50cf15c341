"""`batloc platform annotate` and `batloc platform show` on plain Batsim platforms.

A plain Batsim platform (hosts without batloc's properties, no node memory, no
lustre, a master of its own) as Batsim's `small_platform.xml` is: two compute
hosts h1, h2 and a master reached over 1 GB/s links. Its annotated copy keeps it
and adds one memory per host plus lustre (contract §1, §6).
"""

import json
import subprocess
import sys
import textwrap

import pytest

from batloc.platforms import reader
from batloc.platforms.cli import main
from batloc.platforms.reader import PlatformError, read_platform, read_view
from policy_run import simulate

PLAIN_ZONE = """<zone id="AS0" routing="Full">
   <!-- a comment naming a <zone id="x"> must not confuse the copy -->
   <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
   <host id="h1" speed="1Gf"/>
   <host id="h2" speed="1Gf"/>
   <link id="l1" bandwidth="1GBps" latency="0s"/>
   <link id="l2" bandwidth="1GBps" latency="0s"/>
   <route src="master" dst="h1"><link_ctn id="l1"/></route>
   <route src="master" dst="h2"><link_ctn id="l2"/></route>
   <route src="h1" dst="h2"><link_ctn id="l1"/><link_ctn id="l2"/></route>
 </zone>"""
PLAIN = f"""
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
 {PLAIN_ZONE}
</platform>
"""


def plain(tmp_path, text=PLAIN, name="plain.xml"):
    path = tmp_path / name
    path.write_text(text.lstrip() if "\n<?xml" in text and not hasattr(reader, "platform_text") else text)
    return path


def annotated(tmp_path, *extra):
    out = tmp_path / "annotated.xml"
    assert main(["annotate", str(plain(tmp_path)), "-o", str(out), "--memory", "2GB", "--node-bw", "0.01GB/s",
                 *extra]) == 0
    return out


def test_the_copy_keeps_the_platform_and_adds_a_memory_per_host_and_lustre(tmp_path, capsys):
    out = annotated(tmp_path)
    assert capsys.readouterr().out.strip() == (f"wrote {out}: 2 nodes (one per compute host), each with 2 GB of "
                                               "memory loaded from lustre at 0.01 GB/s")
    text = out.read_text()
    assert PLAIN_ZONE in text           # the original zone, byte for byte
    view = read_view(out)
    assert [(n.name, n.core_ids, n.memory_bytes, n.bandwidth) for n in view.nodes] == [
        ("h1", (0,), 2e9, 1e7), ("h2", (1,), 2e9, 1e7)]
    # Batsim's numbering: compute hosts, then storages by name (h1_mem, h2_mem, lustre)
    assert [n.mem_id for n in view.nodes] == [2, 3] and view.lustre_id == 4 and not view.memoryless


def test_show_says_what_a_plain_platform_has_and_how_to_add_memories(tmp_path, capsys):
    path = plain(tmp_path)
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: 2 nodes, 2 cores (Batsim's compute hosts: one host, one node, as no host has batloc's property "
        "node)",
        "  2 x 1 core, no node memory",
        "  no node memories and no lustre: stock schedulers run it as it is; batloc's file-aware schedulers and the "
        f"staging proxy run jobs without input files only (`batloc platform annotate {path} -o COPY` adds memories, "
        "contract §1)"]
    assert main(["show", str(annotated(tmp_path))]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [f"{tmp_path / 'annotated.xml'}: 2 nodes, 2 cores",
                                                         "  2 x 1 cores, 2 GB, 0.01 GB/s"]


def test_a_backbone_goes_on_every_load_and_into_lustres_bandwidth(tmp_path):
    out = annotated(tmp_path, "--backbone-bw", "0.005GB/s", "--sharing", "shared")
    text = out.read_text()
    assert '<route src="lustre" dst="h1_mem"><link_ctn id="h1_link"/><link_ctn id="batloc_backbone"/></route>' in text
    assert 'sharing_policy="SHARED"' in text
    lustre = next(r for r in reader.read_resources(out).storage if r["name"] == "lustre")
    assert lustre["properties"]["bandwidth"] == "5000000"


@pytest.mark.parametrize("text, message", [
    (PLAIN.replace('id="h2"', 'id="h2_mem"'), "host 'h2_mem' already has a name batloc's annotation gives"),
    (PLAIN.replace("<platform version=\"4.1\">", "<platform version=\"4.1\"><zone id=\"Z\" routing=\"None\"/>"),
     "expected one top-level <zone> (or <AS>) inside <platform>, found 2"),
])
def test_what_cannot_be_annotated_is_one_line(tmp_path, capsys, text, message):
    assert main(["annotate", str(plain(tmp_path, text)), "-o", str(tmp_path / "o.xml")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not (tmp_path / "o.xml").exists()


def test_a_platform_that_has_batlocs_memories_already_is_refused(tmp_path, capsys):
    from engine_harness import platform_xml
    path = tmp_path / "batloc.xml"
    path.write_text(platform_xml(nodes=1, cores=1))
    assert main(["annotate", str(path), "-o", str(tmp_path / "o.xml")]) == 2
    assert "is the platform annotated already?" in capsys.readouterr().err


def test_an_old_as_file_gets_as_elements(tmp_path):
    text = PLAIN.replace('version="4.1"', 'version="4"').replace("<zone ", "<AS ").replace("</zone>", "</AS>")
    out = tmp_path / "o.xml"
    assert main(["annotate", str(plain(tmp_path, text)), "-o", str(out)]) == 0
    body = out.read_text()
    assert '<AS id="batloc" routing="Full">' in body and "<ASroute " in body and "<zone" not in body


# Loads a platform in SimGrid as the engine does, moves 1e8 bytes lustre -> h1_mem and 1 byte
# h2_mem -> master (Batsim's job-end message from a staging job's first host), prints both end times.
PROBE = textwrap.dedent("""
    import json, sys
    from batloc.engine.simgrid_loader import import_simgrid
    sg = import_simgrid()
    e = sg.Engine(["probe", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--log=root.thres:critical"])
    e.load_platform(sys.argv[1])
    done = {}
    def send(src, dst, size):
        sg.Comm.sendto_async(sg.Host.by_name(src), sg.Host.by_name(dst), size).wait()
        done[dst] = sg.Engine.clock
    sg.Actor.create("load", sg.Host.by_name("lustre"), send, "lustre", "h1_mem", 10**8)
    sg.Actor.create("report", sg.Host.by_name("h2_mem"), send, "h2_mem", "master", 1)
    e.run()
    print(json.dumps(done))
""")


@pytest.mark.needs_simgrid
def test_simgrid_routes_loads_into_memories_and_storages_to_the_master(tmp_path):
    result = subprocess.run([sys.executable, "-c", PROBE, str(annotated(tmp_path))], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    times = json.loads(result.stdout.strip().splitlines()[-1])
    assert times["h1_mem"] == pytest.approx(10.0)               # 1e8 B over the 1e7 B/s node link
    # 1 B to the memory zone's router and from there to the master, over 1e12 B/s: never over a node
    # link (1e-7 s at its 1e7 B/s)
    assert times["master"] == pytest.approx(1e-12)


@pytest.mark.needs_engine
def test_fcfs_loads_files_on_the_annotated_copy(tmp_path):
    # J1 (file A, 1e8 B) at t=1 on h1: load [1, 11) at 1e7 B/s, runs 20 s [11, 31). J2 (file A) at t=2: h2
    # is free, FCFS takes it and loads A there too: [2, 12), runs [12, 32).
    jobs = [{"id": i, "subtime": i, "res": 1, "walltime": 100, "profile": "d20", "user": "u", "input_file": "A",
             "input_size": 1e8, "evaluated": True} for i in (1, 2)]
    out = simulate(tmp_path, "fcfs", annotated(tmp_path),
                   {"nb_res": 2, "jobs": jobs, "profiles": {"d20": {"type": "delay", "delay": 20.0}}})
    rows = out.rows
    assert [(rows[j]["starting_time"], rows[j]["finish_time"], rows[j]["allocated_resources"]) for j in "12"] == [
        ("11.000000", "31.000000", "0"), ("12.000000", "32.000000", "1")]
    assert (rows["stage-w0-1-h1"]["starting_time"], rows["stage-w0-1-h1"]["allocated_resources"]) == ("1.000000",
                                                                                                      "2 4")


CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="c1" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="125MBps" lat="0us" bb_bw="2.25GBps"
           bb_lat="0us"/>
  <cluster id="c2" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="0us"
           bb_bw="2.25GBps" bb_lat="0us"><prop id="role" value="master"/></cluster>
  <link id="backbone" bandwidth="1.25GBps" latency="0us"/>
  <zoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="master_hostc2_router"><link_ctn id="backbone"/></zoneRoute>
</zone>
</platform>
"""


@pytest.mark.needs_engine
@pytest.mark.skipif(not hasattr(reader, "platform_hosts"), reason="needs the reader of <cluster> hosts "
                                                                  "(Batsim's platforms as Batsim reads them)")
def test_a_cluster_platform_is_annotated_and_runs_batlocs_schedulers(tmp_path):
    # cluster512.xml in small: hosts a0, a1 of a <cluster>, the master a cluster of its own (role=master)
    path = plain(tmp_path, CLUSTER, "cluster.xml")
    out = tmp_path / "cluster-batloc.xml"
    assert main(["annotate", str(path), "-o", str(out), "--node-bw", "0.01GB/s"]) == 0
    assert [(n.name, n.core_ids, n.mem_id) for n in read_view(out).nodes] == [("a0", (0,), 2), ("a1", (1,), 3)]
    assert 'gw_dst="master_host0"' in out.read_text()
    jobs = [{"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d20", "input_file": "A",
             "input_size": 1e8}]
    rows = simulate(tmp_path, "lea", out, {"nb_res": 2, "jobs": jobs,
                                           "profiles": {"d20": {"type": "delay", "delay": 20.0}}}).rows
    assert (rows["1"]["starting_time"], rows["1"]["finish_time"]) == ("11.000000", "31.000000")


def test_the_view_of_a_plain_platform_refuses_nothing_it_reads(tmp_path):
    # no PlatformError: the defaults of locality.platform_view (one node per host, memoryless)
    summary = read_platform(plain(tmp_path))
    assert summary.view.memoryless and summary.total_cores == 2
    with pytest.raises(PlatformError, match="cannot read platform"):
        read_platform(tmp_path / "nowhere.xml")
