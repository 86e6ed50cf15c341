"""Per-workflow metrics (analysis/workflows.py) of hand-computed runs (test_workflow_schedules)."""

import math

from batloc.analysis.load import read_decisions, read_jobs
from batloc.analysis.workflows import WorkflowJobs, gantt, per_workflow
from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.lea import Lea

from test_workflow_schedules import CHAIN, GB
from test_workflow_validation import dry_run_files


def metrics(tmp_path, cls, options=None):
    prefix, wl, _ = dry_run_files(tmp_path, cls, CHAIN, options)
    jobs, decisions = read_jobs(f"{prefix}_jobs.csv"), read_decisions(f"{prefix}_decisions.csv")
    wf = WorkflowJobs.read(wl)
    return per_workflow(jobs, decisions, wf).set_index("workflow").loc["wf"], (jobs, decisions, wf)


def test_chain_metrics_under_fcfs_and_lea(tmp_path):
    # FCFS (test_chain_fcfs...): A [1: 11-21], B on n001 after loading oA [26,36), C hit [36,46).
    m, _ = metrics(tmp_path, Fcfs)
    assert (m["makespan"], m["critical_path"], m["cp_stretch"]) == (45.0, 30.0, 1.5)
    assert (m["output_reads"], m["output_hits"], m["output_reuse"]) == (2, 1, 0.5)
    assert (m["bytes_from_lustre"], m["bytes_from_nodes"], m["bytes_written_back"]) == (15 * GB, 0.0, 0.0)
    # LEA keeps the chain on n000: both outputs read from memory, only X loaded.
    m, _ = metrics(tmp_path, Lea)
    assert (m["makespan"], m["output_reuse"], m["bytes_moved"]) == (40.0, 1.0, 10 * GB)


def test_staged_write_back_counts_node_to_node_loads_and_write_backs(tmp_path):
    m, (jobs, decisions, wf) = metrics(tmp_path, Fcfs, {"write_back": "staged"})
    # X from Lustre; oA from n000's memory to n001; oA and oB written back (C writes nothing)
    assert (m["bytes_from_lustre"], m["bytes_from_nodes"], m["bytes_written_back"]) == (10 * GB, 5 * GB, 10 * GB)
    png = gantt(jobs, decisions, wf, "wf", tmp_path / "gantt")
    assert png.exists() and png.with_suffix(".svg").exists()


def test_a_workflow_with_a_failed_task_has_no_makespan(tmp_path):
    from test_workflow_schedules import task
    prefix, wl, _ = dry_run_files(tmp_path, Fcfs, [task(1, 200, reads=[("X", 10)], writes=[("oA", 5)], t=1,
                                                        wall=50)] + CHAIN[1:3])
    m = per_workflow(read_jobs(f"{prefix}_jobs.csv"), read_decisions(f"{prefix}_decisions.csv"),
                     WorkflowJobs.read(wl)).iloc[0]
    assert m["completed"] == 0 and math.isnan(m["makespan"])
