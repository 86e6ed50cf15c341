"""robin's `instant: true`: the embedded engine's instant mode (batloc-batsim --instant) for one run or a sweep;
refused with real Batsim, which has only its own messages."""

import shlex

import pytest

from batloc.robin import description as rd
from batloc.robin import runs
from engine_harness import platform_xml, write


def inputs(tmp_path):
    platform = write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
    wl = write(tmp_path, "w.json", {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}},
                                    "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "d"}]})
    return platform, wl


def test_instant_reaches_the_embedded_engine_and_its_configuration(tmp_path):
    platform, wl = inputs(tmp_path)
    base = {"output-dir": str(tmp_path / "one"), "platform": platform, "workload": wl, "scheduler": "fcfs"}
    assert "--instant" not in shlex.split(runs.single_run(base).batcmd)
    spec = runs.single_run({**base, "instant": True})
    assert shlex.split(spec.batcmd).count("--instant") == 1
    spec = runs.single_run({**base, "instant": True, "engine-args": ["--instant"]})
    assert shlex.split(spec.batcmd).count("--instant") == 1   # said twice, passed once
    sweep = {"output-dir": str(tmp_path / "sweep"), "platforms": [platform], "workloads": [wl], "schedulers": ["fcfs"]}
    _, (plain,), _ = runs.sweep_runs(sweep)
    _, (instant,), _ = runs.sweep_runs({**sweep, "instant": True})
    # the mode is part of a run's configuration: a sweep run again in the other mode is not skipped
    assert plain.meta["engine_args"] == [] and instant.meta["engine_args"] == ["--instant"]
    runs.bind_commands(instant)
    assert "--instant" in shlex.split(instant.batcmd)


def test_instant_is_refused_with_real_batsim_and_as_anything_but_a_boolean(tmp_path):
    platform, wl = inputs(tmp_path)
    base = {"output-dir": str(tmp_path / "one"), "platform": platform, "workload": wl, "scheduler": "fcfs"}
    with pytest.raises(rd.DescriptionError, match="instant is a mode of the embedded engine"):
        runs.single_run({**base, "instant": True, "batcmd": "batsim -p p.xml -w w.json"})
    sweep = {"output-dir": str(tmp_path / "sweep"), "platforms": [platform], "workloads": [wl], "schedulers": ["fcfs"],
             "engine": "batsim", "instant": True}
    with pytest.raises(rd.DescriptionError, match="instant is a mode of the embedded engine"):
        runs.sweep_runs(sweep)
    with pytest.raises(rd.DescriptionError, match="instant must be true or false"):
        runs.single_run({**base, "instant": "yes"})


def test_the_authors_profile_runs_the_embedded_engine_in_its_instant_mode(tmp_path):
    # the C simulator's clock sees one second's events at once: robin and --in-process give it the instant mode
    platform, wl = inputs(tmp_path)
    authors = {"policy": "lea", "options": {"profile": "authors"}}
    base = {"output-dir": str(tmp_path / "one"), "platform": platform, "workload": wl, "scheduler": authors}
    assert shlex.split(runs.single_run(base).batcmd).count("--instant") == 1
    assert "--instant" not in shlex.split(runs.single_run({**base, "scheduler": "lea"}).batcmd)
    sweep = {"output-dir": str(tmp_path / "sweep"), "platforms": [platform], "workloads": [wl],
             "schedulers": ["lea", {**authors, "name": "lea-authors"}]}
    _, (paper, c_like), _ = runs.sweep_runs(sweep)
    assert paper.meta["engine_args"] == [] and c_like.meta["engine_args"] == ["--instant"]
    _, (_, on_batsim), _ = runs.sweep_runs({**sweep, "engine": "batsim"})
    assert on_batsim.meta["engine_args"] == []              # real Batsim has only its own messages


def test_the_in_process_engine_takes_the_instant_mode_for_the_authors_profile():
    from batloc.engine.cli import parse_args

    common = ["-p", "p.xml", "-w", "w.json", "--in-process", "lea"]
    assert parse_args(common + ["--scheduler-options", '{"profile": "authors"}']).instant
    assert not parse_args(common + ["--scheduler-options", '{"profile": "paper"}']).instant
    assert not parse_args(common + ["--scheduler-options", "not json"]).instant   # refused later, by the loader
