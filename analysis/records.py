"""Whether a run's records agree with each other and with its inputs (part of `batloc validate`).

A schedule can be possible and still not be the run's: a jobs.csv row whose
submission, size or walltime is not its workload job's, whose derived columns
(execution, waiting, turnaround) disagree with its times, a delay job that
completed in less than its delay, a decision-log row whose allocation, node,
cores or files are not its job's, a started job that the decision log never
decided, a load that took less time than its bytes need over its node's link
(by more than the authors' profile floors it).
Each is what an edited copy of a run shows (or a writer's bug); none of them
happens in a run the engine and a scheduler wrote (contract §5, §6).
"""

from __future__ import annotations

import math

from procset import ProcSet

from batloc.locality.staging import STAGE_WORKLOAD
from batloc.locality.workflow import job_files, parents

ROW_MISMATCH = "row not its workload job"
COLUMNS = "columns disagree"
SHORT_RUN = "shorter than its delay"
DECISION_MISMATCH = "decision not its job's"
NO_DECISION = "start without its decision"
SHORT_LOAD = "load faster than its link"

# jobs.csv prints six decimals: a column derived from two rounded ones may differ from its own rounding by 1.5 µs.
ROUNDING = 2e-6
# The authors' profile stages a file's load time floored to whole seconds in single precision
# (`load_time_rounding: float32_floor`, docs/authors-simulator.md R6): up to a second less than its bytes need.
FLOORED_LOAD = 1.0


# A sleep is worn down step by step (SimGrid, and the engine as Batsim's clock): each step rounded to its double, a
# delay of 448 532 s on the saturated oracle ended 3 µs early after tens of thousands of steps (Batsim's timing).
DRIFT = 1e-10


def close(a, b, slack=ROUNDING):
    """Equal as jobs.csv can print them: six decimals, and a double's own spacing at large times."""
    return abs(a - b) <= slack + 4 * math.ulp(max(abs(a), abs(b)))


def _full_id(r):
    return f"{r['workload_name']}!{r['job_id']}"


def _started(r):
    return "_start" in r


def _float(text, default=None):
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


def check_rows_against_workload(rows, jobs, profiles):
    """Each workload job's row has its submission (a static job's), size and walltime; started rows' derived
    columns agree with their times; a delay job that completed ran its delay at least."""
    out = []
    for r in rows:
        if r["workload_name"] == STAGE_WORKLOAD:
            continue
        job = jobs.get(r["job_id"])
        if job is None:
            continue                # check_presence names it
        jid = _full_id(r)
        wrong = []
        if not parents(job) and not close(r["_submit"], float(job.get("subtime", 0))):
            wrong.append(f"submission_time {r['submission_time']} (workload: {job.get('subtime')})")
        res = _float(r["requested_number_of_resources"])
        if "res" in job and res != float(job["res"]):
            wrong.append(f"requested_number_of_resources {r['requested_number_of_resources']} (workload: {job['res']})")
        walltime = job.get("walltime", -1)
        walltime = -1 if walltime is None else walltime
        requested = _float(r["requested_time"])
        if requested is None or not close(requested, float(walltime)):
            wrong.append(f"requested_time {r['requested_time']} (workload: {walltime})")
        if wrong:
            out.append((ROW_MISMATCH, f"{jid}: " + "; ".join(wrong)))
        if not _started(r) or not math.isfinite(r["_finish"]):
            continue
        # the row's own finish: the replay reads Batsim's 1e-5 s run of a job run in no time as none (`_finish`)
        start, finish, submit = r["_start"], _float(r.get("finish_time")), r["_submit"]
        finish = r["_finish"] if finish is None else finish
        for column, value in (("execution_time", finish - start), ("waiting_time", start - submit),
                              ("turnaround_time", finish - submit)):
            written = _float(r.get(column))
            if written is None or not close(written, value):
                out.append((COLUMNS, f"{jid}: {column} {r.get(column)} but its times give {value:.6f}"))
        profile = profiles.get(job.get("profile")) if isinstance(profiles, dict) else None
        if (r["final_state"] == "COMPLETED_SUCCESSFULLY" and isinstance(profile, dict)
                and profile.get("type") == "delay" and isinstance(profile.get("delay"), (int, float))
                and finish - start < profile["delay"]
                and not close(finish - start, float(profile["delay"]), ROUNDING + DRIFT * profile["delay"])):
            out.append((SHORT_RUN, f"{jid} completed after {finish - start:.6f} s, its delay is "
                                   f"{profile['delay']} s"))
    return out


