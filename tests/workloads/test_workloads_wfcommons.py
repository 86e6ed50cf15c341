"""`batloc workload from-wfcommons`: WfFormat instances (made here, small) into workflows of a workload."""

import json

import pytest

from batloc.locality.workflow import check
from batloc.workloads import cli, wfcommons


def instance_15(name="tiny"):
    """A diamond in WfFormat 1.5: split -> (left, right) -> merge, reading ref.fa (on Lustre)."""
    tasks = [("split", [], ["ref.fa", "in.dat"], ["a.part", "b.part"], 10.0, 1),
             ("left", ["split"], ["a.part", "ref.fa"], ["a.out"], 20.0, 4),
             ("right", ["split"], ["b.part"], ["b.out"], 30.0, 2.5),
             ("merge", ["left", "right"], ["a.out", "b.out"], ["result"], 5.0, 1)]
    files = {"ref.fa": 4000, "in.dat": 1000, "a.part": 500, "b.part": 500, "a.out": 200, "b.out": 300, "result": 10}
    return {"name": name, "schemaVersion": "1.5", "workflow": {
        "specification": {
            "tasks": [{"name": n, "id": f"ID_{n}", "parents": [f"ID_{p}" for p in ps], "children": [],
                       "inputFiles": i, "outputFiles": o} for n, ps, i, o, _, _ in tasks],
            "files": [{"id": f, "sizeInBytes": s} for f, s in files.items()]},
        "execution": {"makespanInSeconds": 65, "executedAt": "2026-01-01T00:00:00Z",
                      "tasks": [{"id": f"ID_{n}", "runtimeInSeconds": r, "coreCount": c}
                                for n, _, _, _, r, c in tasks]}}}


def instance_14():
    return {"name": "old", "schemaVersion": "1.4", "workflow": {"tasks": [
        {"name": "a", "parents": [], "runtimeInSeconds": 3, "cores": 1,
         "files": [{"link": "input", "name": "x", "sizeInBytes": 100}, {"link": "output", "name": "y", "sizeInBytes": 50}]},
        {"name": "b", "parents": ["a"], "runtime": 4,
         "files": [{"link": "input", "name": "y", "size": 0.05}]}]}}


def test_a_15_instance_becomes_a_workflow_folded_into_a_background(tmp_path, capsys):
    (tmp_path / "tiny.json").write_text(json.dumps(instance_15()))
    background = {"nb_res": 40, "profiles": {"d100": {"type": "delay", "delay": 100}},
                  "jobs": [{"id": i, "subtime": 50.0 * i, "res": 1, "walltime": 200, "profile": "d100",
                            "input_file": "F", "input_size": 1e9} for i in range(1, 4)]}
    (tmp_path / "bg.json").write_text(json.dumps(background))
    out = tmp_path / "wf.json"
    rc = cli.main(["from-wfcommons", str(tmp_path / "tiny.json"), "-o", str(out), "--background",
                   str(tmp_path / "bg.json"), "--start", "60", "--every", "1h", "--copies", "2",
                   "--size-scale", "1e6", "--runtime-scale", "2", "--bandwidth", "1e9"])
    assert rc == 0
    doc = json.loads(out.read_text())
    jobs = check(doc)            # the workflow rules hold
    # the background's jobs (at 50, 100, 150) and the workflows' roots, in submission order
    assert [str(j["id"]) for j in doc["jobs"]] == ["1", "4", "2", "3", "8"]
    # workflow 0 (ids 4-7) arrives at 60, workflow 1 (8-11) at 3660; only their roots are static
    roots = [j for j in doc["jobs"] if j.get("workflow")]
    assert [(j["id"], j["subtime"], j["workflow"]) for j in roots] == [("4", 60.0, "wf0"), ("8", 3660.0, "wf1")]
    left = jobs["5"]
    assert left["parents"] == ["4"] and left["res"] == 4 and left["profile"] == "d40"
    # outputs are the workflow's own; Lustre inputs are shared by both copies
    assert left["inputs"] == [{"file": "wf0/a.part", "size": 5e8}, {"file": "ref.fa", "size": 4e9}]
    assert jobs["9"]["inputs"][1]["file"] == "ref.fa" and jobs["9"]["inputs"][0]["file"] == "wf1/a.part"
    assert jobs["6"]["res"] == 3                                    # coreCount 2.5 -> 3 cores
    assert jobs["7"]["parents"] == ["5", "6"] and jobs["7"]["outputs"] == [{"file": "wf0/result", "size": 1e7}]
    # walltime: 2 x (run time 40 + loads 4.5 GB at 1 GB/s) = 89
    assert left["walltime"] == 89
    assert doc["batloc"]["workflows"][1] == {"id": "wf1", "instance": "tiny", "arrival": 3660.0, "tasks": 4,
                                             "roots": 1}
    assert "2 workflows (8 tasks, 6 dependent)" in capsys.readouterr().out


def test_a_14_instance_is_read_too(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps(instance_14()))
    inst = wfcommons.read_instance(str(tmp_path / "old.json"))
    assert [(t.id, t.parents, t.runtime, t.inputs, t.outputs) for t in inst.tasks] == [
        ("a", [], 3.0, ["x"], ["y"]), ("b", ["a"], 4.0, ["y"], [])]
    assert inst.sizes == {"x": 100.0, "y": 50.0}


def test_an_instance_with_a_task_missing_its_run_is_one_line(tmp_path, capsys):
    bad = instance_15()
    bad["workflow"]["execution"]["tasks"].pop()
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    rc = cli.main(["from-wfcommons", str(tmp_path / "bad.json"), "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert rc != 0 and "task ID_merge has no execution entry" in err and "Traceback" not in err


def test_a_cycle_in_an_instance_names_the_file_and_the_task(tmp_path, capsys):
    # it named "job 1", a number of the converted workload, and no file (the probe)
    bad = instance_15()
    bad["workflow"]["specification"]["tasks"][0]["parents"] = ["ID_merge"]
    (tmp_path / "cyc.json").write_text(json.dumps(bad))
    rc = cli.main(["from-wfcommons", str(tmp_path / "cyc.json"), "-o", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "cyc.json: task ID_split depends on itself through its parents (a cycle)" in err, err


def test_a_task_of_no_run_time_gets_the_least_delay_batsim_accepts(tmp_path):
    # Batsim 4.2.1 refuses a delay profile of 0 s (recipes' instances hold such tasks): 1 µs instead
    doc = instance_15()
    doc["workflow"]["execution"]["tasks"][3]["runtimeInSeconds"] = 0
    (tmp_path / "tiny.json").write_text(json.dumps(doc))
    out = tmp_path / "wf.json"
    assert cli.main(["from-wfcommons", str(tmp_path / "tiny.json"), "-o", str(out), "--bandwidth", "1e9"]) == 0
    wl = json.loads(out.read_text())
    assert all(p["delay"] > 0 for p in wl["profiles"].values())
    merge = [j for j in wl["dependent_jobs"] if j["task"] == "merge"][0]
    assert wl["profiles"][merge["profile"]]["delay"] == 1e-6
