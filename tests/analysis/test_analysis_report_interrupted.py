"""Ctrl-C during `batloc report` leaves the previous report whole (report.html, summary.csv, figures/, per_job/,
byte for byte) and says so in one line, no traceback: the report is written aside and swapped in whole
(analysis/swap.py). Before: a traceback, and figures/ half replaced."""

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "analysis" / "predicted"
REPORT = [sys.executable, "-m", "batloc.cli.main", "report"]


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).parts[0] in ("figures", "per_job", "summary.csv", "report.html")}


# The signal comes from inside the report, once its first figure is on disk aside: sent from the test on
# seeing that figure, it came after the report's end on a loaded machine (CI: exit 0, the new report in place)
INTERRUPTED_AFTER_FIRST_FIGURE = """
import os, sys
import matplotlib.figure
from batloc.cli.main import main
savefig = matplotlib.figure.Figure.savefig
def save_then_signal(fig, path, *args, **kwargs):
    savefig(fig, path, *args, **kwargs)
    os.kill(os.getpid(), int(sys.argv[1]))
matplotlib.figure.Figure.savefig = save_then_signal
sys.exit(main(sys.argv[2:]))
"""


# SIGTERM (and SIGHUP) as Ctrl-C: they killed the report outright, silently, its folder aside left (the probe)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_keeps_the_previous_report_whole(tmp_path, sig):
    out = tmp_path / "r"
    shutil.copytree(FIXTURE, out)
    assert subprocess.run(REPORT + [str(out)], capture_output=True, timeout=600).returncode == 0
    before = snapshot(out)
    assert "report.html" in before and any(k.startswith("figures/") for k in before)
    # another report (another baseline: other tables and figures), interrupted while it draws its figures
    proc = subprocess.run([sys.executable, "-c", INTERRUPTED_AFTER_FIRST_FIGURE, str(int(sig)), "report", str(out),
                           "--baseline", "easy"], capture_output=True, text=True, timeout=600)
    err = proc.stderr
    assert proc.returncode == 128 + sig
    assert err.strip().splitlines() == [f"batloc report: interrupted by {sig.name}; the report in {out} is whole (the "
                                        "previous one, unless this one was already in place)"]
    assert snapshot(out) == before
    assert not list(out.glob(".report.*"))


def test_a_report_names_its_folder_and_a_killed_ones_leftovers_go(tmp_path):
    out = tmp_path / "r"
    shutil.copytree(FIXTURE, out)
    (out / ".report.999999999.tmp" / "figures").mkdir(parents=True)   # a report killed outright (no such pid)
    assert subprocess.run(REPORT + [str(out)], capture_output=True, timeout=600).returncode == 0
    page = (out / "report.html").read_text()
    assert f"<h1>batloc report — {out}</h1>" in page and ".report." not in page
    assert 'src="figures/' in page and not list(out.glob(".report.*"))


def test_a_full_disk_is_one_line_and_the_previous_report_stays(tmp_path, monkeypatch, capsys):
    import errno

    from batloc.analysis import cli, figures, style

    out = tmp_path / "r"
    shutil.copytree(FIXTURE, out)

    def full(fig, path, *args, **kwargs):   # as PIL writing a PNG on a full disk (two chained tracebacks)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(style, "save", full)
    monkeypatch.setattr(figures, "save", full)
    assert cli.main([str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"batloc report: cannot write the report in {out}: No space left on device; the previous report, "
                   "if any, is whole"], err
    assert not list(out.glob(".report.*")) and not (out / "report.html").exists()


def test_ctrl_c_before_a_command_says_more_is_one_line(monkeypatch, capsys):
    # Ctrl-C while `batloc report` imports pandas and matplotlib printed a traceback
    from batloc.cli import main as umbrella

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(umbrella.importlib, "import_module", interrupted)
    assert umbrella.main(["report", "somewhere"]) == 130
    assert capsys.readouterr().err == "batloc report: interrupted\n"


@pytest.mark.parametrize("argv, message", [
    # a reference bandwidth the stretch divides by: -1 and nan wrote stretches of -0.000000 (the probe)
    (["--bandwidth", "-1"], "argument --bandwidth: a bandwidth is a finite number of bytes/s > 0, not '-1'"),
    (["--bandwidth", "nan"], "argument --bandwidth: a bandwidth is a finite number of bytes/s > 0, not 'nan'"),
    (["--gantt-range", "nan:inf"], "argument --gantt-range: expected finite START < END"),   # was a traceback
    (["--gantt-range", "7200:3600"], "argument --gantt-range: expected finite START < END"),
    (["--gantt-window", "5h:2h"], "FROM before TO (e.g. 0:6h), not '5h:2h'"),   # an empty chart, in silence
])
def test_report_options_that_mean_nothing_are_refused(tmp_path, argv, message):
    proc = subprocess.run(REPORT + [str(tmp_path)] + argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
