"""`batloc-batsim --in-process` keeps every guarantee of the ZeroMQ mode whatever its scheduler does: one that hangs
(in Python or holding the interpreter's lock), raises any BaseException, exits, segfaults or changes directory ends
the run in one line with every row written, within the reply timeout or at once on SIGTERM (the engine's
supervisor ends a call that will not end, or an engine that died in one, and rebuilds the outputs from the journal);
one that cannot be loaded says why in one line; and no process outlives the command.

Each scheduler here rejects every job until job 3 of `sample_workload`, submitted at t = 9, where it misbehaves:
jobs 0-2 end REJECTED, job 3 is SUBMITTED, later ones SUBMITTED or NOT_SUBMITTED, every one with its row."""

import os
import signal
import sys
import subprocess
import time
from pathlib import Path

import pytest

import policy_run
from engine_harness import ENGINE, platform_xml, write
from test_engine_pybatsim import sample_workload

pytestmark = pytest.mark.needs_engine

SCHEDULER = """
import ctypes, os, re, sys, time
from batsim.batsim import BatsimScheduler


class Strange(BaseException):
    pass


class {name}(BatsimScheduler):
    def __init__(self, options):
        super().__init__(options)
        {init}

    def onJobSubmission(self, job):
        if job.id.endswith("!3"):
            open("reached", "w").close()
            {action}
        self.bs.reject_jobs([job])
"""
ACTIONS = {
    "sleeps": "time.sleep(3600)",
    "spins": 're.match(r"(a+)+$", "a" * 64 + "b")',   # holds the interpreter's lock for ever, deaf to signals
    "interrupts": "raise KeyboardInterrupt",
    "odd": "raise Strange('not an Exception')",
    "exits": "os._exit(3)",
    "segfaults": "ctypes.string_at(0)",
}


def scheduler_file(tmp_path, name, action="pass", init="pass"):
    """A scheduler file `name`.py whose class misbehaves at job 3 (`action`) or when made (`init`)."""
    return write(tmp_path, f"{name}.py", SCHEDULER.format(name=name.capitalize(), action=action, init=init))


def engine(tmp_path, scheduler, *args, prefix="out/run"):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", sample_workload())
    return subprocess.Popen(ENGINE + ["-p", platform, "-w", wl, "-e", prefix, "-q", "--in-process", scheduler, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)


def finished(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, err.strip().splitlines()


def rows(tmp_path, prefix="out/run"):
    states = {r["job_id"]: r["final_state"] for r in policy_run.read_rows(str(tmp_path / f"{prefix}_jobs.csv"))[1]}
    assert len(states) == 40 and states["0"] == states["2"] == "REJECTED" and states["3"] == "SUBMITTED"
    assert not list(tmp_path.glob("out/*.tmp"))          # no temporary file, no journal left
    return states


def no_scheduler_left(path):
    """No process runs the scheduler file any more (it dies with the engine)."""
    for _ in range(50):
        alive = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid).find(str(path)) >= 0]
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for(path, timeout=120):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["sleeps", "spins"])
def test_a_hung_scheduler_ends_at_the_reply_timeout_every_row_written(tmp_path, how):
    # before: no reply timeout in process, the engine hung with its scheduler
    path = scheduler_file(tmp_path, how, ACTIONS[how])
    started = time.monotonic()
    code, lines = finished(engine(tmp_path, path, "--reply-timeout", "1"))
    assert code == 1 and time.monotonic() - started < 60
    assert len(lines) == 1 and lines[0].startswith(
        f"batloc-batsim: error: the in-process scheduler {path} did not answer within 1 s at simulated time "
        "9.000000 (see --reply-timeout); outputs written to out/run_*.csv, 37 job(s) unfinished"), lines
    rows(tmp_path)
    assert no_scheduler_left(path)


