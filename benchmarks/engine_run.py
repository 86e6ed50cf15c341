"""One run of the embedded engine with a batloc scheduler, as robin runs it
(both processes on one CPU), measured: wall time, the engine's and the
scheduler's CPU time (os.wait4: every thread of each process, ZeroMQ's
included), the scheduler's peak RSS, and its own statistics (passes, jobs
scanned, pass time).

`in_process`: the engine runs the scheduler inside itself (--in-process),
one process; the scheduler's CPU is then the engine's count of the time
spent in it (its end line), the engine's the rest of the process's, and
the peak RSS that of the one process."""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from batloc.processes import CpuLeases, free_port, pin_to, pybatsim_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPUS = CpuLeases()


def run_pair(variant, platform, workload, prefix, options, in_process=False, engine_args=(), stats=True, path=None):
    """Returns a dict: ok, wall, engine_cpu, sched_cpu, sched_rss_mb, stats (the scheduler's, or {}), note.
    `stats` False: the scheduler takes no option `stats` (the plain family); `path`: the scheduler's
    file, in process (default: schedulers/<variant>.py); `engine_args`: more flags of the engine (e.g. --instant)."""
    stats_path = prefix + "_stats.json"
    opts = {**options, "export_prefix": prefix, **({"stats": stats_path} if stats else {})}
    if in_process or path is not None:
        return run_one(variant, platform, workload, prefix, opts, engine_args, path)
    port = free_port()
    cpu = CPUS.take()
    pin = pin_to(cpu)
    started = time.monotonic()
    with open(prefix + "_sched.log", "w") as log:
        sched = subprocess.Popen(pybatsim_command() + [os.path.join(ROOT, "schedulers", variant + ".py"),
                                 "-v", "warning", "-s", f"tcp://127.0.0.1:{port}", "-o", json.dumps(opts)],
                                 stdout=log, stderr=subprocess.STDOUT, cwd=os.path.dirname(prefix),
                                 preexec_fn=pin)
        with tempfile.TemporaryFile("w+") as err:
            engine = subprocess.Popen([sys.executable, "-m", "batloc.engine", "-p", platform, "-w", workload,
                                       "-e", prefix, "-s", f"tcp://127.0.0.1:{port}", "--enable-dynamic-jobs", "-q",
                                       *engine_args],
                                      stdout=subprocess.DEVNULL, stderr=err, preexec_fn=pin)
            _, status, engine_usage = os.wait4(engine.pid, 0)
            engine.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            engine_err = err.read()
        _, status, usage = os.wait4(sched.pid, 0)
        sched.returncode = os.waitstatus_to_exitcode(status)
    CPUS.give_back(cpu)
    wall = time.monotonic() - started
    stats = {}
    if os.path.exists(stats_path):
        with open(stats_path) as fh:
            stats = json.load(fh)
    ok = engine.returncode == 0 and sched.returncode == 0
    note = "" if ok else (engine_err.strip() or f"scheduler exit {sched.returncode}")[-300:]
    return dict(ok=ok, wall=wall, engine_cpu=engine_usage.ru_utime + engine_usage.ru_stime,
                sched_cpu=usage.ru_utime + usage.ru_stime,
                sched_rss_mb=usage.ru_maxrss / 1024.0, stats=stats, note=note)


def run_one(variant, platform, workload, prefix, opts, engine_args=(), path=None):
    """`run_pair` with the scheduler inside the engine's process."""
    cpu = CPUS.take()
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        engine = subprocess.Popen([sys.executable, "-m", "batloc.engine", "-p", platform, "-w", workload,
                                   "-e", prefix, "--enable-dynamic-jobs",
                                   "--in-process", path or os.path.join(ROOT, "schedulers", variant + ".py"),
                                   "--time-scheduler",
                                   "--scheduler-options", json.dumps(opts), *engine_args],
                                  stdout=subprocess.DEVNULL, stderr=err, cwd=os.path.dirname(prefix),
                                  preexec_fn=pin_to(cpu))
        _, status, usage = os.wait4(engine.pid, 0)
        err.seek(0)
        engine_err = err.read()
    CPUS.give_back(cpu)
    wall = time.monotonic() - started
    with open(prefix + "_sched.log", "w") as log:
        log.write(engine_err)
    stats = {}
    if os.path.exists(opts.get("stats", "")):
        with open(opts["stats"]) as fh:
            stats = json.load(fh)
    ok = os.waitstatus_to_exitcode(status) == 0
    total = usage.ru_utime + usage.ru_stime
    found = re.search(r"the scheduler, in process: ([0-9.]+) s CPU", engine_err)
    sched = float(found.group(1)) if found else None
    return dict(ok=ok, wall=wall, engine_cpu=total - sched if sched is not None else total, sched_cpu=sched,
                sched_rss_mb=usage.ru_maxrss / 1024.0, stats=stats, note="" if ok else engine_err.strip()[-300:])


def run_proxied(scheduler, platform, workload, prefix, proxy_args=(), options=None):
    """One run of the embedded engine with `scheduler` (a pybatsim stock name, or a batloc policy of
    `schedulers/`, with `options`) behind the staging proxy, which starts it. Returns `run_pair`'s dict;
    the scheduler's CPU is the proxy's and its scheduler's together."""
    path = os.path.join(ROOT, "schedulers", scheduler + ".py")
    # pybatsim gives up on an engine silent for 2 s (its default), which a loaded machine can be
    sched_cmd = pybatsim_command() + [path if os.path.exists(path) else scheduler, "-v", "warning",
                                      "--timeout=3600000"]
    if options:
        sched_cmd += ["-o", json.dumps(options)]
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    cpu = CPUS.take()
    pin = pin_to(cpu)
    started = time.monotonic()
    with open(prefix + "_sched.log", "w") as log, tempfile.TemporaryFile("w+") as err:
        proxy = subprocess.Popen([sys.executable, "-m", "batloc.adapters.cli", "-q", "--bind", endpoint,
                                  "--export-prefix", prefix, *proxy_args, "--", *sched_cmd],
                                 stdout=log, stderr=subprocess.STDOUT, cwd=os.path.dirname(prefix), preexec_fn=pin)
        engine = subprocess.Popen([sys.executable, "-m", "batloc.engine", "-p", platform, "-w", workload,
                                   "-e", prefix, "-s", endpoint, "--enable-dynamic-jobs", "-q"],
                                  stdout=subprocess.DEVNULL, stderr=err, preexec_fn=pin)
        _, status, engine_usage = os.wait4(engine.pid, 0)
        engine_rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        engine_err = err.read()
        _, status, usage = os.wait4(proxy.pid, 0)       # the scheduler it waited for included
        proxy_rc = os.waitstatus_to_exitcode(status)
    CPUS.give_back(cpu)
    ok = engine_rc == 0 and proxy_rc == 0
    note = "" if ok else (engine_err.strip() or f"proxy exit {proxy_rc}, see {prefix}_sched.log")[-300:]
    return dict(ok=ok, wall=time.monotonic() - started, engine_cpu=engine_usage.ru_utime + engine_usage.ru_stime,
                sched_cpu=usage.ru_utime + usage.ru_stime, sched_rss_mb=usage.ru_maxrss / 1024.0, stats={}, note=note)
