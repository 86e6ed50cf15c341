"""Run the embedded engine (a subprocess) against a scripted decision process (a thread here).

Tests write the scheduler's behaviour as a function from one engine message to
the list of events to answer, and get back every message the engine sent and
the output files, so they can check simulated times exactly.
"""

import json
import os
import subprocess
import sys
import threading

import zmq

from batloc.outputs import read_rows
from batloc.platforms.generator import PlatformSpec, render
from batloc.platforms.units import parse_duration

ENGINE = [sys.executable, "-m", "batloc.engine"]


def platform_xml(nodes=2, cores=2, bandwidth=1e8, sharing="FATPIPE", latency="0s", memory=128e9):
    """A contract-shaped platform (contract §1, §6) small enough to reason about by hand."""
    spec = PlatformSpec(memory_mix=((nodes, memory),), cores=cores, node_bandwidth=bandwidth,
                        latency=parse_duration(latency), sharing=sharing)
    return render(spec)


def write(tmp_path, name, content):
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


class Result:
    def __init__(self, proc, messages, prefix):
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        self.messages = messages
        self.prefix = prefix

    def events(self, etype=None):
        """(now, event) for every event the engine sent, optionally of one type."""
        return [(m["now"], e) for m in self.messages for e in m["events"] if etype in (None, e["type"])]

    def jobs(self):
        return {r["job_id"]: r for r in self.jobs_rows()}

    def jobs_rows(self):
        return read_rows(self.prefix + "_jobs.csv")[1]

    def file(self, suffix):
        with open(self.prefix + suffix) as f:
            return f.read()


def serve(scheduler, endpoint, messages=None, timeout=60, stop_after=None):
    """Answer the engine with `scheduler(msg) -> events` on a REP socket, in a thread.

    Binds `endpoint` ("tcp://127.0.0.1" alone picks a free port); returns (thread, port).
    Records every message in `messages`; after `stop_after` messages it closes without answering
    (a crashed scheduler).
    """
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    if endpoint.count(":") == 1:
        port = sock.bind_to_random_port(endpoint)
    else:
        sock.bind(endpoint)
        port = int(endpoint.rsplit(":", 1)[1])

    def loop():
        try:
            n = 0
            while sock.poll(timeout * 1000):
                msg = json.loads(sock.recv())
                n += 1
                if stop_after is not None and n > stop_after:
                    return
                if messages is not None:
                    messages.append(msg)
                events = scheduler(msg) or []
                for e in events:
                    e.setdefault("timestamp", msg["now"])
                sock.send(json.dumps({"now": msg["now"], "events": events}).encode())
                if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                    return
        finally:
            sock.close(0)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread, port


def run(tmp_path, platform, workloads, scheduler, args=(), timeout=60, prefix_name="out"):
    """Run the engine on `platform` and `workloads` (paths), answering with `scheduler(msg) -> events`."""
    messages = []
    thread, port = serve(scheduler, "tcp://127.0.0.1", messages, timeout)
    prefix = os.path.join(str(tmp_path), prefix_name)
    cmd = ENGINE + ["-p", platform, "-e", prefix, "-s", f"tcp://127.0.0.1:{port}", "-q"]
    for w in workloads:
        cmd += ["-w", w]
    proc = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=timeout)
    thread.join(5)
    return Result(proc, messages, prefix)


class Fifo:
    """The simplest decision process: start each job on the lowest free compute ids, in order."""

    def __init__(self, dynamic=False):
        self.free = None
        self.queue = []
        self.alloc = {}
        self.dynamic = dynamic
        self.static_done = False

    def __call__(self, msg):
        out = []
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "SIMULATION_BEGINS":
                self.free = sorted(r["id"] for r in d["compute_resources"])
            elif t == "JOB_SUBMITTED":
                self.queue.append((d["job_id"], d["job"]["res"]))
            elif t == "JOB_COMPLETED":
                self.free = sorted(self.free + self.alloc.pop(d["job_id"]))
            elif t == "NOTIFY" and d["type"] == "no_more_static_job_to_submit":
                self.static_done = True
        while self.queue and self.queue[0][1] <= len(self.free):
            job_id, res = self.queue.pop(0)
            ids, self.free = self.free[:res], self.free[res:]
            self.alloc[job_id] = ids
            out.append({"type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": " ".join(map(str, ids))}})
        if self.dynamic and self.static_done and not self.queue and not self.alloc:
            out.append({"type": "NOTIFY", "data": {"type": "registration_finished"}})
        return out


def run_pybatsim(folder, platform, workload, scheduler, prefix):
    """The engine against a pybatsim scheduler (a stock name or a file) over
    ZeroMQ on loopback, the scheduler started in ``folder`` (stock schedulers
    write out_events.csv in their cwd) and logging to folder/sched.log (a
    file, not a pipe: pybatsim logs a lot); returns (the engine's
    CompletedProcess, the scheduler's return code)."""
    from batloc.processes import free_port, pybatsim_command

    port = free_port()
    with open(os.path.join(folder, "sched.log"), "w") as log:
        # The `pybatsim` script, not `python -m`: from the repository root, -m would put the
        # checkout's own schedulers/ folder in front of pybatsim's package of the same name.
        sched = subprocess.Popen([*pybatsim_command(), scheduler, "-v", "warning", "-s", f"tcp://127.0.0.1:{port}"],
                                 stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    try:
        proc = subprocess.run(ENGINE + ["-p", str(platform), "-w", str(workload), "-e", str(prefix), "-q",
                                        "-s", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
        sched.wait(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
    return proc, sched.returncode
