"""The pybatsim side at its boundaries: bad options, a bad platform, an oversized file, an engine gone or slow.

Through the real `pybatsim` command (as robin and the benchmarks start it)
and the embedded engine wherever the behaviour is a process's: its exit
status, its one line on stderr, the engine's jobs.csv. Platform: n000 and
n001, 2 cores each (cores 0-3, then lustre 4, n000_mem 5, n001_mem 6).
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.processes import free_port, pybatsim_command
from batloc.schedulers.cons_tabu import Cons_tabu
from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.io_list import Io_list
from batloc.schedulers.io_pack import Io_pack
from batloc.schedulers.jdp_dll import Jdp_dll
from batloc.schedulers.lea import Lea
from batloc.schedulers.met import Met
from batloc.schedulers.online_hps import Online_hps
from batloc.schedulers.sa import Sa
from engine_harness import platform_xml
from policy_run import simulate

REPO = Path(__file__).resolve().parents[2]
GB = 1e9
engine_needed = pytest.mark.needs_engine


def scheduler(policy, port, options, *extra):
    return [*pybatsim_command(), str(REPO / "schedulers" / f"{policy}.py"), "-s", f"tcp://127.0.0.1:{port}",
            "-o", options, *extra]


# ---- options ---------------------------------------------------------------------------------

@pytest.mark.needs_engine
def test_an_option_error_is_one_line_and_status_2_in_every_family():
    cases = {
        ("lea", '{"W": NaN}'): "LEA: option 'W' must be a finite number >= 0, got nan",
        ("jdp_dll", '{"threshold": Infinity}'): "JDP+DLL: option 'threshold' must be an integer >= 1, got inf",
        ("cons_tabu", '{"tabu_period": -Infinity}'):
            "cons_tabu: option 'tabu_period' must be a finite number > 0, got -inf",
        ("fcfs", "[1, 2]"): """the -o options must be a JSON object such as '{"cache": "lru"}', got [1, 2]""",
    }
    procs = {case: subprocess.Popen(scheduler(case[0], free_port(), case[1]), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for case in cases}
    for case, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, err, out) == (2, f"batloc scheduler: {cases[case]}\n", ""), case


NON_FINITE = [math.nan, math.inf, -math.inf]
NUMERIC_OPTIONS = [
    (Lea, "W"), (Lea, "saturation"), (Lea, "scheduling_period"), (Lea, "bandwidth"), (Lea, "queue_depth"),
    (Sa, "l"), (Sa, "h"), (Met, "bandwidth"), (Online_hps, "epsilon"), (Jdp_dll, "threshold"),
    (Io_list, "bandwidth"), (Io_pack, "seed"),
    (Cons_tabu, "tabu_period"), (Cons_tabu, "iterations_per_job"), (Cons_tabu, "fairness_weight"),
    (Cons_tabu, "seed"),
]


@pytest.mark.parametrize("value", NON_FINITE, ids=repr)
@pytest.mark.parametrize("cls, name", NUMERIC_OPTIONS, ids=lambda x: getattr(x, "__name__", x))
def test_nan_and_infinities_are_refused_in_every_numeric_option(capsys, cls, name, value):
    # the constructor is what pybatsim's launcher calls with the decoded -o JSON
    with pytest.raises(SystemExit) as exit_:
        cls(json.loads(json.dumps({name: value})))
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and err.startswith("batloc scheduler: "), err
    assert f"option '{name}' must be " in err and err.endswith(f", got {value!r}\n"), err


def test_finite_values_of_the_same_options_are_accepted():
    assert Lea({"W": 10, "saturation": 0.5, "bandwidth": 1e9, "queue_depth": 3}).opts.W == 10
    assert Sa({"l": 0.1, "h": 0.9}).opts.h == 0.9
    assert Cons_tabu({"tabu_period": 60.0, "seed": 4}).opts.seed == 4


# ---- the platform ----------------------------------------------------------------------------

@pytest.mark.parametrize("prop, text", [("memory_bytes", "NaN"), ("memory_bytes", "inf"), ("memory_bytes", "0"),
                                        ("bandwidth", "-1e9"), ("bandwidth", "Infinity"), ("bandwidth", "fast")])
def test_node_memory_and_bandwidth_must_be_finite_and_positive(prop, text):
    compute, storage = make_resources({"n000": 2, "n001": 2})
    storage[2]["properties"][prop] = text          # n001_mem
    with pytest.raises(PlatformError) as error:
        PlatformView.from_resources(compute, storage)
    assert str(error.value) == f"host 'n001_mem': property {prop} must be a finite number > 0, got {text!r}"


CONTRACT_HINT = ("the batloc contract (docs/contract.md §1 and §6) expects, for every node nNNN, cores with property "
                 "node=nNNN and one storage host named 'nNNN_mem' (role=storage) with properties node, memory_bytes "
                 "and bandwidth (bytes/s), plus a storage host named 'lustre' (`batloc platform annotate` adds them "
                 "to a copy of a Batsim platform)")


def without_memories(xml):
    # renamed, not removed: the host is the node zone's gateway, and a platform without a route from the
    # master to the node is one SimGrid itself aborts on (Batsim's messages take that route)
    return xml.replace('"n000_mem"', '"n000_disk"')


def without_memory_sizes(xml):
    return re.sub(r'<prop id="memory_bytes" value="\d+"/>', "", xml)


@engine_needed
@pytest.mark.parametrize("policy, edit, problem", [
    ("lea", without_memories, "the platform has no node memory storage ('<node>_mem')"),
    # the file-sharing family (MET, JDP-DLL, Online-HPS) used to die with a PlatformError traceback over
    # SIMULATION_BEGINS, and the engine to wait for its reply timeout before blaming the port
    *[(policy, without_memory_sizes, "storage 'n000_mem' lacks a numeric 'memory_bytes'")
      for policy in ("lea", "met", "jdp_dll", "online_hps")],
])
def test_a_platform_a_scheduler_cannot_use_is_one_line_in_every_family(tmp_path, policy, edit, problem):
    (tmp_path / "p.xml").write_text(edit(platform_xml(nodes=1, cores=2)))
    jobs = [{"id": 1, "subtime": 1, "res": 1, "walltime": 10, "profile": "d"}]
    out = simulate(tmp_path, policy, tmp_path / "p.xml", delay_workload(jobs), check=False)
    lines = [line for line in out.sched_out.splitlines() if line.startswith("batloc scheduler")]
    assert lines == [f"batloc scheduler: {problem}; {CONTRACT_HINT}"]
    assert "Traceback" not in out.sched_out
    # it decides nothing more: the job is rejected and the simulation ends (real Batsim would wait for
    # ever for a scheduler that left), then the scheduler exits with status 2
    assert out.engine.returncode == 0 and out.sched_status == 2
    assert [r["final_state"] for r in out.rows.values()] == ["REJECTED"]


@engine_needed
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("policy, decisions, reason", [
    ("fcfs", "/dev/full", "No space left on device"),     # a full disk, in the planning family
    ("met", "/dev/full", "No space left on device"),      # and in the file-sharing family
    ("met", "/nonexistent/d.csv", "No such file or directory"),
])
def test_a_decision_log_that_cannot_be_written_is_one_line(tmp_path, policy, decisions, reason):
    (tmp_path / "p.xml").write_text(platform_xml(nodes=2, cores=2))
    jobs = [file_job(i, 1 + i, f"F{i}", 1e6) for i in range(1, 301)]   # past the file's 8 KiB buffer
    out = simulate(tmp_path, policy, tmp_path / "p.xml", delay_workload(jobs), options={"decisions": decisions},
                   check=False)
    lines = [line for line in out.sched_out.splitlines() if line.startswith("batloc scheduler")]
    assert lines == [f"batloc scheduler: error: cannot write the decision log {decisions}: {reason}"]
    assert "Traceback" not in out.sched_out
    assert out.engine.returncode == 1 and "died or crashed" in out.engine.stderr


# ---- a file larger than every node's memory ----------------------------------------------------

def delay_workload(jobs):
    return {"jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 5}}}


def file_job(i, t, file, size):
    return {"id": i, "subtime": t, "res": 1, "walltime": 10, "profile": "d", "input_file": file, "input_size": size}


@engine_needed
def test_a_file_larger_than_every_node_memory_is_rejected_at_submission(tmp_path):
    # 1.5 GB per node, 1 GB/s: A (1 GB) loads in 1 s; B (2 GB) fits nowhere.
    (tmp_path / "p.xml").write_text(platform_xml(nodes=2, cores=2, bandwidth=GB, memory=1.5 * GB))
    jobs = [file_job(1, 1, "A", 1 * GB), file_job(2, 2, "B", 2 * GB), file_job(3, 3, "A", 1 * GB)]
    out = simulate(tmp_path, "lea", tmp_path / "p.xml", delay_workload(jobs))
    warnings = [line for line in out.sched_out.splitlines() if line.startswith("batloc scheduler")]
    assert warnings == ["batloc scheduler: warning: job w0!2 rejected: its file B (2e+09 bytes) exceeds the "
                        "memory of every node (largest 1.5e+09 bytes)"]
    rows = out.rows
    assert rows["2"]["final_state"] == "REJECTED" and rows["2"]["starting_time"] == ""
    # job 1 waits for its load (1-2 s), job 3 finds A in n000's memory
    assert (rows["1"]["starting_time"], rows["3"]["starting_time"]) == ("2.000000", "3.000000")
    assert not any(k.startswith("stage-w0-2") for k in rows)


def test_a_file_sharing_policy_rejects_it_too(capsys):
    compute, storage = make_resources({"n000": 2}, memory_bytes=1.5 * GB, bandwidth=GB)
    run = DryRun(Met({}), compute, storage, delay_workload([file_job(7, 1, "B", 2 * GB), file_job(8, 1, "A", GB)]))
    run.run()
    assert run.rejected == ["w0!7"] and "w0!8" in run.results
    assert "job w0!7 rejected: its file B (2e+09 bytes) exceeds the memory of every node" in capsys.readouterr().err


# ---- the engine gone, or only slow -----------------------------------------------------------

def start_run(tmp_path, jobs, sched_extra=()):
    """pybatsim's LEA and the engine on one 1-core node; returns (scheduler, engine, prefix) once the
    simulation has begun (the scheduler opened its decision log on SIMULATION_BEGINS)."""
    (tmp_path / "p.xml").write_text(platform_xml(nodes=1, cores=1, bandwidth=GB))
    (tmp_path / "w.json").write_text(json.dumps(delay_workload(jobs)))
    prefix = str(tmp_path / "out")
    port = free_port()
    sched = subprocess.Popen(scheduler("lea", port, json.dumps({"export_prefix": prefix}), *sched_extra),
                             stdout=subprocess.DEVNULL, stderr=open(tmp_path / "sched.err", "w"))
    engine = subprocess.Popen([sys.executable, "-m", "batloc.engine", "-p", str(tmp_path / "p.xml"),
                               "-w", str(tmp_path / "w.json"), "-e", prefix, "-s", f"tcp://127.0.0.1:{port}",
                               "--enable-dynamic-jobs", "-q"], stdout=subprocess.DEVNULL, stderr=open(tmp_path / "engine.err", "w"))
    deadline = time.monotonic() + 60
    while not os.path.exists(prefix + "_decisions.csv"):
        assert sched.poll() is None and engine.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    return sched, engine, prefix


def wait_or_kill(proc, timeout):
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running after {timeout} s")


@engine_needed
def test_the_scheduler_exits_when_the_engine_is_killed(tmp_path):
    # 500 jobs one after the other: the run is far from its end when the engine dies. pybatsim's
    # receive timeout at 0.5 s (2 s by default): the scheduler looks at the socket that often.
    sched, engine, _ = start_run(tmp_path, [file_job(i, 1, "A", 1e6) for i in range(1, 501)], ("-t", "500"))
    engine.kill()
    engine.wait()
    assert wait_or_kill(sched, 20) == 1
    err = (tmp_path / "sched.err").read_text()
    assert "Traceback" not in err
    assert re.fullmatch(r"batloc scheduler: the engine at tcp://127\.0\.0\.1:\d+ went away at simulated time "
                        r"\d+\.\d{6}: its connection closed before the simulation ended \(killed\? see its output\)",
                        err.strip().splitlines()[-1]), err[-500:]


@engine_needed
def test_a_silent_engine_that_is_alive_is_waited_for(tmp_path):
    # pybatsim's receive timeout at 0.2 s: the stopped engine is silent for several of them. 500 jobs one
    # after the other: the run is far from its end when the engine stops (two jobs could end before the signal)
    sched, engine, prefix = start_run(tmp_path, [file_job(i, 1, "A", 1e6) for i in range(1, 501)], ("-t", "200"))
    engine.send_signal(signal.SIGSTOP)
    time.sleep(1.5)
    assert sched.poll() is None
    engine.send_signal(signal.SIGCONT)
    assert wait_or_kill(engine, 30) == 0 and wait_or_kill(sched, 30) == 0
    with open(prefix + "_jobs.csv") as f:
        finals = [line.split(",")[7] for line in f.read().splitlines()[1:]]
    assert finals.count("COMPLETED_SUCCESSFULLY") == 501    # 500 jobs and the staging of A
