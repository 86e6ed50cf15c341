"""Run one Batsim simulation: two process groups, timeouts, logs, clean teardown.

Timeline of one run (batexpe robin's semantics, re-implemented):
1. ready: wait up to `ready-timeout` for the socket's TCP port to be free;
2. start the scheduler, and wait up to `ready-timeout` for it to listen on
   the port (in Batsim 4 the scheduler binds and Batsim connects, so a
   scheduler that never opens its socket is caught here, without waiting
   for the whole simulation-timeout);
3. start Batsim; from then on the pair has `simulation-timeout`;
4. when one process ends, the other has `success-timeout` if the first
   succeeded, `failure-timeout` otherwise;
5. anything still alive is stopped: its whole process group gets SIGTERM,
   then SIGKILL, so no grandchild survives (pybatsim under bash, …); then
   every process that left the group (setsid, a daemon's double fork) but
   still carries the command's tag in its environment (`processes.TAG`).
A signal to robin (`STOP`) ends every step at once: the run stops its groups
and returns, within the kill grace, whatever its timeouts.
Exit status: 0 iff both processes returned 0 within their timeouts.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from batloc.processes import POLL, CpuLeases, pin_to, signals_to, stop_group, stop_tagged, tagged_environment

from .guard import GUARD

KILL_GRACE = 2.0


CPUS = CpuLeases()


class Stop:
    """Set from robin's signal handler: every run in progress stops its process groups and returns."""

    def __init__(self):
        self._event = threading.Event()
        self.signum = None

    def set(self, signum: int) -> None:
        self.signum = signum
        self._event.set()

    def clear(self) -> None:
        self.signum = None
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}" if self.signum else "stopped"


STOP = Stop()


@contextmanager
def stopping_on_signals():
    """While inside, SIGINT, SIGTERM and SIGHUP set `STOP` instead of raising.

    Runs in other threads cannot be interrupted by an exception; they watch
    STOP and stop their process groups themselves (children live in their own
    sessions, so a terminal's Ctrl-C never reaches them directly).
    """
    if threading.current_thread() is threading.main_thread():
        STOP.clear()
    with signals_to(STOP.set, stop_signals()):
        yield


def stop_signals():
    """The signals that stop robin: SIGINT, SIGTERM, and SIGHUP (the terminal or ssh session closed) unless robin
    runs under nohup, which ignores it on purpose."""
    hup = (signal.SIGHUP,) if signal.getsignal(signal.SIGHUP) != signal.SIG_IGN else ()
    return (signal.SIGINT, signal.SIGTERM, *hup)


@dataclass
class Timeouts:
    """batexpe robin's defaults (seconds), but for `ready`: batexpe's 10 s is less than a pybatsim scheduler
    takes to import numba and load the planning core on a loaded 2-core machine (30 s measured), and a
    scheduler that dies before listening is seen at once anyway."""

    simulation: float = 604800.0
    ready: float = 120.0
    success: float = 3600.0
    failure: float = 5.0


@dataclass
class Outcome:
    success: bool
    reason: str
    batsim_returncode: int | None = None
    sched_returncode: int | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    logs: dict = field(default_factory=dict)
    validation: dict | None = None    # the validator's verdict (robin.validation), once both succeeded
    cpu_seconds: dict = field(default_factory=dict)   # process name -> user + system CPU, for those that ended

    @property
    def invalid(self) -> bool:
        return self.validation is not None and not self.validation["valid"]

    @property
    def wall_seconds(self) -> float:
        return self.ended_at - self.started_at


