"""What robin shows of long runs: the engine's progress file, and the sweep's display built from it."""

import io

import pytest
from pathlib import Path

import engine_harness
from batloc.robin.runs import RunSpec
from batloc.robin.process import Timeouts
from batloc.robin.sweep import FAILED, INVALID, SUCCESS, Display
from engine_harness import platform_xml, write


def test_the_engine_writes_simulated_time_horizon_and_jobs_to_its_progress_file(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "profiles": {"d5": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d5"},
        {"id": 2, "subtime": 30, "res": 2, "walltime": 100, "profile": "d5"}]})
    path = tmp_path / "progress"
    res = engine_harness.run(tmp_path, platform, [wl], engine_harness.Fifo(), args=["--progress-file", str(path)])
    assert res.returncode == 0, res.stderr
    # the last job ends at 35; submissions end at 30 (the horizon); 2 of 2 jobs done
    assert path.read_text() == "35.000000 30.000000 2 2\n"
    assert res.stderr == ""          # no bar without --progress


def spec(tmp_path, name):
    run = tmp_path / name
    (run / "log").mkdir(parents=True)
    return RunSpec(name=name, output_dir=run, batcmd="", schedcmd=None, timeouts=Timeouts())


def test_the_display_shows_runs_done_and_each_running_runs_simulated_time(tmp_path):
    specs = [spec(tmp_path, n) for n in ("a", "b", "c", "d")]
    Path(specs[1].progress_path).write_text("43200.000000 172800.000000 10 40\n")   # half a day of two
    Path(specs[2].progress_path).write_text("garbage")                                # half written: ignored
    out = io.StringIO()
    display = Display(specs, stream=out)
    display.record(specs[0], SUCCESS, 1.0)
    assert display.line() == ("robin: [#######.......................] 1/4 runs: 1 done, 0 failed; sweep about 31% "
                              "done; running: b t=12.0h (last submission 2.0d), 10/40 jobs ended (25%)")
    display.record(specs[2], INVALID, 1.0)
    display.record(specs[3], FAILED, 1.0)
    assert display.tally.failed == ["c", "d"] and display.tally.invalid == ["c"]
    assert display.line().startswith("robin: [######################........] 3/4 runs: 1 done, 2 failed (1 invalid)")
    assert out.getvalue().count("\n") == 3      # not a terminal: one line per change


class OutStream(io.StringIO):
    """A Jupyter kernel's stderr, as far as the display can tell (it is no terminal)."""


OutStream.__module__ = "ipykernel.iostream"


def test_in_a_notebook_the_display_redraws_its_line_in_place(tmp_path):
    # a notebook draws a carriage return as a terminal does, not a terminal's escape sequences: the line is
    # rewritten in place (batloc.api's progress), spaces erasing what is left of a longer one
    specs = [spec(tmp_path, n) for n in ("a", "b")]
    Path(specs[1].progress_path).write_text("43200.000000 172800.000000 10 40\n")
    out = OutStream()
    display = Display(specs, stream=out)
    display.show()
    first = display.line()
    display.record(specs[1], SUCCESS, 1.0)   # its "succeeded" line goes to stdout, the line erased first
    second = display.line()
    assert len(second) < len(first)
    assert out.getvalue() == "\r" + first + "\r" + " " * len(first) + "\r" + "\r" + second
    assert "\033" not in out.getvalue() and "\n" not in out.getvalue()


def test_a_run_past_its_last_submission_is_never_shown_past_100_percent(tmp_path):
    # measured on the README's KTH week: "t=10.1h/3.0h (100%)" while jobs still ran
    specs = [spec(tmp_path, "a")]
    Path(specs[0].progress_path).write_text("36360.000000 10800.000000 412 500\n")
    assert Display(specs, stream=io.StringIO()).line().endswith(
        "running: a t=10.1h (last submission 3.0h), 412/500 jobs ended (82%)")
    Path(specs[0].progress_path).write_text("36400.000000 10800.000000 503 500\n")   # registered jobs count too
    assert Display(specs, stream=io.StringIO()).line().endswith("500/500 jobs ended (99%)")


@pytest.mark.parametrize("child, said", [
    ("print('compiling the planning core once (...)', flush=True)", ["robin: compiling the planning core once (...)"]),
    ("import time; time.sleep(0.5)", []),     # loaded from the cache, however long it took: nothing said
])
def test_what_the_child_says_of_a_compile_is_passed_on_and_nothing_else(monkeypatch, child, said):
    from batloc.robin import kernel
    from batloc.robin.process import Stop

    monkeypatch.setattr(kernel, "WARM_UP", child)
    lines = []
    kernel.prepare([{"name": "lea", "policy": "lea"}], lines.append, lines.append, Stop())
    assert lines == said
    kernel.prepare([{"name": "x", "command": "pybatsim schedFcfs"}], lines.append, lines.append, Stop())
    assert lines == said     # no planning policy: nothing to load


def test_a_failed_load_is_one_warning_with_its_last_line(monkeypatch):
    from batloc.robin import kernel
    from batloc.robin.process import Stop

    monkeypatch.setattr(kernel, "WARM_UP", "import sys; print('a traceback', file=sys.stderr); sys.exit('boom')")
    lines = []
    kernel.prepare([{"name": "lea", "policy": "lea"}], lines.append, lines.append, Stop())
    assert lines == ["robin: warning: loading the planning core failed (boom); each run will try itself"]
