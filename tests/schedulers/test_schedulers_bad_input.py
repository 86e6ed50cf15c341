"""Bad input: missing file fields, a platform off-contract, jobs wider than a node, options."""

import pytest

from batloc.schedulers.planning.options import OptionsError
from batloc.locality.platform_view import PlatformError, PlatformView
from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.fcfs_bf import Fcfs_bf
from batloc.schedulers.lea import Lea


def wl(jobs):
    return {"jobs": jobs, "profiles": {"d10": {"type": "delay", "delay": 10.0}}}


def test_workload_without_file_fields_runs_as_fcfs_with_a_warning(capsys):
    # One node of 1 core: J1 [1,11), J2 (submitted at 2) [11,21); no staging at all.
    jobs = [{"id": 1, "subtime": 1, "res": 1, "walltime": 20, "profile": "d10"},
            {"id": 2, "subtime": 2, "res": 1, "walltime": 20, "profile": "d10"}]
    compute, storage = make_resources({"n000": 1})
    res = DryRun(Lea({}), compute, storage, wl(jobs)).run()
    assert {k: v["start"] for k, v in res.items()} == {"w0!1": 1.0, "w0!2": 11.0}
    assert "no input_file" in capsys.readouterr().err


def test_platform_without_node_memories_fails_with_the_contract():
    compute, storage = make_resources({"n000": 2})
    storage = [s for s in storage if not s["name"].endswith("_mem")]
    with pytest.raises(PlatformError, match=r"'<node>_mem'.*memory_bytes.*bandwidth"):
        PlatformView.from_resources(compute, storage)


def test_job_wider_than_a_node_is_rejected_with_its_id(capsys):
    jobs = [{"id": 7, "subtime": 1, "res": 3, "walltime": 20, "profile": "d10", "input_file": "A", "input_size": 1e9},
            {"id": 8, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10", "input_file": "A", "input_size": 1e9}]
    compute, storage = make_resources({"n000": 2, "n001": 2}, bandwidth=1e9)
    run = DryRun(Fcfs_bf({}), compute, storage, wl(jobs))
    res = run.run()
    assert run.rejected == ["w0!7"]
    assert "job w0!7 requests 3 cores" in capsys.readouterr().err
    assert res["w0!8"]["start"] == 2.0     # 1 + 1 GB / 1 GB/s


def test_unknown_and_bad_options_are_clear_errors():
    with pytest.raises(OptionsError, match="LEA: unknown scheduler option.*'w'"):
        Lea.parse_options({"w": 3})
    with pytest.raises(OptionsError, match="cache"):
        Lea.parse_options({"cache": "fifo"})
    with pytest.raises(OptionsError, match="queue_depth.*integer"):
        Lea.parse_options({"queue_depth": 2.5})
    with pytest.raises(OptionsError, match="ignore_files.*true or false"):
        Lea.parse_options({"ignore_files": "yes"})
    with pytest.raises(OptionsError, match="backfilling"):
        Fcfs_bf.parse_options({"backfilling": False})


def test_decisions_path_from_export_prefix():
    assert Lea({"export_prefix": "out/x"}).opts.decisions_path == "out/x_decisions.csv"
    assert Lea({}).opts.decisions_path is None


def test_options_whose_scores_or_loads_overflow_are_named():
    # W = 1e308 made every score t_k + W x overhead +inf: no node was chosen, and the run ended in a "deadlock"
    # that never named the option
    with pytest.raises(OptionsError, match=r"LEA: option 'W' must be at most 1e\+15 .* got 1e\+308"):
        Lea.parse_options({"W": 1e308})
    with pytest.raises(OptionsError, match=r"option 'bandwidth' must be a finite number of bytes/s >= 1"):
        Lea.parse_options({"bandwidth": 1e-300})
    assert Lea.parse_options({"W": 1e15}).W == 1e15
