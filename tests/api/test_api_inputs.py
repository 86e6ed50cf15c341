"""batloc.api's inputs: a platform and a workload from Python objects are the files the commands write, every
mistake is one line naming the job or option, and the names a scheduler or an engine option is given by reach
robin and the engine as their own flags would (no simulation here: tests/api/test_api_runs.py runs them)."""

import json

import pandas as pd
import pytest

import batloc.api as bl
from batloc.api.runs import engine_flags, scheduler_entry
from batloc.platforms.cli import main as platform_main
from batloc.workloads.cli import main as workload_main


def test_a_platform_is_the_one_batloc_platform_generate_writes(tmp_path):
    made = bl.platform(nodes=3, cores=4, memory="16GB", node_bw="0.2GB/s", backbone_bw="auto", latency="1ms",
                       sharing="shared", name="tiny")
    assert platform_main(["generate", "-o", str(tmp_path / "cli.xml"), "--nodes", "3", "--cores", "4", "--memory",
                          "16GB", "--node-bw", "0.2GB/s", "--backbone-bw", "auto", "--latency", "1ms", "--sharing",
                          "SHARED", "--name", "tiny"]) == 0
    assert made.xml == (tmp_path / "cli.xml").read_text()
    assert (made.nodes, made.cores, made.path) == (3, 12, None)
    path = made.save(tmp_path / "saved.xml")
    assert made.path == path and path.read_text() == made.xml
    # numbers are bytes, bytes/s and seconds; a memory mix replaces nodes and memory
    assert bl.platform(nodes=3, cores=4, memory=16e9, node_bw=2e8, backbone_bw=1.5e8, latency=0.001,
                       sharing="SHARED", name="tiny").xml == made.xml
    assert bl.platform(memory_mix=[(2, "16GB"), (1, 64e9)], cores=2).nodes == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(nodes=0), "platform: a platform needs at least one node"),
    (dict(nodes=2.5), "platform: nodes must be a whole number, not 2.5"),
    (dict(memory="lots"), "platform: cannot read size 'lots'"),
    (dict(memory_mix="2y"), "platform: cannot read memory mix part '2y'"),
    (dict(sharing="ALL"), "platform: sharing policy must be one of FATPIPE, SHARED"),
    # the probe: NaN and inf were written into the platform ("nan" bytes of memory), 10^15 hosts drawn for ever
    (dict(memory=float("nan")), "platform: node memory must be finite and > 0, got nan bytes"),
    (dict(node_bw=float("inf")), "platform: node bandwidth must be finite and > 0"),
    (dict(nodes=10**9, cores=10**6), "platform: 1000000000 nodes x 1000000 cores make 1000001000000002 hosts"),
    (dict(name="a--b"), "platform: the platform name 'a--b' must be printable ASCII without '--'"),
])
def test_a_platform_mistake_is_one_line(kwargs, message):
    with pytest.raises(bl.BatlocError) as err:
        bl.platform(**kwargs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


JOBS = [dict(id=3, subtime=10, res=2, walltime=100, delay=40, input_file="a", input_size=2e9, user="u1"),
        dict(id=1, subtime=0, res=1, walltime=-1, delay=5.5, input_file="b", input_size=0, evaluated=False,
             session="s1")]


def test_jobs_from_dicts_or_a_dataframe_are_the_contract_s_workload(tmp_path):
    for given in (JOBS, pd.DataFrame(JOBS)):
        w = bl.workload(given)
        path = w.save(tmp_path / "w.json")
        data = json.loads(path.read_text())
        assert data["nb_res"] == 2   # the widest job's, without a platform
        assert [(j["id"], j["subtime"], j["res"], j["walltime"], j["input_file"], j["input_size"], j["evaluated"],
                 j["user"]) for j in data["jobs"]] == [(1, 0, 1, -1, "b", 0.0, False, ""),
                                                     (3, 10, 2, 100, "a", 2e9, True, "u1")]
        assert data["jobs"][0]["session"] == "s1"
        assert {name: p["delay"] for name, p in data["profiles"].items()} == {"d5.5": 5.5, "d40": 40}
        assert list(w.jobs["id"]) == [3, 1] and list(w.jobs["delay"]) == [40.0, 5.5]
    assert bl.workload(JOBS, platform=bl.platform(nodes=2, cores=8)).nb_res == 16
    assert list(bl.workload([{k: v for k, v in j.items() if k != "id"} for j in JOBS]).jobs["id"]) == [1, 2]


@pytest.mark.parametrize("change, message", [
    (dict(input_size=None), "workload: job #1 (id 1): no input_size"),
    (dict(inputsize=1), "workload: job #1 (id 1): unknown field(s) inputsize"),
    (dict(res=0), "workload: job #1 (id 1): res must be an integer in 1..1048576, not 0"),
    (dict(res=1.5), "workload: job #1 (id 1): res must be an integer in 1..1048576, not 1.5"),
    # wider than any platform batloc reads: written as nb_res 10^20 in silence (the probe)
    (dict(res=10**20), "workload: job #1 (id 1): res must be an integer in 1..1048576, not 100000000000000000000"),
    (dict(delay=float("inf")), "workload: job #1 (id 1): delay must be a finite number >= 0, not inf"),
    (dict(delay=0), "workload: job #1 (id 1): delay must be > 0 s (Batsim refuses a job of no duration), not 0"),
    (dict(walltime=0), "workload: job #1 (id 1): walltime must be a number of seconds > 0 (or -1: none)"),
    (dict(input_file=""), "workload: job #1 (id 1): input_file must be a non-empty string"),
    (dict(id=3), "workload: job #1: id 3 is job #0's too"),
    (dict(evaluated="yes"), "workload: job #1 (id 1): evaluated must be true or false"),
])
def test_a_job_mistake_is_one_line_naming_the_job(change, message):
    jobs = [JOBS[0], {**JOBS[1], **change}]
    with pytest.raises(bl.BatlocError) as err:
        bl.workload(jobs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_synthetic_workload_is_the_one_batloc_workload_synth_writes(tmp_path):
    cluster = bl.platform(nodes=2, cores=4, memory="16GB")
    cluster.save(tmp_path / "p.xml")
    w = bl.workload(platform=cluster, duration="6h", load=0.8, jobs_per_file=3, users=5, seed=4)
    assert workload_main(["synth", "-o", str(tmp_path / "cli.json"), "--platform", str(tmp_path / "p.xml"),
                          "--duration", "6h", "--load", "0.8", "--jobs-per-file", "3", "--users", "5", "--seed",
                          "4"]) == 0
    assert w.save(tmp_path / "api.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    # an unsaved platform gives the same sizes
    assert len(bl.workload(platform=bl.platform(nodes=2, cores=4, memory="16GB"), duration="6h", load=0.8,
                           jobs_per_file=3, users=5, seed=4)) == len(w)
    with pytest.raises(bl.BatlocError, match=r"^workload: unknown option\(s\) lod \(a synthetic trace takes "):
        bl.workload(platform=cluster, lod=0.9)
    with pytest.raises(bl.BatlocError, match="^workload: load make a synthetic trace: give them without jobs$"):
        bl.workload(JOBS, load=0.9)


def test_schedulers_are_named_as_robin_and_pybatsim_name_them(tmp_path):
    assert scheduler_entry("lea") == {"name": "lea", "options": {}}
    assert scheduler_entry("lea-bf", {"cache": "lru"}) == {"name": "lea-bf", "options": {"cache": "lru"}}
    assert scheduler_entry("schedulers/fcfs.py") == {"name": "fcfs", "options": {}}   # batloc's own file
    assert scheduler_entry("easyBackfill") == {"name": "easyBackfill", "command": "pybatsim easyBackfill"}
    own = tmp_path / "my sched.py"
    own.write_text("")
    assert scheduler_entry(str(own), {"k": 1}) == {
        "name": "my_sched", "command": f"pybatsim '{own}' -o '{{\"k\": 1}}'"}
    for bad, message in (("", "scheduler: a name"), (str(tmp_path / "none.py"), "scheduler: no file ")):
        with pytest.raises(bl.BatlocError, match=f"^{message}"):
            scheduler_entry(bad)
    # options given as JSON text: a ValueError from deep inside dict() (the probe)
    with pytest.raises(bl.BatlocError, match="^scheduler options: a dict such as {'cache': 'lru'}, not str "):
        scheduler_entry("lea", '{"cache": "lru"}')


def test_a_sweep_takes_robin_s_comma_separated_names():
    from batloc.api.sweeps import _entry, _listed, _names

    assert [_entry(s) for s in _listed(_names("fcfs, lea-bf"))] == [{"name": "fcfs", "options": {}},
                                                                  {"name": "lea-bf", "options": {}}]


def test_nb_res_beyond_any_platform_is_one_line():
    with pytest.raises(bl.BatlocError, match=r"^workload: nb_res must be a whole number in 1\.\.1048576"):
        bl.workload(JOBS, nb_res=10**20)


def test_engine_options_are_the_engine_s_flags():
    assert engine_flags({"reply_timeout": 60, "lenient_call_me_later": True, "record_wallclock": False,
                         "add_role_to_hosts": ["a:master", "b:storage"], "master_host": "m0"}) == [
        "--reply-timeout", "60", "--lenient-call-me-later", "--add-role-to-hosts", "a:master",
        "--add-role-to-hosts", "b:storage", "--master-host", "m0"]
    for options, message in (({"reply_timout": 1}, "engine option reply_timout: not an option of batloc-batsim"),
                             ({"export": "x"}, "engine option export: set by batloc.api.run itself"),
                             ({"quiet": "yes"}, "engine option quiet is a flag: True or False, not 'yes'")):
        with pytest.raises(bl.BatlocError, match=f"^{message}"):
            engine_flags(options)
