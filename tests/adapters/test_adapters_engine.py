"""The staging proxy between the embedded engine and a scripted scheduler: times computed by hand.

Platform: 2 nodes x 2 cores, 0.1 GB/s per node (FATPIPE), so a 1 GB file
loads in 10 s and a 2 GB file in 20 s. Resource ids (Batsim 4.2's order, contract §1):
n000 cores 0 1, n001 cores 2 3, then storages lustre 4, n000_mem 5, n001_mem 6.
"""

import csv
import json
import socket
import subprocess
import sys


import engine_harness
from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

PROXY = [sys.executable, "-m", "batloc.adapters.cli"]
GB = 1e9


class Scripted:
    """A scheduler that knows nothing of files: runs each job on fixed cores, as soon as they are free."""

    def __init__(self, placement, calls=()):
        self.placement = placement          # job number -> alloc
        self.calls = list(calls)            # CALL_ME_LATER times, asked at the first message after t=0
        self.busy = set()
        self.queue = []
        self.seen = []                      # every message received

    def cores(self, alloc):
        ids = set()
        for part in alloc.split():
            lo, _, hi = part.partition("-")
            ids.update(range(int(lo), int(hi or lo) + 1))
        return ids

    def __call__(self, msg):
        self.seen.append(msg)
        out = []
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "JOB_SUBMITTED":
                self.queue.append(d["job_id"])
            elif t == "JOB_COMPLETED":
                self.busy -= self.cores(self.placement[d["job_id"].split("!")[1]])
        if self.calls and msg["now"] > 0:
            out += [{"type": "CALL_ME_LATER", "data": {"timestamp": c}} for c in self.calls]
            self.calls = []
        while self.queue:
            alloc = self.placement[self.queue[0].split("!")[1]]
            if self.cores(alloc) & self.busy:
                break
            job_id = self.queue.pop(0)
            self.busy |= self.cores(alloc)
            out.append({"type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": alloc}})
        return out


def serve(scheduler, port, stop_after=None):
    """Run `scheduler` on a REP socket in a thread; `stop_after` messages, then close (a crash)."""
    return engine_harness.serve(scheduler, f"tcp://127.0.0.1:{port}", stop_after=stop_after)[0]


def run_with_proxy(tmp_path, platform, workload, scheduler, proxy_args=(), stop_after=None):
    p_engine, p_sched = free_port(), free_port()
    thread = serve(scheduler, p_sched, stop_after)
    prefix = str(tmp_path / "out")
    proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{p_engine}", "--connect",
                                      f"tcp://127.0.0.1:{p_sched}", "--export-prefix", prefix, *proxy_args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    engine = subprocess.run(ENGINE + ["-p", platform, "-w", workload, "-e", prefix, "-q",
                                      "-s", f"tcp://127.0.0.1:{p_engine}", "--enable-dynamic-jobs"],
                            capture_output=True, text=True, timeout=60)
    _, proxy_err = proxy.communicate(timeout=30)
    thread.join(5)
    return engine, proxy.returncode, proxy_err, prefix


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def job(i, subtime, file=None, size=None, res=1, delay=5):
    j = {"id": i, "subtime": subtime, "res": res, "walltime": 100, "profile": f"d{delay}",
         "user": "u", "evaluated": True}
    if file is not None:
        j["input_file"], j["input_size"] = file, size
    return j


# job -> (subtime, file, size, cores, alloc). A = 1 GB (10 s), B = 2 GB (20 s); every job computes 5 s.
SCENARIO = {
    "1": (1, "A", 1 * GB, 1, "0"),        # n000: miss, staging 1-11, runs 11-16
    "2": (2, "A", 1 * GB, 1, "1"),        # n000: A is loading, waits for that staging: runs 11-16
    "3": (3, "A", 1 * GB, 1, "2"),        # n001: miss, staging 3-13, runs 13-18
    "4": (20, "A", 1 * GB, 1, "0"),       # n000: A kept since 16 (no start since, paper model): hit, 20-25
    "5": (30, "B", 2 * GB, 1, "0"),       # n000: miss, staging 30-50 (its start evicts A), runs 50-55
    "6": (60, "A", 1 * GB, 1, "1"),       # n000: A was evicted: miss, 60-70, runs 70-75 (evicts B)
    "7": (61, None, None, 1, "3"),        # n001: no file, runs at once 61-66 (evicts A there)
    "8": (80, "B", 2 * GB, 4, "0-3"),      # both nodes, B on neither: two stagings 80-100, runs 100-105
}


