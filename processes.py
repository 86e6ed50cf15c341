"""Starting and stopping the processes of a run: ports, CPUs, process groups, pybatsim.

Shared by robin, the staging proxy's command line and the benchmarks, so that
every tool picks ports, pins CPUs and stops children the same way. Nothing
here knows about Batsim: it is plain process handling.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager

LOOPBACK = "127.0.0.1"
POLL = 0.05


def quiet_gc():
    """Keep the cyclic garbage collector off the long-lived objects of a simulation process.

    The engine and the schedulers hold every job for the whole run (hundreds of thousands of
    objects on a saturated week) and create no cycles worth collecting: with Python's defaults a
    full collection, scanning all of them, comes every 70 000 allocations, and a message allocates
    hundreds. What exists now is frozen out of every collection, and the young generation is
    collected every 50 000 allocations, the oldest almost never."""
    import gc
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


@contextmanager
def signals_to(handler, signals=(signal.SIGINT, signal.SIGTERM)):
    """While inside, `signals` call ``handler(signum)`` instead of their own handlers, restored on the way
    out. Only the main thread sees Python's signal handlers: elsewhere nothing changes, and the block
    gets False."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous = {sig: signal.getsignal(sig) for sig in signals}
    for sig in signals:
        signal.signal(sig, lambda signum, frame: handler(signum))
    try:
        yield True
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port the OS reports unused on `host` now (it may be taken again before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class CpuLeases:
    """Gives each run one CPU, shared by its engine and its scheduler.

    The two processes of a Batsim run strictly take turns (REQ/REP), so one CPU
    loses nothing, while a wake-up on another CPU costs far more than the work
    of a small message on virtual machines (measured here: 85 us against 195 us
    a round trip). Parallel runs get distinct CPUs while there are enough.

    Leases are host-wide, not per process: several robins, the worker processes
    of a Dask cluster on one machine, or a benchmark beside a sweep would each
    otherwise start counting at the first CPU and pile their runs on it. A lease
    is an flock on a file named for its CPU and its rank among that CPU's
    leases, so the least used CPU (lowest first) is the first whose file of the
    lowest rank is free, and a lease ends with `give_back` or with its process.
    """

    MAX_RANK = 256  # leases per CPU before falling back to this process's own count

    def __init__(self, directory=None):
        self.enabled = hasattr(os, "sched_setaffinity") and not os.environ.get("BATLOC_NO_PIN")
        self.cpus = sorted(os.sched_getaffinity(0)) if self.enabled else []
        self.directory = directory or os.path.join(tempfile.gettempdir(), f"batloc-cpu-leases-{os.getuid()}")
        self.held: dict[int, list[int]] = {}   # cpu -> descriptors of its locked files (-1: no file)
        self.lock = threading.Lock()

    def take(self):
        if not self.enabled or not self.cpus:
            return None
        with self.lock:
            if self._directory_usable():
                for rank in range(self.MAX_RANK):
                    for cpu in self.cpus:
                        fd = self._try_lock(cpu, rank)
                        if fd is not None:
                            self.held.setdefault(cpu, []).append(fd)
                            return cpu
            # no lock directory, or more than MAX_RANK runs per CPU: this process's own count
            cpu = min(self.cpus, key=lambda c: (len(self.held.get(c, ())), c))
            self.held.setdefault(cpu, []).append(-1)
            return cpu

    def _directory_usable(self) -> bool:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            return True
        except OSError:
            return False

    def _try_lock(self, cpu, rank):
        try:
            fd = os.open(os.path.join(self.directory, f"cpu{cpu}.{rank}"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def give_back(self, cpu):
        if cpu is None:
            return
        with self.lock:
            fds = self.held.get(cpu)
            if not fds:
                return
            fd = fds.pop()
            if fd >= 0:
                os.close(fd)  # closing the descriptor releases its flock


def pin_to(cpu):
    """A Popen ``preexec_fn`` putting the child on `cpu` (None: no pinning)."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def stop_group(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """SIGTERM the process group led by `proc`, SIGKILL what is left after `grace` s, reap the leader.

    `proc` must have been started in its own session or group (``start_new_session=True``
    or ``os.setsid``), so that grandchildren (pybatsim under bash, …) go too.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break  # group empty: nothing left
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and group_alive(proc.pid):
            proc.poll()
            time.sleep(POLL)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


# What a command robin or the staging proxy starts carries in its environment, and hands down to everything it
# starts: a process that left the command's group (setsid, a daemon's double fork) is found by it at the end.
TAG = "BATLOC_PROCESS_TAG"


def tagged_environment(env=None) -> tuple[str, dict]:
    """(a new tag, `env` — default this process's environment — holding it) for a command to be started."""
    tag = f"{os.getpid()}-{time.monotonic_ns()}-{threading.get_ident()}"
    return tag, {**(os.environ if env is None else env), TAG: tag}


def stop_tagged(tag: str, grace: float = 2.0) -> list[str]:
    """SIGTERM, then after `grace` s SIGKILL, every live process whose environment holds `tag`
    (``tagged_environment``; Linux: /proc; elsewhere nothing is found); their command lines, short."""
    entry = f"{TAG}={tag}".encode()
    found = {}
    for pid, state, _, _ in _processes():
        if state == "Z" or pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if entry not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found[pid] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:60]
        except OSError:   # gone meanwhile, or another user's
            continue
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [pid for pid in found if _alive(pid)]
        for pid in alive:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while alive and time.monotonic() < deadline:
            alive = [pid for pid in alive if _alive(pid)]
            time.sleep(POLL)
    return list(found.values())


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _processes():
    """(pid, state, parent pid, process group) of every process /proc shows (Linux; elsewhere none)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for pid in names:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        yield int(pid), fields[0], int(fields[1]), int(fields[2])


def group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg also succeeds for zombies: look for a live member
    return any(group == pgid and state != "Z" for _, state, _, group in _processes())


def descendants(pid: int | None = None) -> list[int]:
    """The live processes below `pid` (default: this one), children first; zombies left out."""
    root = os.getpid() if pid is None else pid
    children, alive = {}, set()
    for child, state, parent, _ in _processes():
        children.setdefault(parent, []).append(child)
        if state != "Z":
            alive.add(child)
    found, todo = [], [root]
    while todo:
        for child in sorted(children.get(todo.pop(0), ())):
            if child not in found:
                found.append(child)
                todo.append(child)
    return [p for p in found if p in alive]


def end_descendants(pid: int | None = None, grace: float = 1.0) -> list[int]:
    """SIGKILL every live process below `pid` (default: this one) and reap this one's children among them, for
    `grace` s at most; the pids found."""
    found = descendants(pid)
    for child in found:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    pending = set(found)
    while pending and time.monotonic() < deadline:
        for child in list(pending):
            try:
                done, _ = os.waitpid(child, os.WNOHANG)
            except ChildProcessError:   # not our child (a grandchild): its parent, or init, reaps it
                done = child
            if done:
                pending.discard(child)
        if pending:
            time.sleep(0.01)
    return found


PYBATSIM_MISSING = ("pybatsim is not installed, and batloc's schedulers run under it: install it with "
                    "`pip install --no-deps pybatsim==3.2.1` (its pyzmq<23 pin does not build on Python 3.11; "
                    "batloc's dependencies bring what it needs), or run scripts/install.sh from a checkout")


def pybatsim_missing() -> str | None:
    """The one line saying how to install pybatsim when this Python cannot run it, else None."""
    import importlib.util

    return None if importlib.util.find_spec("batsim") is not None else PYBATSIM_MISSING


def pybatsim_command() -> list[str]:
    """How to start pybatsim's launcher under this Python, so that a scheduler imports the same batloc.

    The `pybatsim` script beside this Python, else its launcher module; a
    `pybatsim` found elsewhere on PATH (another environment, which may hold
    another batloc or none) only when this Python has no pybatsim at all."""
    beside = os.path.join(os.path.dirname(sys.executable), "pybatsim")
    if os.path.exists(beside):
        return [beside]
    if pybatsim_missing() is None:
        return [sys.executable, "-m", "batsim.cmds.launcher"]
    exe = shutil.which("pybatsim")
    return [exe] if exe else [sys.executable, "-m", "batsim.cmds.launcher"]


def scheduler_command() -> list[str]:
    """How to start a scheduler file: `batloc scheduler` (pybatsim's launcher with one-line errors), in this Python."""
    return [sys.executable, "-m", "batloc.cli.main", "scheduler"]
