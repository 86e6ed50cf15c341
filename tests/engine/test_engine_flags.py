"""Every flag of `batloc-batsim` is checked where it is given: one that needs another flag, or that the chosen mode
leaves unused, is refused in one line (exit status 2) before anything is read or started. Before: the in-process
flags were ignored without --in-process, and `--in-process ''` fell back to ZeroMQ."""

import subprocess

import pytest

from engine_harness import ENGINE

REFUSED = [
    (["--scheduler-options", "{}"], "--scheduler-options needs --in-process"),
    (["--scheduler-verbosity", "info"], "--scheduler-verbosity needs --in-process"),
    (["--time-scheduler"], "--time-scheduler needs --in-process"),
    (["--in-process", ""], "--in-process needs a scheduler"),
    (["--in-process", "  "], "--in-process needs a scheduler"),
    (["--in-process", "schedFcfs", "-s", "tcp://localhost:28001"], "--socket-endpoint is for a scheduler over ZeroMQ"),
    (["--in-process", "schedFcfs", "--ready-timeout", "5"], "--ready-timeout is for a scheduler over ZeroMQ"),
]


@pytest.mark.parametrize("args,line", REFUSED)
def test_a_flag_that_would_do_nothing_is_refused(tmp_path, args, line):
    # the platform and workload do not exist: the flags are refused before they are looked at
    proc = subprocess.run(ENGINE + ["-p", "nope.xml", "-w", "nope.json", "-e", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"batloc-batsim: error: {line}"), lines
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args,line", [
    ([], "the following argument is required: -p/--platform"),
    (["-p", "p.xml"], "the following argument is required: -w/--workload"),
    (["--recover", "out/run", "-p", "p.xml"], "--recover rebuilds a killed run's outputs from its journal alone: "
                                              "not with -p"),
    (["--recover", ""], "--recover needs the export prefix of the killed run (its -e)"),
])
def test_required_and_exclusive_flags_in_one_line(args, line):
    proc = subprocess.run(ENGINE + args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [f"batloc-batsim: error: {line}"]


def test_recover_without_a_journal_says_so(tmp_path):
    proc = subprocess.run(ENGINE + ["--recover", str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        f"batloc-batsim: error: no journal of a killed run with prefix {tmp_path / 'run'} "
        f"({tmp_path / 'run'}_journal.*.tmp)"]