def test_hits_start_at_once_and_misses_one_staging_later(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB))
    jobs = [job(int(k), s, f, z, res) for k, (s, f, z, res, _) in SCENARIO.items()]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": {"d5": {"type": "delay", "delay": 5}}})
    sched = Scripted({k: v[4] for k, v in SCENARIO.items()}, calls=[7])
    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, sched)
    assert engine.returncode == 0, engine.stderr
    assert rc == 0, err

    out = {(r["workload_name"], r["job_id"]): r for r in rows(prefix + "_jobs.csv")}
    starts = {k: float(out[("w0", k)]["starting_time"]) for k in SCENARIO}
    assert starts == {"1": 11.0, "2": 11.0, "3": 13.0, "4": 20.0, "5": 50.0, "6": 70.0, "7": 61.0, "8": 100.0}
    stagings = {k: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
                for (w, k), r in out.items() if w == "batloc-stage"}
    assert stagings == {
        "stage-w0-1-n000": (1.0, 11.0, "4-5"), "stage-w0-3-n001": (3.0, 13.0, "4 6"),
        "stage-w0-5-n000": (30.0, 50.0, "4-5"), "stage-w0-6-n000": (60.0, 70.0, "4-5"),
        "stage-w0-8-n000": (80.0, 100.0, "4-5"), "stage-w0-8-n001": (80.0, 100.0, "4 6"),
    }
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in out.values())

    # The wrapped scheduler never saw a staging job, nor an instant where only stagings ended
    # (11, 13, 50, 70, 100); its clock never went back; its own call came at 7. At 80 Batsim's submitter
    # sends job 8, then its bye once the server took that message (job_submitter.cpp): the end of static
    # submissions comes in a second message at 80. At 105 job 8 ends and the proxy ends the registration,
    # but Batsim ends the simulation only when no waiter is left (server.cpp is_simulation_finished): the
    # proxy's window-end calls, asked where a job waited for its file (executed at 1, 2, 3, 30, 60, 80 +
    # walltime 100), come at 101, 102, 103, 130, 160, 180, unseen by the wrapped scheduler, and
    # SIMULATION_ENDS with the last one. (Under --instant: one message at 80, SIMULATION_ENDS at 105.)
    nows = [m["now"] for m in sched.seen]
    assert nows == [0, 1, 2, 3, 7, 16, 18, 20, 25, 30, 55, 60, 61, 66, 75, 80, 80, 105, 180]
    assert sched.seen[-1]["events"][0]["type"] == "SIMULATION_ENDS"
    seen = [e for m in sched.seen for e in m["events"]]
    assert not any("batloc-stage" in json.dumps(e) for e in seen)
    assert [m["now"] for m in sched.seen if any(e["type"] == "REQUESTED_CALL" for e in m["events"])] == [7]
    begins = sched.seen[0]["events"][0]["data"]
    assert begins["config"]["dynamic-jobs-enabled"] is False

    dec = rows(prefix + "_decisions.csv")
    assert list(dec[0]) == ["time", "job_id", "policy", "node", "alloc", "cores", "planned_start",
                            "input_file", "input_size", "cache", "staging_job", "score"]
    got = [(d["job_id"], d["node"], d["cache"], d["staging_job"], float(d["time"]), float(d["planned_start"]))
           for d in dec]
    assert got == [
        ("w0!1", "n000", "miss", "batloc-stage!stage-w0-1-n000", 1.0, 11.0),
        ("w0!2", "n000", "wait", "batloc-stage!stage-w0-1-n000", 2.0, 11.0),
        ("w0!3", "n001", "miss", "batloc-stage!stage-w0-3-n001", 3.0, 13.0),
        ("w0!4", "n000", "hit", "", 20.0, 20.0),
        ("w0!5", "n000", "miss", "batloc-stage!stage-w0-5-n000", 30.0, 50.0),
        ("w0!6", "n000", "miss", "batloc-stage!stage-w0-6-n000", 60.0, 70.0),
        ("w0!7", "n001", "none", "", 61.0, 61.0),
        ("w0!8", "n000", "miss", "batloc-stage!stage-w0-8-n000", 80.0, 100.0),
        ("w0!8", "n001", "miss", "batloc-stage!stage-w0-8-n001", 80.0, 100.0),
    ]
    assert all(d["policy"] == "proxy" and d["score"] == "" for d in dec)


