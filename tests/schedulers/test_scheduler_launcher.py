"""`batloc scheduler`: pybatsim's launcher with one-line errors, on 127.0.0.1 unless told otherwise.

pybatsim's own `pybatsim` command decodes -o and binds before any batloc code
runs: a malformed -o or a port in use end in its tracebacks, and it listens on
every interface by default.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import zmq

from batloc.cli import scheduler as launcher
from batloc.processes import free_port
from engine_harness import ENGINE, platform_xml, write

REPO = Path(__file__).resolve().parents[2]
MET = str(REPO / "schedulers" / "met.py")


def batloc_scheduler(*args, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "batloc.cli.main", "scheduler", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


def test_it_listens_on_loopback_unless_told_otherwise():
    assert launcher.parse_args([MET]).socket_endpoint == "tcp://127.0.0.1:28000"
    assert launcher.parse_args([MET, "-s", "tcp://0.0.0.0:5"]).socket_endpoint == "tcp://0.0.0.0:5"


@pytest.mark.parametrize("args, line", [
    (["-o", "{cache: lru}"], "batloc scheduler: error: -o is not JSON (Expecting property name enclosed in double "
                             "quotes at line 1 column 2): '{cache: lru}'; options are a JSON object such as "
                             "'{\"cache\": \"lru\"}'"),
    # a list reached the scheduler and came back as "fcfs raised TypeError while loading" (the probe)
    (["-o", "[1, 2]"], "batloc scheduler: error: -o is a JSON list, not an object: '[1, 2]'; options are a JSON "
                       "object such as '{\"cache\": \"lru\"}'"),
    (["-O", "/nonexistent/o.json"], "batloc scheduler: error: cannot read the options file /nonexistent/o.json: "
                                    "No such file or directory"),
    (["-s", "tcp://nowhere"], "batloc scheduler: error: cannot listen on tcp://nowhere: expected tcp://HOST:PORT, "
                              "e.g. tcp://127.0.0.1:28000"),
    (["-s", "tcp://192.0.2.1:28000"], "batloc scheduler: error: cannot listen on tcp://192.0.2.1:28000: Cannot "
                                      "assign requested address"),
])
def test_bad_arguments_are_one_line(args, line):
    proc = batloc_scheduler(MET, *args)
    assert proc.returncode == 2 and proc.stderr.strip() == line, proc.stderr


def test_a_port_in_use_is_one_line():
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    try:
        proc = batloc_scheduler(MET, "-s", f"tcp://127.0.0.1:{port}")
    finally:
        sock.close(0)
        ctx.term()
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"batloc scheduler: error: cannot listen on tcp://127.0.0.1:{port}: the port is "
                                   "in use (another scheduler or program listens there; choose another with -s)")


def test_a_missing_scheduler_file_is_one_line():
    proc = batloc_scheduler("schedulers/nope.py", cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.strip() == "batloc scheduler: error: no scheduler file schedulers/nope.py"


@pytest.mark.needs_pybatsim
def test_a_batloc_scheduler_file_is_found_from_any_folder(tmp_path, monkeypatch):
    # as the README writes it (`batloc scheduler schedulers/lea.py`), from outside the checkout:
    # an installed batloc's own file
    monkeypatch.chdir(tmp_path)
    assert type(launcher.load("schedulers/met.py", {})).__name__ == "Met"
    with pytest.raises(launcher.LaunchError, match="^no scheduler file schedulers/nope.py$"):
        launcher.load("schedulers/nope.py", {})


@pytest.mark.needs_engine
@pytest.mark.parametrize("name, engine_args", [(MET, ["--enable-dynamic-jobs"]), ("schedFcfs", [])])
def test_a_batloc_and_a_stock_scheduler_run_to_the_end(tmp_path, name, engine_args):
    # a schedulers/ folder in the current directory (this repository's root, say) must not stand in for
    # pybatsim's stock package of that name
    (tmp_path / "schedulers").mkdir()
    (tmp_path / "schedulers" / "__init__.py").write_text("")
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": i, "subtime": i, "res": 1, "walltime": 60, "profile": "d", "input_file": "F", "input_size": 1e6}
        for i in (1, 2, 3)]})
    port = free_port()
    with open(tmp_path / "sched.log", "w") as log:
        sched = subprocess.Popen([sys.executable, "-m", "batloc.cli.main", "scheduler", name, "-v", "warning",
                                  "-s", f"tcp://127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                                 cwd=tmp_path)
    try:
        proc = subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", str(tmp_path / "out"), "-q",
                                        "-s", f"tcp://127.0.0.1:{port}", *engine_args],
                              capture_output=True, text=True, timeout=120)
        sched.wait(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
    assert proc.returncode == 0 and sched.returncode == 0, proc.stderr + (tmp_path / "sched.log").read_text()
    assert (tmp_path / "out_jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") >= 3


def test_the_readme_and_the_tests_start_schedulers_on_loopback():
    # pybatsim listens on every interface (tcp://*:28000) unless told otherwise: whoever reaches the port
    # drives the run. The commands of the README, of the command reference and of the tests say 127.0.0.1 (or
    # use `batloc scheduler`); the contract and the architecture describe how pybatsim loads a file.
    reference = ("engine", "schedulers", "robin", "workloads", "platforms", "report", "study", "batsim", "install")
    readme = "".join(path.read_text() for path in [REPO / "README.md", *(REPO / "docs" / f"{page}.md"
                                                                         for page in reference)])
    commands = re.findall(r"`(pybatsim [^`]*)`", readme.replace("\n  ", " "))
    assert [c for c in commands if re.match(r"pybatsim \S+\.py", c) and "-s tcp://127.0.0.1" not in c] == []
    everywhere = [path.name for path in (REPO / "tests").glob("*.py")
                  if re.search(r"tcp://\*:\{|tcp://0\.0\.0\.0:\{", path.read_text())]
    assert everywhere == []


@pytest.mark.needs_pybatsim
def test_a_planning_scheduler_listens_before_its_core_is_compiled(tmp_path):
    # An empty numba cache: the core compiles for minutes. The engine's ready timeout (robin's flag form: 10 s)
    # runs until the scheduler listens, its reply timeout (600 s) after: so it must listen first.
    import os
    import socket
    import time

    port = free_port()
    env = {**os.environ, "BATLOC_NUMBA_CACHE": str(tmp_path / "empty-cache")}
    sched = subprocess.Popen([sys.executable, "-m", "batloc.cli.main", "scheduler", "lea",
                              "-s", f"tcp://127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        listening = False
        while sched.poll() is None and not listening:
            with socket.socket() as probe:
                listening = probe.connect_ex(("127.0.0.1", port)) == 0
            time.sleep(0.1)
        first = sched.stderr.readline()     # the compile, said once it begins
    finally:
        sched.kill()
        said = first + sched.communicate()[1]
    assert listening, said
    assert first.startswith("batloc scheduler: compiling the planning core once"), said
    assert "planning core compiled in" not in said, said    # it listened long before the compile's end
