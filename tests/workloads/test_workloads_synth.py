"""Synthetic workloads: knobs do what they say, and the same seed gives the same jobs."""

import numpy as np
import pytest

from batloc.workloads.stats import workload_stats
from batloc.workloads.synth import SynthSpec, generate

SMALL = dict(nodes=20, duration=2 * 86400.0, users=30)


def test_same_seed_same_jobs_other_seed_other_jobs():
    a, b = generate(SynthSpec(seed=4, **SMALL)), generate(SynthSpec(seed=4, **SMALL))
    assert a.equals(b)
    assert not a.equals(generate(SynthSpec(seed=5, **SMALL)))


@pytest.mark.parametrize("load", [0.3, 1.2])
def test_offered_load(load):
    table = generate(SynthSpec(load=load, **SMALL))
    assert workload_stats(table, 20 * 20)["offered load"] == pytest.approx(load, rel=0.05)


def test_jobs_per_file_and_file_sizes():
    table = generate(SynthSpec(jobs_per_file=6, seed=1, **SMALL))
    per_file = table.groupby("input_file").size()
    assert per_file.mean() == pytest.approx(6, rel=0.15)
    assert (table.groupby("input_file")["user"].nunique() == 1).all()
    assert (table.groupby("input_file")["cores"].nunique() == 1).all()
    assert np.allclose(table["input_size"], table["cores"] / 20 * 128e9)


def test_core_mix_walltime_accuracy_and_bounds():
    table = generate(SynthSpec(core_mix={1: 1, 20: 1}, walltime_accuracy=0.8, seed=2, **SMALL))
    assert set(table["cores"]) == {1, 20}
    assert (table["walltime"] >= table["run_time"]).all()
    assert (table["run_time"] / table["walltime"]).mean() == pytest.approx(0.8, abs=0.08)
    assert table["submit"].min() >= 1 and table["id"].tolist() == list(range(1, len(table) + 1))
    exact = generate(SynthSpec(walltime_accuracy=1.0, **SMALL))
    assert (exact["walltime"] == exact["run_time"]).all()


def test_burstiness_changes_gap_variability():
    def gap_cv(burstiness):
        table = generate(SynthSpec(burstiness=burstiness, jobs_per_file=1, seed=3, **SMALL))
        gaps = np.diff(np.sort(table["submit"].to_numpy()))
        return gaps.std() / gaps.mean()
    assert gap_cv(0) < 0.5 < gap_cv(1) < gap_cv(3)


@pytest.mark.parametrize("bad", [dict(load=0), dict(jobs_per_file=0.5), dict(walltime_accuracy=1.5),
                                 dict(core_mix={40: 1.0}), dict(burstiness=-1)])
def test_bad_knobs(bad):
    with pytest.raises(ValueError):
        generate(SynthSpec(**{**SMALL, **bad}))


def test_default_core_mix_scales_to_smaller_nodes():
    from batloc.workloads.synth import DEFAULT_CORE_MIX, default_core_mix

    assert default_core_mix(20) == DEFAULT_CORE_MIX
    mix = default_core_mix(4)
    # 1→1, 2→1 (0.4), 4→1 (0.8), 5→1, 8→2, 10→2, 16→3, 20→4
    assert sorted(mix) == [1, 2, 3, 4]
    assert mix[1] == pytest.approx(0.40 + 0.12 + 0.12 + 0.04)
    assert mix[4] == pytest.approx(0.12)
    assert sum(mix.values()) == pytest.approx(sum(DEFAULT_CORE_MIX.values()))
