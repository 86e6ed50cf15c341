"""The descriptions shipped in experiments/ run from any folder, as the README promises for an
installed wheel: robin and `batloc study` find a description (and the inputs it names) in the
package when the current folder has no file of that name; a file of that name here wins.
No simulation runs: each command stops at a one-line refusal that comes after the lookup.
"""

import subprocess
import sys
from pathlib import Path

from batloc.robin import description as rd

PY = sys.executable


def test_a_shipped_description_and_its_inputs_are_found_from_another_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = rd.packaged("experiments/sweep-small.yaml")
    assert path == rd.package_root() / "experiments" / "sweep-small.yaml"
    desc = rd.load_description(path)
    for name in desc["platforms"] + desc["workloads"]:
        assert rd.resolve_input(name).is_relative_to(rd.package_root()), name
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "sweep-small.yaml").write_text("output-dir: mine\n")
    assert rd.packaged("experiments/sweep-small.yaml") == Path("experiments/sweep-small.yaml")


def test_robin_runs_a_shipped_sweep_from_another_folder(tmp_path):
    # the sweep is read and its inputs resolved before --dask's size is checked
    proc = subprocess.run([PY, "-m", "batloc.robin", "experiments/sweep-small.yaml", "--dask", "local:0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["robin: --dask local:0: expected local:N with N ≥ 1 workers"]


def test_batloc_study_reads_a_shipped_study_file_from_another_folder(tmp_path):
    proc = subprocess.run([PY, "-m", "batloc.cli.main", "study", "paper", "experiments/paper-study.yaml",
                           "--trace", "missing.swf.gz", "--prepare-only"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("batloc study: trace not found: missing.swf.gz")