def socket_port(batcmd: str) -> int | None:
    """TCP port of Batsim's `-s/--socket-endpoint` (Batsim's default when absent); None for non-TCP endpoints."""
    args = shlex.split(batcmd)
    if "--in-process" in args:
        return None   # the embedded engine runs the scheduler itself: no socket
    endpoint = "tcp://localhost:28000"
    for i, a in enumerate(args):
        if a in ("-s", "--socket-endpoint") and i + 1 < len(args):
            endpoint = args[i + 1]
        elif a.startswith("--socket-endpoint="):
            endpoint = a.split("=", 1)[1]
    if not endpoint.startswith("tcp://"):
        return None
    try:
        return int(endpoint.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None


def listening_ports() -> set[int]:
    """TCP ports in LISTEN state in this network namespace, from /proc (no connection attempt,
    which would disturb a ZeroMQ socket)."""
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "0A":
                        ports.add(int(parts[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


def _write_script(path: Path, command: str) -> Path:
    # A hackable copy of each command, like batexpe robin's cmd/ directory.
    path.write_text(f"#!/usr/bin/env bash\n{command}\n")
    path.chmod(0o755)
    return path


class Child:
    """One command in its own session (hence its own process group)."""

    def __init__(self, name: str, command: str, output_dir: Path, cpu: int | None = None, cwd: Path | None = None):
        self.name = name
        script = _write_script(output_dir / "cmd" / f"{name}.bash", command)
        log_dir = output_dir / "log"
        self.stdout_path = log_dir / f"{name}.stdout"
        self.stderr_path = log_dir / f"{name}.stderr"
        self.tag, env = tagged_environment()
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(["bash", str(script)], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=pin_to(cpu), cwd=cwd, env=env)
        GUARD.register(self.proc.pid)  # its session's id is its pid
        self.cpu_seconds = None

    def poll(self):
        """The exit status once it ended (None before); reaped with wait4, so that the CPU it and the
        command under it used (bash waits for its command) is known: a study's cost is a sum of these."""
        if self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:      # reaped elsewhere (stop_group): no usage to read
                return self.proc.poll()
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds = usage.ru_utime + usage.ru_stime
        return self.proc.returncode

    def stop(self):
        stop_group(self.proc, KILL_GRACE)
        # what left its group (a daemon it forked, setsid) outlived robin until 2026-11: found by its tag
        left = stop_tagged(self.tag, KILL_GRACE)
        if left:
            with open(self.stderr_path, "a") as err:
                err.write(f"robin: ended {len(left)} process(es) the {self.name} command left outside its process "
                          f"group: {'; '.join(left[:3])}\n")
        GUARD.release(self.proc.pid)


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def run_simulation(output_dir, batcmd: str, schedcmd: str | None, timeouts: Timeouts, log=print,
                   stop: Stop = STOP, sched_cwd: Path | None = None) -> Outcome:
    """Run the pair; `stop` ends it early (robin's signal handler, or a Dask sweep's stop request).

    `sched_cwd`: where the scheduler runs (a sweep's: its run folder, so that what it writes
    on its own stays there); None keeps robin's directory, as batexpe does.
    """
    output_dir = Path(output_dir)
    for sub in ("log", "cmd"):
        (output_dir / sub).mkdir(parents=True, exist_ok=True)
    out = Outcome(success=False, reason="", started_at=time.time())
    port = socket_port(batcmd)
    children: list[Child] = []
    cpu = CPUS.take()
    try:
        if port is not None and not _wait(lambda: port not in listening_ports(), timeouts.ready, stop):
            out.reason = stop.reason if stop.is_set() else (
                f"socket port {port} still in use after ready-timeout ({timeouts.ready:g} s)")
            return out
        if stop.is_set():
            out.reason = stop.reason
            return out
        sched = None
        if schedcmd:
            sched = Child("sched", schedcmd, output_dir, cpu, sched_cwd)
            children.append(sched)
            if port is not None:
                ready = _wait(lambda: port in listening_ports() or sched.poll() is not None, timeouts.ready, stop)
                if stop.is_set():
                    out.reason = stop.reason
                    return out
                if sched.poll() is not None:
                    out.sched_returncode = sched.poll()
                    out.reason = f"scheduler exited with code {out.sched_returncode} before listening on port {port}"
                    return out
                if not ready:
                    out.reason = (f"scheduler did not listen on port {port} within ready-timeout "
                                  f"({timeouts.ready:g} s): it never opened its socket")
                    return out
        # without a scheduler process, an engine running the scheduler inside it takes the scheduler's folder
        batsim = Child("batsim", batcmd, output_dir, cpu, sched_cwd if sched is None else None)
        children.append(batsim)
        out.reason = _supervise(batsim, sched, timeouts, stop)
        out.batsim_returncode = batsim.poll()
        out.sched_returncode = sched.poll() if sched else None
        out.success = out.reason == "" and out.batsim_returncode == 0 and (sched is None or out.sched_returncode == 0)
        if out.success:
            out.reason = "both processes succeeded"
        elif not out.reason:
            out.reason = f"batsim returned {out.batsim_returncode}, scheduler returned {out.sched_returncode}"
        return out
    finally:
        CPUS.give_back(cpu)
        # Always tear down every group, even after success: a scheduler may leave children behind.
        for child in children:
            child.stop()
            out.logs[child.name] = (child.stdout_path, child.stderr_path)
            if child.cpu_seconds is not None:
                out.cpu_seconds[child.name] = round(child.cpu_seconds, 3)
        if out.batsim_returncode is None and any(c.name == "batsim" for c in children):
            out.batsim_returncode = next(c for c in children if c.name == "batsim").proc.returncode
        if out.sched_returncode is None and any(c.name == "sched" for c in children):
            out.sched_returncode = next(c for c in children if c.name == "sched").proc.returncode
        out.ended_at = time.time()


def _wait(condition, timeout: float, stop: Stop = STOP) -> bool:
    """Whether `condition` came true within `timeout` s (False at once on STOP)."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline or stop.is_set():
            return False
        time.sleep(POLL)


def _supervise(batsim: Child, sched: Child | None, timeouts: Timeouts, stop: Stop = STOP) -> str:
    """Wait for both; return "" if both ended by themselves, else why they were stopped."""
    procs = [p for p in (batsim, sched) if p is not None]
    sim_deadline = time.monotonic() + timeouts.simulation
    second_deadline = None
    while True:
        alive = [p for p in procs if p.poll() is None]
        if not alive:
            return ""
        if stop.is_set():
            return f"{stop.reason}; stopped {', '.join(p.name for p in alive)}"
        now = time.monotonic()
        if now >= sim_deadline:
            return f"simulation-timeout ({timeouts.simulation:g} s) reached; stopped {', '.join(p.name for p in alive)}"
        if second_deadline is None and len(alive) < len(procs):
            first = next(p for p in procs if p.poll() is not None)
            rc = first.poll()
            second_deadline = now + (timeouts.success if rc == 0 else timeouts.failure)
            second_kind = "success-timeout" if rc == 0 else "failure-timeout"
            first_desc = f"{first.name} returned {rc}"
        if second_deadline is not None and now >= second_deadline:
            return (f"{first_desc}; {alive[0].name} still running after {second_kind} "
                    f"({(timeouts.success if second_kind == 'success-timeout' else timeouts.failure):g} s), stopped")
        time.sleep(POLL)
