"""Per-job and per-run metrics (docs/scheduler-semantics.md, "Metrics").

Per job J, joined from jobs.csv, the decision log and the workload:
- flow = finish − submission; wait = starting_time − submission (Batsim's
  waiting time: queueing plus loading, since starting_time is when computing
  starts); queue_time = reservation start − submission;
- stretch = flow / (input_size / bandwidth + run time)  (the paper's ReferenceFlow);
- transfer_time = duration of the staging job J triggered (cache `miss`);
  file_wait = time J held its cores waiting for a staging started for another
  job (cache `wait`), or for room in a node's memory (the staging proxy's
  `full` rows, counted from there); load_time = their sum, the paper's "time spent waiting
  for a file";
- memory_wait = the part of file_wait spent waiting for room in a node's
  memory (the staging proxy's `full` rows);
- loads = the staging jobs that loaded J's file (one per node of a job that
  spans nodes under the staging proxy); nodes = the nodes its cores are on;
- core_time = cores × (finish − reservation start): staging included, since
  cores are held from the decision on;
- bounded slowdown = max(1, flow / max(run time, BSLD_THRESHOLD)).
A job has *ended* when it has a start and a finish (killed jobs included);
it *completed* when it ended COMPLETED_SUCCESSFULLY; it was *killed* when cut
at its walltime (COMPLETED_WALLTIME_REACHED, or COMPLETED_KILLED: batloc's
schedulers kill at t_k + walltime themselves, contract §6), and *killed by
its load* when its own run (its delay profile) fits in its walltime, so that
without the load counted against the walltime it would have finished.
Means and totals are over ended jobs (a killed job's flow ends at the kill);
counts say how many completed, were killed, were rejected.
Run totals count only `evaluated` jobs, as the paper evaluates one window.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from batloc.locality.staging import STAGE_WORKLOAD


# Usual bounded-slowdown threshold (Feitelson): jobs shorter than 10 s count as 10 s.
BSLD_THRESHOLD = 10.0
KILLED_STATES = ("COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED")

JOB_COLUMNS = [
    "job_id", "user", "input_file", "input_size", "evaluated", "cores",
    "submission_time", "reservation_start", "starting_time", "finish_time", "run_time",
    "flow", "wait", "queue_time", "transfer_time", "file_wait", "load_time",
    "reference_flow", "stretch", "bsld", "core_time", "cache", "hit", "reuse", "node", "nodes", "loads",
    "memory_wait", "final_state", "ended", "completed", "killed", "killed_by_load", "rejected",
]


def served_job(staging_id: str) -> str:
    """The workload job id a staging job `stage-<workload>-<job>-<node>` loaded a file for ('' for a replication)."""
    if not staging_id.startswith("stage-"):
        return ""
    served = staging_id[len("stage-"):].rsplit("-", 1)[0]   # node names hold no '-'
    return served.split("-", 1)[1] if "-" in served else served


def per_job(jobs: pd.DataFrame, workload: "load.Workload", decisions: pd.DataFrame | None, bandwidth: float,
            node_of: dict | None = None) -> pd.DataFrame:
    """One row per workload job (staging jobs excluded), indexed like the workload.

    node_of: compute resource id → node name (the platform's), for the nodes a job's cores are on.

    Jobs absent from jobs.csv or rejected (no times) get ended=False and NaN metrics;
    an absent job's final_state is empty.
    """
    staging = jobs[jobs["workload_name"] == STAGE_WORKLOAD]
    own = jobs[jobs["workload_name"] != STAGE_WORKLOAD]
    # One workload per run (w0); keep the last row of a job id if several.
    own = own.drop_duplicates("job_id", keep="last").set_index("job_id")

    wl = workload.jobs.set_index("job_id")
    out = pd.DataFrame(index=wl.index)
    out["user"] = wl["user"]
    out["input_file"] = wl["input_file"].fillna("").astype(str)
    out["input_size"] = wl["input_size"].astype(float)
    out["evaluated"] = wl["evaluated"].astype(bool)
    if "session" in wl.columns:
        out["session"] = wl["session"]
    if "source_id" in wl.columns:   # the trace's own job id (converted traces): joins results to the log
        out["source_id"] = wl["source_id"]
    got = own.reindex(out.index)
    out["cores"] = got["requested_number_of_resources"].fillna(wl["res"]).astype(float)
    sub = got["submission_time"].fillna(wl["subtime"]).astype(float)
    start = got["starting_time"].astype(float)
    end = got["finish_time"].astype(float)
    out["submission_time"] = sub
    out["starting_time"] = start
    out["finish_time"] = end
    out["ended"] = start.notna() & end.notna()
    if "final_state" in got.columns:
        state = got["final_state"].fillna("").astype(str)
    else:   # a frame built without Batsim's states (tests, other tools): a job that ended succeeded
        state = pd.Series(np.where(out["ended"], "COMPLETED_SUCCESSFULLY", ""), index=out.index)
    out["final_state"] = state
    out["completed"] = out["ended"] & (state == "COMPLETED_SUCCESSFULLY")
    out["killed"] = state.isin(KILLED_STATES)
    out["rejected"] = state == "REJECTED"
    out["run_time"] = end - start

    # Decision log: reservation start and cache outcome. Without one (plain stock
    # schedulers) nothing is loaded: every job is no-load and holds cores from its start.
    if decisions is not None and len(decisions):
        dec = decisions.copy()
        dec["key"] = dec["job_id"].str.split("!", n=1).str[-1]
        dec = dec.drop_duplicates("key", keep="last").set_index("key").reindex(out.index)
        claimed = dec["time"].astype(float).where(dec["time"].notna(), start)
        # a job that waited for room in memory (staging proxy) held its cores from its `full` row on
        held_since = dec["held_since"].astype(float) if "held_since" in dec else pd.Series(np.nan, index=dec.index)
        res_start = held_since.where(held_since.notna(), claimed)
        room_wait = (claimed - res_start).clip(lower=0).fillna(0.0)
        cache = dec["cache"].fillna("none").replace("", "none")
        staging_job = dec["staging_job"].fillna("")
        node = dec["node"].fillna("")
    else:
        res_start = start.copy()
        room_wait = pd.Series(0.0, index=out.index)
        cache = pd.Series("none", index=out.index)
        staging_job = pd.Series("", index=out.index)
        node = pd.Series("", index=out.index)
    out["reservation_start"] = res_start
    out["cache"] = cache
    out["node"] = node

    st = staging.drop_duplicates("full_id", keep="last").set_index("full_id")
    st_start = st["starting_time"].reindex(staging_job.values).to_numpy(dtype=float)
    st_end = st["finish_time"].reindex(staging_job.values).to_numpy(dtype=float)
    held_before_start = (start - res_start).clip(lower=0).to_numpy(dtype=float)
    is_miss = (cache == "miss").to_numpy()
    is_wait = (cache == "wait").to_numpy()
    # When the staging row is missing (killed run, foreign scheduler) the time the
    # job held its cores before computing is the best available measure.
    transfer = np.where(np.isnan(st_end), held_before_start, st_end - st_start)
    waited = np.where(np.isnan(st_end), held_before_start, np.maximum(0.0, st_end - res_start.to_numpy(dtype=float)))
    out["transfer_time"] = np.where(is_miss, transfer, 0.0)
    out["file_wait"] = np.where(is_wait, waited, room_wait.to_numpy(dtype=float))
    out["load_time"] = out["transfer_time"] + out["file_wait"]
    out["memory_wait"] = room_wait.to_numpy(dtype=float)
    out["loads"] = staging["job_id"].map(served_job).value_counts().reindex(out.index).fillna(0).astype(int)
    out["nodes"] = _nodes(got.get("allocated_resources"), node_of, out.index)

    out["flow"] = end - sub
    out["wait"] = start - sub
    out["queue_time"] = res_start - sub
    load_ref = out["input_size"] / bandwidth if math.isfinite(bandwidth) else 0.0
    out["reference_flow"] = load_ref + out["run_time"]
    out["stretch"] = out["flow"] / out["reference_flow"]
    out["bsld"] = np.maximum(1.0, out["flow"] / np.maximum(out["run_time"], BSLD_THRESHOLD))
    out["core_time"] = out["cores"] * (end - res_start)
    out["hit"] = out["cache"] == "hit"
    # A reuse is a job that did not load its own file: it found it in memory or
    # shared a load started for another job.
    out["reuse"] = out["cache"].isin(["hit", "wait"])
    delay = wl["profile"].map(_delays(workload.profiles)) if "profile" in wl.columns else np.nan
    walltime = wl["walltime"].astype(float)
    out["killed_by_load"] = out["killed"] & (out["load_time"] > 0) & (walltime > 0) & (delay <= walltime)
    out.index.name = "job_id"
    return out.reset_index()


def per_run(jobs_table: pd.DataFrame, all_jobs_csv: pd.DataFrame | None = None) -> dict:
    """Run totals over evaluated jobs (rejected/missing jobs are counted, not measured)."""
    ev = jobs_table[jobs_table["evaluated"]]
    done = ev[ev["ended"]]
    completed = int(ev["completed"].sum())
    waited = done[done["memory_wait"] > 0]
    spans = done["nodes"] > 1
    summary = {
        "jobs_evaluated": int(len(ev)),
        "jobs_completed": completed,
        "jobs_not_completed": int(len(ev) - completed),
        "jobs_killed": int(ev["killed"].sum()),
        "jobs_killed_by_load": int(ev["killed_by_load"].sum()),
        "killed_pct": 100.0 * float(ev["killed"].sum()) / len(ev) if len(ev) else float("nan"),
        "killed_by_load_pct": 100.0 * float(ev["killed_by_load"].sum()) / len(ev) if len(ev) else float("nan"),
        "jobs_multi_node": int(spans.sum()),
        "memory_waits": int(len(waited)),
        "memory_waits_multi_node": int((waited["nodes"] > 1).sum()),
        "total_memory_wait": float(done["memory_wait"].sum()),
        "max_memory_wait": float(done["memory_wait"].max()) if len(done) else float("nan"),
        "jobs_rejected": int(ev["rejected"].sum()),
        "mean_stretch": _mean(done["stretch"]),
        "max_stretch": _max(done["stretch"]),
        "mean_flow": _mean(done["flow"]),
        "mean_wait": _mean(done["wait"]),
        "mean_bsld": _mean(done["bsld"]),
        "max_bsld": _max(done["bsld"]),
        "total_transfer_time": float(done["transfer_time"].sum()),
        "total_file_wait": float(done["file_wait"].sum()),
        "total_load_time": float(done["load_time"].sum()),
        "total_core_time": float(done["core_time"].sum()),
        "loads": int(done["loads"].sum()),
        "hits": int(done["hit"].sum()),
        "reuses": int(done["reuse"].sum()),
    }
    if all_jobs_csv is not None and len(all_jobs_csv):
        summary["makespan"] = float(np.nanmax(all_jobs_csv["finish_time"].to_numpy(dtype=float), initial=0.0))
    return summary


def _nodes(allocs, node_of: dict | None, index) -> pd.Series:
    """How many nodes each job's cores are on (0 for a job that never ran or without a platform)."""
    if allocs is None or not node_of:
        return pd.Series(0, index=index, dtype=int)
    from procset import ProcSet

    def count(text):
        if not isinstance(text, str) or not text:
            return 0
        return len({node_of.get(i) for i in ProcSet.from_str(text) if i in node_of})

    return allocs.map(count).reindex(index).fillna(0).astype(int)


def _delays(profiles: dict) -> dict:
    """Profile name → delay (s) for delay profiles; other profiles have no fixed run time."""
    return {name: float(p["delay"]) for name, p in profiles.items()
            if isinstance(p, dict) and p.get("type") == "delay" and isinstance(p.get("delay"), (int, float))}


def _mean(s: pd.Series) -> float:
    return float(s.mean()) if len(s) else float("nan")


def _max(s: pd.Series) -> float:
    return float(s.max()) if len(s) else float("nan")
