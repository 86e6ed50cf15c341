"""Every road to a run gives the same numbers (issue 36): robin, `batloc-batsim --in-process lea`, `batloc-batsim`
with `batloc scheduler lea` over ZeroMQ, and `batloc.api.run` write the same outputs, which load into the same
per-job table and mean stretch; and a run that fails is one line."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import batloc.api as bl
from batloc.analysis import load
from batloc.analysis.runs import Inputs, analyse_run
from batloc.processes import free_port

pytestmark = pytest.mark.needs_engine

ENGINE = [sys.executable, "-m", "batloc.engine"]
BATLOC = [sys.executable, "-m", "batloc.cli.main"]
OUTPUTS = ("jobs", "decisions", "predictions", "schedule", "machine_states")


def files_jobs(n=30):
    """Jobs sharing six files on two 2-core nodes: loads, hits, and job 7 killed while its file loads."""
    jobs = []
    for i in range(n):
        delay = 5 + (i * 7) % 40
        jobs.append(dict(id=i, subtime=2 * i, res=1 + i % 2, walltime=delay + 20, delay=delay, user=f"u{i % 3}",
                         input_file=f"f{(i * 5) % 6}", input_size=(1 + i % 4) * 1e10))
    jobs[7]["walltime"] = 3
    return jobs


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    platform = bl.platform(nodes=2, cores=2, memory="100GB", node_bw="1GB/s", name="two").save(folder / "p.xml")
    workload = bl.workload(files_jobs(), platform=platform).save(folder / "w.json")
    return platform, workload


def by_robin(folder, platform, workload):
    proc = subprocess.run([sys.executable, "-m", "batloc.robin", "--output-dir", str(folder), "--platform",
                           str(platform), "--workload", str(workload), "--schedulers", "lea", "--no-report", "-q",
                           "--jobs", "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return folder / "runs" / "p__w__lea" / "out"


def by_engine_in_process(folder, platform, workload):
    folder.mkdir()
    proc = subprocess.run(ENGINE + ["-p", str(platform), "-w", str(workload), "-e", str(folder / "out"), "-q",
                                    "--enable-dynamic-jobs", "--in-process", "lea"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return folder / "out"


def by_engine_and_scheduler(folder, platform, workload):
    """Over ZeroMQ the scheduler cannot know the engine's prefix (nor can it on Batsim): it is told, as robin
    tells it."""
    folder.mkdir()
    prefix = folder / "out"
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    with open(folder / "scheduler.log", "w") as log:
        scheduler = subprocess.Popen(BATLOC + ["scheduler", "lea", "-s", endpoint, "-o",
                                               json.dumps({"export_prefix": str(prefix)})],
                                     stdout=log, stderr=subprocess.STDOUT)
        try:
            proc = subprocess.run(ENGINE + ["-p", str(platform), "-w", str(workload), "-e", str(prefix), "-q",
                                            "--enable-dynamic-jobs", "-s", endpoint.replace("127.0.0.1", "localhost"),
                                            "--ready-timeout", "300"], capture_output=True, text=True, timeout=600)
            assert scheduler.wait(timeout=60) == 0, (folder / "scheduler.log").read_text()
        finally:
            if scheduler.poll() is None:
                scheduler.kill()
                scheduler.wait()
    assert proc.returncode == 0, proc.stderr
    return prefix


def by_api(folder, platform, workload):
    run = bl.run(platform, workload, "lea", output_dir=folder, progress=False)
    assert len(run.jobs) == sum(1 for _ in open(f"{run.prefix}_jobs.csv")) - 1
    return run.prefix


ROADS = {"robin": by_robin, "batloc-batsim --in-process": by_engine_in_process,
         "batloc-batsim + batloc scheduler": by_engine_and_scheduler, "batloc.api.run": by_api}


def test_every_road_gives_the_same_outputs_tables_and_stretch(tmp_path, inputs):
    platform, workload = inputs
    prefixes = {road: make(tmp_path / road.replace(" ", "_").replace("+", "and"), platform, workload)
                for road, make in ROADS.items()}
    reference = prefixes["robin"]
    jobs = pd.read_csv(f"{reference}_jobs.csv")
    assert {"COMPLETED_KILLED", "COMPLETED_SUCCESSFULLY"} <= set(jobs["final_state"])   # a kill while loading
    assert jobs["job_id"].str.startswith("stage-").any()
    for road, prefix in prefixes.items():
        for name in OUTPUTS:
            assert Path(f"{prefix}_{name}.csv").read_bytes() == Path(f"{reference}_{name}.csv").read_bytes(), \
                (road, name)
    tables, stretches = {}, {}
    for road, prefix in prefixes.items():
        has_run_json = (prefix.parent / "run.json").exists()
        given = {} if has_run_json else {"platform": platform, "workload": workload}
        files = load.RunFiles(name="lea", directory=prefix.parent, prefix=prefix,
                              meta=load.read_run_json(prefix.parent / "run.json")[0])
        result = analyse_run(files, Inputs(workload if not has_run_json else None,
                                           platform if not has_run_json else None))[0]
        tables[road] = result.jobs
        df = load.jobset(prefix, **given).df
        stretches[road] = (df.loc[df["evaluated"], "stretch"].mean(), result.summary["mean_stretch"])
        assert stretches[road][0] == pytest.approx(stretches[road][1], rel=1e-6), road   # as the report says it
    for road in ROADS:
        pd.testing.assert_frame_equal(tables[road], tables["robin"], obj=road)
        assert stretches[road] == stretches["robin"], road
    api = bl.Run(prefixes["batloc.api.run"].parent)   # what a notebook reads: the same table, the same stretch
    pd.testing.assert_frame_equal(api.per_job, tables["robin"])
    assert api.summary["mean_stretch"] == stretches["robin"][1] and api.validate()
    assert api.decisions is not None and len(api.decisions) == len(api.per_job)   # every job took its cores
    assert (tables["robin"]["load_time"] > 0).any() and tables["robin"]["cache"].isin(["hit", "wait"]).any()


def test_a_run_that_fails_is_one_line(tmp_path, inputs):
    platform, workload = inputs
    with pytest.raises(bl.BatlocError) as err:
        bl.run(platform, workload, "no_such_scheduler", output_dir=tmp_path / "run", progress=False)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"run {tmp_path / 'run'} failed: ")
    assert "no scheduler no_such_scheduler: not a file" in text
    assert text.endswith(f"(logs in {tmp_path / 'run' / 'log'})")
    with pytest.raises(bl.BatlocError, match="^input file not found: nothing.xml"):
        bl.run("nothing.xml", workload, "lea", output_dir=tmp_path / "run2", progress=False)
    with pytest.raises(bl.BatlocError, match="not a run folder"):
        bl.Run(tmp_path)
