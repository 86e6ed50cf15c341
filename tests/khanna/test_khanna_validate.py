"""Real runs of the five file-sharing policies, each inside the engine's process, validate clean with their memory
replayed under their own model (`value`, Eq. 7; `lru` and its replications for JDP+DLL).

Two 1-core nodes of 20 bytes, six files of 10 bytes loaded in 1 s each: a node holds two of them, so the
jobs' loads evict (value and lru choose differently here: MCT's, SA's and Online-HPS's hits are not all
hits under lru), and JDP+DLL replicates the files mapped twice to a node.
"""

import json
import subprocess

import pytest

from batloc.analysis import validate
from batloc.analysis.memory_model import memory_model
from batloc.outputs import read_rows
from engine_harness import ENGINE, platform_xml

pytestmark = pytest.mark.needs_engine

FILES = "AABACADAEABFACAD"   # A read often: Eq. 7 keeps it where LRU would not


def workload():
    jobs = [{"id": i, "subtime": 2 * i, "res": 1, "walltime": 30, "profile": f"d{2 + i % 3}", "user": "u",
             "input_file": f, "input_size": 10.0, "evaluated": True} for i, f in enumerate(FILES)]
    return {"nb_res": 2, "jobs": jobs, "profiles": {f"d{d}": {"type": "delay", "delay": d} for d in (2, 3, 4)}}


def run_policy(tmp_path, policy, wl_doc, memory):
    platform, wl, prefix = tmp_path / "p.xml", tmp_path / "w.json", str(tmp_path / policy)
    platform.write_text(platform_xml(nodes=2, cores=1, bandwidth=10, memory=memory))
    wl.write_text(json.dumps(wl_doc))
    proc = subprocess.run(ENGINE + ["-p", str(platform), "-w", str(wl), "-e", prefix, "-q", "--enable-dynamic-jobs",
                                    "--in-process", f"schedulers/{policy}.py",
                                    "--scheduler-options", json.dumps({"export_prefix": prefix})],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return platform, wl, prefix


@pytest.mark.parametrize("policy", ["met", "mct", "sa", "jdp_dll", "online_hps"])
def test_a_run_of_the_family_validates_under_its_own_model(tmp_path, policy):
    platform, wl, prefix = run_policy(tmp_path, policy, workload(), 20)
    model = memory_model({"policy": policy})
    assert model == ("lru" if policy == "jdp_dll" else "value")
    assert validate.validate(prefix, wl, platform, model, quiet=True)[0] == []
    decisions = read_rows(f"{prefix}_decisions.csv")[1]
    loaded = {}
    reloads = 0                  # a miss on a file loaded on its node before: it was evicted in between
    for d in decisions:
        reloads += d["cache"] == "miss" and d["input_file"] in loaded.get(d["node"], set())
        loaded.setdefault(d["node"], set()).add(d["input_file"])
    if policy in ("mct", "sa", "online_hps"):     # evicted by Eq. 7's order, not LRU's
        assert validate.validate(prefix, wl, platform, "lru", quiet=True)[0] != []
    else:
        assert reloads > 0
    if policy == "jdp_dll":
        assert any(r["job_id"].startswith("rep-") for r in read_rows(f"{prefix}_jobs.csv")[1])


def test_dll_makes_no_replica_where_the_file_does_not_fit_next_to_the_files_in_use(tmp_path):
    # Nodes of one 10-byte file each: A runs on n000 (jobs 1, 3), B on n001 (jobs 2, 4). Job 3 is A's second
    # mapping to n000, so DLL replicates A to the least-loaded node without it, n001, whose memory holds B for
    # job 2, still running: A does not fit there, and no replica is made (one was, and held 20 bytes of n001's
    # 10); the same for B's second mapping, to n000.
    jobs = [{"id": i, "subtime": i - 1, "res": 1, "walltime": w, "profile": "d15", "user": "u", "input_file": f,
             "input_size": 10.0, "evaluated": True} for i, f, w in ((1, "A", 100), (2, "B", 100), (3, "A", 30),
                                                                     (4, "B", 30))]
    wl_doc = {"nb_res": 2, "jobs": jobs, "profiles": {"d15": {"type": "delay", "delay": 15}}}
    platform, wl, prefix = run_policy(tmp_path, "jdp_dll", wl_doc, 10)
    assert validate.validate(prefix, wl, platform, "lru", quiet=True)[0] == []
    rows = read_rows(f"{prefix}_jobs.csv")[1]
    assert not any(r["job_id"].startswith("rep-") for r in rows)
    assert sorted(r["job_id"] for r in rows if r["workload_name"] == "w0") == ["1", "2", "3", "4"]