def check_decisions_against_rows(rows, decisions, jobs, view, entries_of, waited_for_room):
    """Decision-log rows agree with their jobs' rows and the workload; every started workload job has a
    decision (when there is a log); each load lasts at least its bytes over its node's bandwidth."""
    by_id = {_full_id(r): r for r in rows if _started(r)}
    decided, out = set(), []
    staged = {}         # staging id -> (bytes it loads, node)
    for d in decisions:
        jid = d["job_id"]
        decided.add(jid)
        r = by_id.get(jid)
        if r is None or d["cache"] == waited_for_room:
            continue            # a decision without its job is check_files_and_memory's; `full` rows claim nothing
        wrong = []
        try:
            alloc = ProcSet.from_str(d["alloc"] or "")
        except (TypeError, ValueError):
            alloc = None
        if alloc != r["_alloc"]:
            wrong.append(f"alloc {d['alloc'] or 'none'} where jobs.csv has {r['allocated_resources'] or 'none'}")
        node = view.by_name.get(d["node"]) if d["node"] else None
        if d["node"] and node is None:
            wrong.append(f"node {d['node']} is not a node of the platform")
        elif node is not None:
            on_node = len(r["_alloc"] & ProcSet(*node.core_ids))
            if _float(d["cores"]) != on_node:
                wrong.append(f"{d['cores'] or 'no'} cores on {d['node']} where jobs.csv has {on_node} there")
        if float(d["time"]) > r["_start"] and not close(float(d["time"]), r["_start"]):
            wrong.append(f"decided at {float(d['time']):.6f}, after the job started at {r['_start']:.6f}")
        job = jobs.get(jid.split("!", 1)[-1])
        entries = entries_of(d)
        if job is not None:
            own = {f for f, _ in job_files(job)}
            stray = [f for f, _, _, _ in entries if f not in own]
            if stray:
                wrong.append(f"file {stray[0]} is not one the job reads ({', '.join(sorted(own)) or 'none'})")
            if own and not entries:
                wrong.append(f"no file, where the job reads {', '.join(sorted(own))}")
        bad_case = [c for _, _, c, _ in entries if c not in ("hit", "miss", "wait")]
        if bad_case or (not entries and d["cache"] != "none"):
            wrong.append(f"cache {d['cache']!r}")
        if wrong:
            out.append((DECISION_MISMATCH, f"{jid}: decision-log row at {float(d['time']):.6f}: " + "; ".join(wrong)))
        for _, size, case, staging in entries:
            if case == "miss" and staging and node is not None:
                loaded, _ = staged.get(staging, (0.0, node))
                staged[staging] = (loaded + size, node)
    for r in rows:
        if r["workload_name"] != STAGE_WORKLOAD and _started(r) and _full_id(r) not in decided:
            out.append((NO_DECISION, f"{_full_id(r)} started at {r['_start']:.6f} but the decision log has no "
                                     "row for it"))
    for sid, (size, node) in staged.items():
        st = by_id.get(sid)
        if st is None:
            continue            # check_files_and_memory names it
        if node.mem_id is not None and node.mem_id not in st["_alloc"]:
            out.append((DECISION_MISMATCH, f"{sid} loads into {st['allocated_resources']}, not {node.name}'s "
                                           f"memory (id {node.mem_id})"))
        least = size / node.bandwidth
        took = st["_finish"] - st["_start"]
        if took < least - FLOORED_LOAD and not close(took, least - FLOORED_LOAD):
            out.append((SHORT_LOAD, f"{sid} loaded {size:.0f} bytes into {node.name}'s memory in {took:.6f} s; "
                                    f"its link takes {least:.6f} s at least ({node.bandwidth:.6g} bytes/s)"))
    return out
