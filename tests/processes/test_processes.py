"""batloc.processes: ports, host-wide CPU leases, process-group stops, finding pybatsim."""

import importlib.util
import os
import socket
import subprocess
import sys
import time

import pytest

from batloc import processes


def test_a_free_port_can_be_bound_on_loopback():
    port = processes.free_port()
    with socket.socket() as s:
        s.bind((processes.LOOPBACK, port))


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs")
def test_leases_spread_over_cpus_and_are_host_wide(tmp_path, monkeypatch):
    monkeypatch.delenv("BATLOC_NO_PIN", raising=False)
    a, b = processes.CpuLeases(str(tmp_path)), processes.CpuLeases(str(tmp_path))
    cpus = a.cpus[:2]
    a.cpus = b.cpus = cpus
    first = a.take()
    # Another owner (another robin, a Dask worker) sharing the lease folder gets the other CPU.
    second = b.take()
    assert {first, second} == set(cpus)
    # Both CPUs leased once: the next lease doubles up on the first, lowest CPU first.
    assert a.take() == cpus[0]
    a.give_back(first)
    a.give_back(cpus[0])
    assert b.take() == cpus[0]          # given back: free again for anyone


def test_a_lease_file_held_by_another_process_is_respected(tmp_path):
    leases = processes.CpuLeases(str(tmp_path))
    if not leases.enabled or not leases.cpus:
        pytest.skip("no CPU pinning here")
    cpu = leases.cpus[0]
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from batloc import processes\n"
        f"l = processes.CpuLeases({str(tmp_path)!r}); l.cpus = [{cpu}]; print(l.take(), flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == str(cpu)
        leases.cpus = [cpu]
        assert leases.take() == cpu
        (fd,) = leases.held[cpu]
        assert os.readlink(f"/proc/self/fd/{fd}").endswith(f"cpu{cpu}.1")   # rank 0 is the other process's
    finally:
        holder.kill()
        holder.wait()
    # Its process gone, its lease went with it: rank 0 is free again.
    fresh = processes.CpuLeases(str(tmp_path))
    fresh.cpus = [cpu]
    fresh.take()
    assert os.readlink(f"/proc/self/fd/{fresh.held[cpu][0]}").endswith(f"cpu{cpu}.0")


def test_pin_to_gives_a_preexec_function_only_for_a_cpu():
    assert processes.pin_to(None) is None
    assert callable(processes.pin_to(0))


def test_stop_group_ends_the_leader_and_its_grandchildren():
    proc = subprocess.Popen(["bash", "-c", "sleep 60 & sleep 60 & wait"], start_new_session=True)
    time.sleep(0.3)
    assert processes.group_alive(proc.pid)
    processes.stop_group(proc, grace=2.0)
    assert proc.returncode is not None and not processes.group_alive(proc.pid)


def test_stop_tagged_ends_what_left_the_group_and_only_that():
    # a daemon that setsid'ed out of a scheduler's group outlived robin and the proxy (the probe)
    tag, env = processes.tagged_environment()
    other_tag, other_env = processes.tagged_environment()
    assert tag != other_tag
    marker = f"{600 + time.monotonic() % 1:.9f}"
    leader = subprocess.Popen(["bash", "-c", f"setsid sleep {marker} < /dev/null > /dev/null 2>&1 & exit 0"],
                              env=env, start_new_session=True)
    leader.wait()
    # Wait for the daemon out of the group (a group stop before its setsid would end it) before the other
    # tag's process starts: with the same command line, that one would end the wait early (as it did in CI).
    deadline = time.monotonic() + 10
    while f"sleep {marker}" not in _commands() and time.monotonic() < deadline:
        time.sleep(0.05)
    other = subprocess.Popen(["sleep", marker], env=other_env)
    processes.stop_group(leader, 0.5)
    ended = processes.stop_tagged(tag, 0.5)
    assert ended == [f"sleep {marker}"]
    assert other.poll() is None   # another tag's process is left alone
    other.kill()
    other.wait()
    assert not any(marker in line for line in _commands())


def _commands():
    out = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
                if stat != "Z":
                    out.append(f.read().replace(b"\0", b" ").decode(errors="replace").strip())
        except (OSError, IndexError):
            continue
    return out


def test_a_missing_pybatsim_is_one_line_saying_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "batsim" else real(name, *a))
    line = processes.pybatsim_missing()
    assert "\n" not in line and "pip install --no-deps pybatsim==3.2.1" in line


def test_pybatsim_runs_under_this_python(monkeypatch, tmp_path):
    # The script beside this Python first; else this Python's launcher module, never another
    # environment's `pybatsim` found first on PATH (it would import another batloc).
    other = tmp_path / "bin"
    other.mkdir()
    (other / "pybatsim").write_text("#!/bin/sh\n")
    (other / "pybatsim").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    fake_python = tmp_path / "venv" / "bin" / "python3"
    fake_python.parent.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(fake_python))
    if importlib.util.find_spec("batsim") is not None:
        assert processes.pybatsim_command() == [str(fake_python), "-m", "batsim.cmds.launcher"]
    (fake_python.parent / "pybatsim").write_text("#!/bin/sh\n")
    assert processes.pybatsim_command() == [str(fake_python.parent / "pybatsim")]