def test_lru_keeps_a_file_that_paper_evicts(tmp_path):
    # Jobs 5-6 of the scenario under LRU with room for both files: A survives B's load, so job 6 hits.
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB))
    keep = {k: SCENARIO[k] for k in ("1", "5", "6")}
    jobs = [job(int(k), s, f, z, res) for k, (s, f, z, res, _) in keep.items()]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": {"d5": {"type": "delay", "delay": 5}}})
    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, Scripted({k: v[4] for k, v in keep.items()}),
                                             proxy_args=["--cache", "lru"])
    assert engine.returncode == 0 and rc == 0, engine.stderr + err
    starts = {r["job_id"]: float(r["starting_time"]) for r in rows(prefix + "_jobs.csv")}
    # 1: staging 1-11, runs 11-16; 5: B misses, 30-50, runs 50-55; 6: A still in memory: starts at 60
    assert starts == {"stage-w0-1-n000": 1.0, "1": 11.0, "stage-w0-5-n000": 30.0, "5": 50.0, "6": 60.0}


def test_wrapped_scheduler_crash_ends_the_simulation(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [job(1, 1, "A", GB), job(2, 5, "A", GB)],
                                    "profiles": {"d5": {"type": "delay", "delay": 5}}})
    sched = Scripted({"1": "0", "2": "1"})
    # answers SIMULATION_BEGINS and the submission at t=1, then vanishes
    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, sched, stop_after=2)
    assert rc == 1
    assert "wrapped scheduler disconnected" in err and "simulated time 5.000000" in err, err
    assert engine.returncode != 0
    assert "batloc-stage-proxy: the wrapped scheduler disconnected" in engine.stderr


CRASHER = """
import json, sys, zmq
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[sys.argv.index("-s") + 1])
msg = json.loads(sock.recv())
sock.send(json.dumps({"now": msg["now"], "events": []}).encode())
sock.recv()
sys.exit(3)
"""


def test_started_scheduler_that_exits_is_reported_with_its_status(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [job(1, 1, "A", GB)],
                                    "profiles": {"d5": {"type": "delay", "delay": 5}}})
    script = write(tmp_path, "crash.py", CRASHER)
    port = free_port()
    proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{port}", "--", sys.executable, script],
                             stderr=subprocess.PIPE, text=True)
    engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                      "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs"],
                            capture_output=True, text=True, timeout=60)
    _, err = proxy.communicate(timeout=30)
    assert proxy.returncode == 1
    assert "the wrapped scheduler exited (status 3) at simulated time 1.000000" in err, err
    assert engine.returncode != 0 and "wrapped scheduler exited" in engine.stderr


LEAVES_A_HELPER = """
import json, subprocess, sys, zmq
helper = subprocess.Popen(["sleep", "300"])     # in the group the proxy gave this scheduler
open(sys.argv[1], "w").write(str(helper.pid))
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[sys.argv.index("-s") + 1])
while True:
    msg = json.loads(sock.recv())
    out = [{"timestamp": msg["now"], "type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": "0"}}
           for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
    sock.send(json.dumps({"now": msg["now"], "events": out}).encode())
    if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
        sys.exit(0)                              # the helper is left behind
"""


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_started_schedulers_whole_group_is_stopped_even_after_it_exited(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [job(1, 1, "A", GB)],
                                    "profiles": {"d5": {"type": "delay", "delay": 5}}})
    script, pid_file = write(tmp_path, "sched.py", LEAVES_A_HELPER), tmp_path / "helper.pid"
    port = free_port()
    proxy = subprocess.Popen(PROXY + ["-q", "--bind", f"tcp://127.0.0.1:{port}", "--", sys.executable, script,
                                      str(pid_file)], stderr=subprocess.PIPE, text=True)
    engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                      "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs"],
                            capture_output=True, text=True, timeout=60)
    _, err = proxy.communicate(timeout=30)
    assert engine.returncode == 0 and proxy.returncode == 0, engine.stderr + err
    assert {r["job_id"]: r["starting_time"] for r in rows(tmp_path / "out_jobs.csv")} == {
        "stage-w0-1-n000": "1.000000", "1": "11.000000"}
    assert not running(int(pid_file.read_text()))


