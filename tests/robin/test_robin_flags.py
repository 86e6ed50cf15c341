"""Every robin flag reaches the sweep it is given with: the flag form (--platform/--workload/--schedulers) and a
description file alike. Until 2026-11 the flag form dropped the four timeouts (`--ready-timeout 120` was
accepted and ignored, each run then failing its 10 s ready timeout on a loaded machine), and a description
file dropped them and --output-dir."""

import pytest

from batloc.robin import cli as robin_cli
from batloc.robin import process as robin_process
from batloc.robin import runs as robin_runs
from batloc.robin.process import Timeouts
from engine_harness import platform_xml, write


@pytest.fixture
def inputs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=1, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 2, "profiles": {"d5": {"type": "delay", "delay": 5}}, "jobs": [
        {"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d5"}]})
    return platform, wl


@pytest.fixture
def captured(monkeypatch):
    """What robin hands its sweep: the runs built from the description, and run_sweep's other arguments."""
    seen = {}

    def fake_run_sweep(desc, jobs, force, report, log, dask=None, refuse_changed=False, quiet=False):
        out, specs, baseline = robin_runs.sweep_runs(desc)
        seen.update(desc=desc, out=out, specs=specs, baseline=baseline, jobs=jobs, force=force, report=report,
                    dask=dask, refuse_changed=refuse_changed, quiet=quiet, pin=robin_process.CPUS.enabled)
        return 0

    monkeypatch.setattr(robin_cli, "run_sweep", fake_run_sweep)
    monkeypatch.setattr(robin_process.CPUS, "enabled", True)
    return seen


def flag_form(tmp_path, platform, wl):
    return ["--output-dir", str(tmp_path / "out"), "--platform", str(platform), "--workload", str(wl),
            "--schedulers", "fcfs,lea"]


def description_file(tmp_path, platform, wl):
    path = write(tmp_path, "sweep.json", {"output-dir": str(tmp_path / "from-file"), "platforms": [str(platform)],
                                          "workloads": [str(wl)], "schedulers": ["fcfs", "lea"],
                                          "ready-timeout": 7, "pybatsim-verbosity": "error"})
    return [str(path)]


DEFAULT = Timeouts()

# flag → (its arguments, what the sweep must then see); every robin option is here (checked below)
CASES = {
    "--simulation-timeout": (["--simulation-timeout", "99"], lambda s: s["specs"][0].timeouts.simulation == 99),
    "--ready-timeout": (["--ready-timeout", "120.5"], lambda s: all(r.timeouts.ready == 120.5 for r in s["specs"])),
    "--success-timeout": (["--success-timeout", "98"], lambda s: s["specs"][0].timeouts.success == 98),
    "--failure-timeout": (["--failure-timeout", "97"], lambda s: s["specs"][0].timeouts.failure == 97),
    "--baseline": (["--baseline", "lea"], lambda s: s["baseline"] == "lea"),
    "--jobs": (["--jobs", "3"], lambda s: s["jobs"] == 3),
    "-j": (["-j", "2"], lambda s: s["jobs"] == 2),
    "--force": (["--force"], lambda s: s["force"] is True),
    "--refuse-changed": (["--refuse-changed"], lambda s: s["refuse_changed"] is True),
    "--no-report": (["--no-report"], lambda s: s["report"] is False),
    "--quiet": (["--quiet"], lambda s: s["quiet"] is True),
    "-q": (["-q"], lambda s: s["quiet"] is True),
    "--no-pin": (["--no-pin"], lambda s: s["pin"] is False),
    "--pybatsim-verbosity": (["--pybatsim-verbosity", "info"],
                             lambda s: all(r.build.verbosity == "info" for r in s["specs"])),
    "--in-process": (["--in-process"], lambda s: all(r.meta.get("in_process") for r in s["specs"])),
    "--dask": (["--dask", "local:1"], lambda s: s["dask"] == "local:1"),
}
# the flags that make the flag form itself, and those of a single run only (refused with a sweep: below)
FORM = {"--output-dir", "--platform", "--workload", "--schedulers", "-h", "--help"}
SINGLE = {"--batcmd", "--schedcmd"}


def test_every_robin_option_is_covered_here():
    options = {o for a in robin_cli._parser()._actions for o in a.option_strings}
    assert options == set(CASES) | FORM | SINGLE


