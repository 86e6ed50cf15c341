"""`--recover` on what a kill does not leave (issue 37): a journal damaged in the middle is replayed up to the
damage and says so (it said nothing); outputs that cannot be written are one line, the journal kept (a
read-only folder printed a 25-line traceback)."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from engine_harness import ENGINE, write

pytestmark = pytest.mark.needs_engine

KILLER = '''
import os, signal
from batsim.batsim import BatsimScheduler


class Killer(BatsimScheduler):
    def onJobSubmission(self, job):
        if job.id == "w0!3":
            os.kill(os.getppid(), signal.SIGKILL)   # the supervisor: the engine dies with it, its journal left
            signal.pause()
        self.bs.reject_jobs([job])
'''


@pytest.fixture
def killed(tmp_path, platform):
    """The prefix of an in-process run killed at t=3, and its journal."""
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": i, "subtime": i, "res": 1, "profile": "d"}
                                                          for i in range(1, 6)],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}})
    prefix = str(tmp_path / "out" / "o")
    subprocess.run(ENGINE + ["-p", platform, "-w", wl, "-e", prefix, "--in-process",
                             write(tmp_path, "killer.py", KILLER)], capture_output=True, timeout=60)
    for _ in range(100):   # the engine dies a moment after its supervisor
        journals = list(Path(prefix).parent.glob("o_journal.*.tmp"))
        if journals and not Path(f"/proc/{journals[0].name.split('.')[1]}").exists():
            return prefix, journals[0]
        time.sleep(0.05)
    raise AssertionError("no journal left")


def test_a_journal_damaged_in_the_middle_is_replayed_up_to_the_damage_saying_so(killed):
    prefix, journal = killed
    lines = journal.read_bytes().split(b"\n")
    assert len(lines) >= 5, lines   # header, then a batch per checkpoint up to t=3
    lines[2] = b'[["e","w0!1","REJ'   # a batch cut in the middle of the file, more after it
    journal.write_bytes(b"\n".join(lines))
    res = subprocess.run(ENGINE + ["--recover", prefix], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    out = res.stderr.strip().splitlines()
    assert len(out) == 1 and "killed after t=0.000000" in out[0], out
    assert "warning: its journal was damaged at line 3 (not a whole batch, 2 more line(s) after it, left out)" \
        in out[0], out


def test_a_journal_cut_short_at_its_end_is_no_damage(killed):
    prefix, journal = killed
    journal.write_bytes(journal.read_bytes().rstrip(b"\n") + b'\n[["j","w0!4"')   # as a kill during a write
    res = subprocess.run(ENGINE + ["--recover", prefix], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "killed after t=3.000000" in res.stderr and "damaged" not in res.stderr, \
        res.stderr


def test_outputs_that_cannot_be_written_leave_the_journal_in_one_line(killed, monkeypatch, capsys):
    from batloc.engine import cli, export

    prefix, journal = killed

    def refused(path, *args, **kwargs):   # a read-only folder (root writes into one regardless)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(export, "open_for_writing", refused)
    assert cli.main(["--recover", prefix]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"batloc-batsim: error: cannot recover the killed run with prefix "
                                               f"{prefix}: cannot write outputs with prefix"), err
    assert err[0].endswith("Permission denied (journal kept)") and journal.exists()


def test_a_fifo_under_a_journals_name_is_one_line_not_a_hang(tmp_path):
    # open() waited for a writer that never came: --recover, and every later run with that prefix, hung
    prefix = tmp_path / "o"
    os.mkfifo(f"{prefix}_journal.4242.tmp")
    res = subprocess.run(ENGINE + ["--recover", str(prefix)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and res.stderr.strip() == (
        f"batloc-batsim: error: cannot recover the killed run with prefix {prefix}: {prefix}_journal.4242.tmp "
        "(journal) is a FIFO, not a regular file: not read (journal kept)"), res.stderr


def test_a_journal_over_its_bound_is_refused_in_one_line_not_read_whole(killed, monkeypatch, capsys):
    from batloc.engine import cli, journal as journal_module

    prefix, journal = killed
    monkeypatch.setattr(journal_module, "JOURNAL_BYTES", journal.stat().st_size - 1)
    assert cli.main(["--recover", prefix]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"batloc-batsim: error: cannot recover the killed run with prefix {prefix}: {journal} (journal) "
                   f"is larger than {journal.stat().st_size - 1} bytes, the bound batloc reads: not read (journal "
                   "kept)"], err
    assert journal.exists()