def test_port_in_use_and_engine_without_dynamic_jobs(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        res = subprocess.run(PROXY + ["--bind", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True,
                             timeout=30)
    finally:
        taken.close()
    assert res.returncode == 1 and "address already in use" in res.stderr

    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "jobs": [job(1, 1, "A", GB)],
                                    "profiles": {"d5": {"type": "delay", "delay": 5}}})
    p_engine, p_sched = free_port(), free_port()
    proxy = subprocess.Popen(PROXY + ["--bind", f"tcp://127.0.0.1:{p_engine}", "--connect",
                                      f"tcp://127.0.0.1:{p_sched}"], stderr=subprocess.PIPE, text=True)
    engine = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                      "-s", f"tcp://127.0.0.1:{p_engine}"], capture_output=True, text=True,
                            timeout=60)
    _, err = proxy.communicate(timeout=30)
    assert proxy.returncode == 1 and "--enable-dynamic-jobs" in err
    assert engine.returncode != 0 and "--enable-dynamic-jobs" in engine.stderr


def test_a_file_larger_than_every_node_memory_is_rejected_with_its_id(tmp_path):
    # 1.5 GB per node: A (1 GB) loads, B (2 GB) fits nowhere. The wrapped scheduler never sees job 2.
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB, memory=1.5 * GB))
    jobs = [job(1, 1, "A", 1 * GB), job(2, 2, "B", 2 * GB), job(3, 3)]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": {"d5": {"type": "delay", "delay": 5}}})
    sched = Scripted({"1": "0", "2": "1", "3": "1"})
    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, sched)
    assert engine.returncode == 0 and rc == 0, engine.stderr + err
    assert "job w0!2 rejected: its file B (2e+09 bytes) exceeds the memory of every node (largest 1.5e+09 bytes)" in err
    out = {r["job_id"]: r for r in rows(prefix + "_jobs.csv")}
    assert out["2"]["final_state"] == "REJECTED" and "stage-w0-2-n000" not in out
    assert (out["1"]["starting_time"], out["3"]["starting_time"]) == ("11.000000", "3.000000")
    assert not any("w0!2" in json.dumps(m) for m in sched.seen)


def test_a_job_placed_on_a_node_too_small_for_its_file_is_rejected_and_its_cores_freed(tmp_path):
    # n000 holds 128 GB, n001 only 1.5 GB; the file-unaware scheduler puts job 1 (2 GB file) on n001.
    xml = platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB)
    small = xml.replace('<prop id="memory_bytes" value="128000000000"/>', '<prop id="memory_bytes" value="1500000000"/>')
    small = xml[:xml.index('id="n001_mem"')] + small[small.index('id="n001_mem"'):]
    platform = write(tmp_path, "p.xml", small)
    jobs = [job(1, 1, "B", 2 * GB), job(2, 2, "B", 2 * GB)]
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": jobs, "profiles": {"d5": {"type": "delay", "delay": 5}}})
    sched = Scripted({"1": "2", "2": "2"})      # core 2 is n001's
    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, sched)
    assert engine.returncode == 0 and rc == 0, engine.stderr + err
    assert ("job w0!1 rejected: the scheduler placed it on node n001, whose memory (1.5e+09 bytes) cannot hold "
            "its file B (2e+09 bytes)") in err
    out = {r["job_id"]: r for r in rows(prefix + "_jobs.csv")}
    assert out["1"]["final_state"] == "REJECTED" and out["2"]["final_state"] == "REJECTED"
    # the proxy tells the scheduler that job 1 failed on its own call, asked for 1 µs after t=1 (a call for
    # now is refused, as by Batsim); Batsim's waiter sleeps 10 µs at least (jobs_execution.cpp), so it comes
    # at 1.00001 (1.000001 under --instant), and the scheduler could place job 2 on the same core at t=2
    failed = [(m["now"], e["data"]["job_id"], e["data"]["job_state"]) for m in sched.seen for e in m["events"]
              if e["type"] == "JOB_COMPLETED"]
    assert failed == [(1.00001, "w0!1", "COMPLETED_FAILED"), (2.00001, "w0!2", "COMPLETED_FAILED")]
    assert not [r for r in out.values() if r["workload_name"] == "batloc-stage"]


def test_oversized_allocation_from_the_wrapped_scheduler_is_refused_not_expanded(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2, bandwidth=0.1 * GB))
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [job(1, 1, "A", GB)],
                                    "profiles": {"d5": {"type": "delay", "delay": 5}}})
    def sched(msg):   # not Scripted: it would expand the range itself
        return [{"type": "EXECUTE_JOB", "data": {"job_id": e["data"]["job_id"], "alloc": "0-2000000000"}}
                for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]

    engine, rc, err, prefix = run_with_proxy(tmp_path, platform, wl, sched)
    assert "Traceback" not in err + engine.stderr
    assert engine.returncode == 1 and "resource 2000000000 does not exist" in engine.stderr, engine.stderr