def test_a_scheduler_hung_while_loading_ends_at_the_reply_timeout(tmp_path):
    path = scheduler_file(tmp_path, "slow", init="time.sleep(3600)")
    code, lines = finished(engine(tmp_path, path, "--reply-timeout", "1"))
    assert code == 1 and lines == [f"batloc-batsim: error: the in-process scheduler {path} did not load within 1 s "
                                   "(see --reply-timeout); nothing simulated, no output written (earlier "
                                   "out/run_*.csv, if any, kept)"]
    assert not list(tmp_path.glob("out/*"))
    assert no_scheduler_left(path)


@pytest.mark.parametrize("how", ["sleeps", "spins"])
def test_sigterm_during_a_hung_call_writes_every_row(tmp_path, how):
    # before: the engine noted the signal but acted on it only between messages: nothing but kill -9 stopped it
    path = scheduler_file(tmp_path, how, ACTIONS[how])
    proc = engine(tmp_path, path)
    wait_for(tmp_path / "reached")
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code, lines = finished(proc, timeout=30)
    assert code == 128 + signal.SIGTERM and time.monotonic() - sent < 10
    assert lines[-1] == ("batloc-batsim: interrupted by SIGTERM at t=9.000000; outputs written to out/run_*.csv, "
                         "37 job(s) unfinished"), lines
    rows(tmp_path)
    assert no_scheduler_left(path)


@pytest.mark.parametrize("how,raised", [("interrupts", "KeyboardInterrupt"), ("odd", "Strange")])
def test_a_scheduler_raising_a_base_exception_ends_in_one_line(tmp_path, how, raised):
    # before: KeyboardInterrupt or a BaseException went through the engine: its own 34-line traceback
    path = scheduler_file(tmp_path, how, ACTIONS[how])
    code, lines = finished(engine(tmp_path, path))
    assert code == 1
    assert lines[-1] == (f"batloc-batsim: error: the in-process scheduler {path} failed at simulated time 9.000000: "
                         f"{raised} (see above); outputs written to out/run_*.csv, 37 job(s) unfinished")
    # the scheduler's own traceback (from the call into it), not the engine's through SimGrid
    assert f"{path}\", line" in "\n".join(lines) and len(lines) < 20 and "cli.py" not in "\n".join(lines), lines
    rows(tmp_path)


@pytest.mark.parametrize("how,end", [("exits", "stopped at simulated time 9.000000 (exit status 3)"),
                                     ("segfaults", "died at simulated time 9.000000 (killed by SIGSEGV)")])
def test_a_scheduler_that_exits_or_segfaults_leaves_every_row(tmp_path, how, end):
    # before: os._exit or a segfault in the scheduler took the engine down: no output, a .tmp left behind
    path = scheduler_file(tmp_path, how, ACTIONS[how])
    code, lines = finished(engine(tmp_path, path))
    assert code == 1
    assert lines[-1] == (f"batloc-batsim: error: the in-process scheduler {path} {end}; outputs written to "
                         "out/run_*.csv, 37 job(s) unfinished"), lines
    rows(tmp_path)


def test_a_scheduler_that_changes_directory_does_not_move_the_outputs(tmp_path):
    # before: the engine's relative -e followed the scheduler's chdir and could not be written at the end
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = scheduler_file(tmp_path, "wanders", init=f"os.chdir({str(elsewhere)!r})")
    code, lines = finished(engine(tmp_path, path))
    assert code == 0 and lines == [], lines
    states = {r["job_id"]: r["final_state"] for r in policy_run.read_rows(str(tmp_path / "out/run_jobs.csv"))[1]}
    assert len(states) == 40 and set(states.values()) == {"REJECTED"}
    assert not (elsewhere / "out").exists()


