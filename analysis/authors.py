"""batloc's results counted as the authors' simulator counts them, beside its own.

The oracle folder (``../shared/data/oracle/``) holds, for one input, the C
simulator's per-job and aggregate results. Its stretch divides a job's
response time by its delay plus one load of its file at the reference
bandwidth (0.1 GB/s, Rackham's), not by its measured run time, and its file
wait is the transfer plus the wait for another job's load, in whole seconds.
"""

import json
import os

import pandas as pd

from batloc.analysis import load, metrics

AUTHORS_BANDWIDTH = 0.1e9


def authors_name(variant):
    """fcfs_bf -> fcfs-bf, the oracle's file names."""
    return variant.replace("_", "-")


def profile_delays(workload_path):
    """Job id -> the delay of its profile (the authors' stretch denominator)."""
    with open(workload_path) as f:
        data = json.load(f)
    profiles = data.get("profiles", {})
    return {str(j["id"]): float(profiles[j["profile"]]["delay"]) for j in data["jobs"]}


def per_job(prefix, workload_path, platform):
    """Per evaluated job of a batloc run: transfer, file wait, load time and the authors' stretch."""
    delays = profile_delays(workload_path)
    workload = load.read_workload(workload_path)
    jobs = load.read_jobs(f"{prefix}_jobs.csv")
    decisions = load.read_decisions(f"{prefix}_decisions.csv")
    table = metrics.per_job(jobs, workload, decisions, load.reference_bandwidth(platform))
    table = table[table["evaluated"]].set_index("job_id")
    reference = table.index.map(delays).astype(float) + table["input_size"] / AUTHORS_BANDWIDTH
    table["authors_stretch"] = (table["finish_time"] - table["submission_time"]) / reference
    return table


def compare(variant, table, oracle_dir, jobs=None):
    """batloc's totals beside the authors' (pairs ours, theirs), and the share of
    jobs whose file wait equals theirs to the second; `jobs` restricts both sides
    to those ids (then the totals are recomputed from the per-job files)."""
    theirs_all = pd.read_csv(os.path.join(oracle_dir, "per-job", authors_name(variant) + ".csv"))
    theirs_all = theirs_all.set_index(theirs_all["job_id"].astype(str))
    done = table[table["ended"]]
    if jobs is not None:
        theirs_all = theirs_all.loc[theirs_all.index.intersection(list(jobs))]
        done = done.loc[done.index.intersection(list(jobs))]
        agg = dict(total_transfer_s=float("nan"), total_wait_load_s=float("nan"),
                   total_transfer_plus_wait_s=theirs_all["transfer_plus_wait_for_load"].sum(),
                   mean_stretch=theirs_all["stretch"].mean())
    else:
        agg = pd.read_csv(os.path.join(oracle_dir, "aggregates.csv")).set_index("variant").loc[
            authors_name(variant)]
    theirs = theirs_all["transfer_plus_wait_for_load"]
    ours = done["load_time"].round().reindex(theirs.index)
    return dict(variant=variant, completed=len(done), evaluated=len(table),
                transfer=(done["transfer_time"].sum(), agg["total_transfer_s"]),
                wait=(done["file_wait"].sum(), agg["total_wait_load_s"]),
                total=(done["load_time"].sum(), agg["total_transfer_plus_wait_s"]),
                stretch=(done["authors_stretch"].mean(), agg["mean_stretch"]),
                exact=float((ours == theirs).sum()) / len(theirs) if len(theirs) else float("nan"))
