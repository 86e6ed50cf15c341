"""One rule for an instant (contract §5): a job its scheduler kills at its window's end ends at that instant
before any start of it, for its node's memory, in the scheduler as in `batloc validate`'s replay.

The instant that broke (FCFS-BF's saturated day, t = 50 768 on n081), in small: one node of 3 cores, 1 GB/s,
100 GB, the paper's memory model. K (file F, 10 GB) loads [1, 11) and computes until its window [1, 21) ends;
E (file H, 1 GB, 2 cores) loads [1, 2) and computes [2, 21). At 21 E ends, K is killed, and X (file G) and then
Y (file F) start on E's cores. F's last user ended at 21 and X starts there with another file: X's start evicts
F, so Y loads F again [21, 31) and computes [31, 36). The scheduler used to count K as F's user until the
engine reported its kill, in the next message of that instant: Y was logged as a hit on F, and the validator,
which ends K before the starts of 21, found F gone ("hit not in memory"). Planning family (FCFS, FCFS-BF, LEA)
and file-sharing family (MCT under the paper's model) alike; the staging proxy: test_adapters_relay.py.
"""

import json

import pytest

from batloc.analysis import validate
from batloc.outputs import read_rows
from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.fcfs_bf import Fcfs_bf
from batloc.schedulers.lea import Lea
from batloc.schedulers.mct import Mct
from batloc.testing.dry_run import DryRun, make_resources, write_jobs_csv

GB = 1e9
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="batloc" routing="Full">
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <host id="lustre" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="n000_c00" speed="1Gf" core="1"><prop id="node" value="n000"/></host>
    <host id="n000_c01" speed="1Gf" core="1"><prop id="node" value="n000"/></host>
    <host id="n000_c02" speed="1Gf" core="1"><prop id="node" value="n000"/></host>
    <host id="n000_mem" speed="1Gf"><prop id="role" value="storage"/><prop id="node" value="n000"/><prop id="memory_bytes" value="100000000000"/><prop id="bandwidth" value="1000000000"/></host>
  </zone>
</platform>
"""


def job(jid, subtime, res, delay, walltime, file, size):
    return {"id": jid, "subtime": subtime, "res": res, "walltime": walltime, "profile": f"d{delay}",
            "input_file": file, "input_size": size}


JOBS = [job(1, 1, 1, 100, 20, "F", 10 * GB),    # K: killed at its window's end, 21
        job(2, 1, 2, 19, 100, "H", 1 * GB),     # E: ends at 21 by itself
        job(3, 2, 1, 5, 100, "G", 1 * GB),      # X: starts at 21 with another file
        job(4, 3, 1, 5, 100, "F", 10 * GB)]     # Y: starts at 21 after X, reads F


# The file-sharing family loads one file at a time per node: E's load waits for K's, [11, 12), and a 9 s E ends
# at 21 too; Y's load waits for X's, [22, 32).
@pytest.mark.parametrize("policy, options, e_delay, y_run", [
    (Fcfs, {}, 19, (31, 36)), (Fcfs_bf, {}, 19, (31, 36)), (Lea, {}, 19, (31, 36)),
    (Mct, {"cache": "paper"}, 9, (32, 37))])
def test_a_job_killed_at_its_window_end_leaves_memory_before_the_starts_of_that_instant(tmp_path, policy, options,
                                                                                       e_delay, y_run):
    profiles = {f"d{d}": {"type": "delay", "delay": d} for d in (100, e_delay, 5)}
    jobs = [dict(j, profile=f"d{e_delay}") if j["id"] == 2 else j for j in JOBS]
    wl = {"nb_res": 3, "jobs": jobs, "profiles": profiles}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    (tmp_path / "p.xml").write_text(PLATFORM)
    compute, storage = make_resources({"n000": 3}, memory_bytes=100 * GB, bandwidth=GB)
    prefix = tmp_path / "out"
    run = DryRun(policy({"export_prefix": str(prefix), **options}), compute, storage, wl)
    results = run.run()
    write_jobs_csv(run, f"{prefix}_jobs.csv")
    assert (results["w0!1"]["state"], results["w0!1"]["finish"]) == ("COMPLETED_KILLED", 21.0)
    assert (results["w0!2"]["state"], results["w0!2"]["finish"]) == ("COMPLETED_SUCCESSFULLY", 21.0)
    logged = {d["job_id"]: (float(d["time"]), d["cache"]) for d in read_rows(f"{prefix}_decisions.csv")[1]}
    assert logged["w0!3"] == (21.0, "miss") and logged["w0!4"] == (21.0, "miss")
    assert (results["w0!4"]["start"], results["w0!4"]["finish"]) == y_run
    assert validate.main([str(prefix), "--workload", str(tmp_path / "w.json"), "--platform",
                          str(tmp_path / "p.xml")]) == 0