LOADING = {
    # name: (file text, the one line, after the file's path)
    "noclass": ("X = 1\n", "defines no Noclass (pybatsim runs the class named after the file, its first letter "
                           "upper-cased)"),
    "otherclass": ("from batsim.batsim import BatsimScheduler\nclass Mine(BatsimScheduler):\n    pass\n",
                   "defines no Otherclass (pybatsim runs the class named after the file, its first letter "
                   "upper-cased; it defines Mine)"),
    "function": ("def Function():\n    return None\n",
                 ": Function is a function that does not take one argument: pybatsim runs the class "
                 "Function(BatsimScheduler), or a function Function(scheduler) that its high-level API calls at "
                 "each scheduling step"),
    "syntax": ("def broken(:\n    pass\n", "SyntaxError: invalid syntax ({path}, line 1)"),
    "imports": ("import no_such_module_here\n",
                "ModuleNotFoundError: No module named 'no_such_module_here' ({path}, line 1)"),
    "raising": ("from batsim.batsim import BatsimScheduler\nclass Raising(BatsimScheduler):\n"
                "    def __init__(self, options):\n        raise ValueError('bad')\n",
                ": Raising(options) failed: ValueError: bad ({path}, line 4)"),
}


@pytest.mark.parametrize("name", sorted(LOADING))
def test_every_loading_failure_is_one_line(tmp_path, name):
    # before: "did not start (exit status 1)", a traceback, or (the function) a do-nothing run until a deadlock
    text, expected = LOADING[name]
    path = write(tmp_path, f"{name}.py", text)
    code, lines = finished(engine(tmp_path, path))
    assert code == 1 and len(lines) == 1, lines
    prefix = "batloc-batsim: error: --in-process: "
    assert lines[0].startswith(prefix) and lines[0].endswith(expected.format(path=path)), lines
    assert not list(tmp_path.glob("out/*"))   # not even a temporary file


def test_a_function_named_like_the_class_is_run_as_pybatsim_runs_one_and_said_so(tmp_path):
    # before: a do-nothing scheduler until the deadlock, without a word on why
    path = write(tmp_path, "idle.py", "def Idle(scheduler):\n    pass\n")
    code, lines = finished(engine(tmp_path, path))
    assert code == 1 and len(lines) == 2, lines
    assert lines[0] == (f"batloc scheduler: warning: {path}: Idle is a function, run as pybatsim's high-level API runs "
                        "one: Idle(scheduler) at each scheduling step (a scheduler file usually holds a class "
                        "Idle(BatsimScheduler))")
    assert lines[1].startswith("batloc-batsim: error: deadlock at t=")


def test_a_file_that_is_not_python_is_refused_in_one_line(tmp_path):
    # before: "'NoneType' object has no attribute 'loader'", in process and from `batloc scheduler`
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    code, lines = finished(engine(tmp_path, platform))
    assert code == 1 and lines == [f"batloc-batsim: error: --in-process: {platform} is not a Python file: a scheduler "
                                   "is a .py file such as schedulers/lea.py, a batloc policy such as lea or lea-bf, "
                                   "or a pybatsim stock scheduler such as schedFcfs"]
    proc = subprocess.run([sys.executable, "-m", "batloc.cli.main", "scheduler", platform], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"batloc scheduler: error: {platform} is not a Python file: a scheduler is a .py file such as "
        "schedulers/lea.py, a batloc policy such as lea or lea-bf, or a pybatsim stock scheduler such as schedFcfs"]


def test_a_scheduling_period_past_2_32_s_is_refused_naming_the_option(tmp_path):
    # before: LEA took 1e10 s, and the engine stopped at t = 9 on its (former) 2^32 s horizon without naming it
    code, lines = finished(engine(tmp_path, str(policy_run.REPO / "schedulers" / "lea.py"), "--enable-dynamic-jobs",
                                  "--scheduler-options", '{"scheduling_period": 1e10}'))
    assert code == 1 and len(lines) == 2, lines
    assert lines[0] == ("batloc scheduler: LEA: option 'scheduling_period' must be at most 4294967296 s (2^32 s, about 136 "
                        "years: past it times are not exact to the microsecond), got 10000000000.0")
    assert lines[1].startswith("batloc-batsim: error: the in-process scheduler ") and "did not start" in lines[1]
    # 2^32 s itself is a period the engine holds to the microsecond
    from batloc.schedulers.planning.options import SchedulerOptions

    assert SchedulerOptions.from_dict({"scheduling_period": 2.0 ** 32}).scheduling_period == 2.0 ** 32