@pytest.mark.parametrize("flag", sorted(CASES))
def test_each_flag_reaches_a_flag_form_sweep(tmp_path, inputs, captured, flag):
    args, holds = CASES[flag]
    assert robin_cli.main(flag_form(tmp_path, *inputs) + args) == 0
    assert captured["out"] == tmp_path / "out" and [r.meta["scheduler"]["name"] for r in captured["specs"]] == \
        ["fcfs", "lea"]
    assert holds(captured), (flag, captured)


def test_without_flags_the_sweep_has_the_defaults(tmp_path, inputs, captured):
    assert robin_cli.main(flag_form(tmp_path, *inputs)) == 0
    assert captured["specs"][0].timeouts == DEFAULT and DEFAULT.ready >= 60     # room to load the planning core
    assert (captured["baseline"], captured["force"], captured["report"], captured["dask"], captured["pin"]) == \
        ("fcfs", False, True, None, True)
    assert all(r.build.verbosity == "warning" and not r.meta.get("in_process") for r in captured["specs"])


@pytest.mark.parametrize("flag", sorted(CASES))
def test_each_flag_reaches_a_description_files_sweep(tmp_path, inputs, captured, flag):
    args, holds = CASES[flag]
    assert robin_cli.main(description_file(tmp_path, *inputs) + args) == 0
    assert holds(captured), (flag, captured)


def test_the_command_line_wins_over_the_description_file(tmp_path, inputs, captured):
    assert robin_cli.main(description_file(tmp_path, *inputs)) == 0
    assert captured["out"] == tmp_path / "from-file" and captured["specs"][0].timeouts.ready == 7
    assert captured["specs"][0].build.verbosity == "error"
    assert robin_cli.main(description_file(tmp_path, *inputs) + ["--output-dir", str(tmp_path / "elsewhere"),
                                                                 "--ready-timeout", "45"]) == 0
    assert captured["out"] == tmp_path / "elsewhere" and captured["specs"][0].timeouts.ready == 45


@pytest.mark.parametrize("form", [flag_form, description_file])
@pytest.mark.parametrize("flag", sorted(SINGLE))
def test_single_run_flags_are_refused_with_a_sweep(tmp_path, inputs, captured, capsys, form, flag):
    assert robin_cli.main(form(tmp_path, *inputs) + [flag, "true"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"robin: {flag} describe") and err.count("\n") == 1, err
    assert not captured


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_runs_at_once_below_one_are_refused_in_one_line(tmp_path, inputs, captured, capsys, value):
    with pytest.raises(SystemExit) as exc:
        robin_cli.main(flag_form(tmp_path, *inputs) + ["--jobs", value])
    assert exc.value.code == 2 and not captured
    err = capsys.readouterr().err
    assert err.startswith("robin: argument -j/--jobs: ") and value in err and err.count("\n") == 1, err


def test_a_baseline_that_is_none_of_the_sweeps_schedulers_is_refused_in_one_line(tmp_path, inputs, captured, capsys):
    assert robin_cli.main(flag_form(tmp_path, *inputs) + ["--baseline", "nosuch"]) == 1
    assert capsys.readouterr().err == "robin: baseline 'nosuch' names no scheduler of the sweep (fcfs, lea)\n"


def test_a_sweep_without_its_default_baseline_says_so_before_it_runs(tmp_path, inputs, monkeypatch):
    # Batsim's own files under stock schedulers named otherwise: the report would compare nothing, silently
    from types import SimpleNamespace

    import batloc.analysis.report
    from batloc.robin import kernel, sweep

    monkeypatch.setattr(kernel, "prepare", lambda *a, **k: None)
    monkeypatch.setattr(sweep, "run_threads", lambda todo, jobs, display: None)
    monkeypatch.setattr(batloc.analysis.report, "build_report",
                        lambda out, baseline: SimpleNamespace(html=out / "report.html", seconds=0.0))
    platform, wl = inputs
    lines = []
    desc = {"output-dir": str(tmp_path / "out"), "platforms": [str(platform)], "workloads": [str(wl)],
            "schedulers": [{"name": "stock", "command": "pybatsim schedFcfs"}, "lea"]}
    sweep.run_sweep(desc, 1, False, True, lines.append, quiet=True)
    assert ("robin: no scheduler of the sweep is the baseline fcfs (the default): the report will show each "
            "run's figures and compare none; `baseline: NAME` in a sweep file (--baseline) names one of stock, "
            "lea") in lines
    lines.clear()
    sweep.run_sweep({**desc, "schedulers": ["fcfs", "lea"]}, 1, False, True, lines.append, quiet=True)
    assert not any("no scheduler of the sweep is the baseline" in line for line in lines)
