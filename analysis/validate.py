"""`batloc validate OUTPREFIX --workload W.json --platform P.xml`: impossible schedules.

Checks a run's outputs (``<prefix>_jobs.csv``, ``<prefix>_decisions.csv``)
against its workload and platform (resource ids in Batsim 4.2's numbering,
read as the schedulers read them):
- every workload job appears exactly once in jobs.csv, with a final state,
  and every staging job at most once;
- a job runs on compute resources only, on exactly the cores it asked for,
  and finishes no earlier than it starts; a staging job uses storages only;
- no core used by two jobs at once;
- no job started before its submission;
- no job started before its file was in memory: a job that missed or waited
  starts after its staging job finished (unless its window ended while its
  file loaded: executed and killed in one answer at its window's end,
  contract §6, it starts at that end at the earliest); a hit finds the file
  in memory when the node's memory is replayed under the memory model;
- no node memory over capacity under that model (``--cache``, default paper; the file-sharing
  family's ``value`` of Eq. 7 with one cluster-wide census, and JDP+DLL's replications, which
  ``replications`` books as the scheduler did);
- workflows (contract §2b): every dependent job present too; none started or
  submitted before each of its parents ended, nor when one did not complete;
  no job reads an output before its producer completed; outputs enter their
  producer's node's memory at its end in the replay (pinned until their
  write-back staging ends), a job of several files is replayed file by file.
- the records agree with each other and with the inputs (``records``): rows
  with their workload jobs, decisions with their jobs' rows, loads with their
  links.
A run folder is judged by its own outputs (``run_folder``), never by those at
run.json's `export_prefix`; with robin's digests in run.json, an output or an
input that is not the file robin validated or the run read is a violation too.
Exit status 1 with one line per violation and a count per kind; 2 when an
input cannot be read (one line naming it).
"""

import argparse
import csv
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from procset import ProcSet

from batloc.locality.cache import SAME_INSTANT, NodeCache
from batloc.locality.value_cache import FileCensus, ValueCache
from batloc.locality.staging import STAGE_WORKLOAD, writeback_job_id
from batloc.locality.workflow import WorkflowError, check as check_workflows, job_files, job_outputs, parents
from batloc.locality.platform_view import PlatformView
from batloc.outputs import DECISIONS_COLUMNS, read_rows
from batloc.platforms.reader import PlatformError, read_resources
from batloc.reading import DESCRIPTION_BYTES, WORKLOAD_BYTES, read_bytes
from batloc.workloads.errors import WorkloadError
from batloc.workloads.source import read_json

from . import records, run_folder
from .instant_orders import DEFERRABLE, OtherOrders
from .memory_model import REPLAY_MODELS
from .replications import replication_events

EPS = 1e-6
# The execution time Batsim 4.2.1 (and the engine) write for a job that ran in no time, its finish_time that much
# after its start (contract §5): a job executed and killed at once, a task with nothing to do
NULL_RUNTIME = "0.000010"
# Batsim 4's final job states (jobs.csv `final_state`).
FINAL_STATES = {"COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                "COMPLETED_KILLED", "REJECTED"}

# Kinds of violation, as counted in the summary line.
MISSING, TWICE, NOT_FINAL, UNKNOWN = "job missing", "job listed twice", "no final state", "job not in workload"
OUTSIDE, STAGING_OUTSIDE, CORE_COUNT = "outside compute ids", "staging outside storage ids", "wrong core count"
FINISH_FIRST, OVERLAP, EARLY = "finish before start", "core used twice", "start before submission"
FILE_LATE, FALSE_HIT, OVER_CAPACITY = "start before file in memory", "hit not in memory", "memory over capacity"
DECISION = "decision without its job"
CHANGED = "file changed since its run"
PARENT_LATE, UNWRITTEN = "start before a parent's end", "read of an output not yet written"
# Decision-log `cache` of a row saying that the job held its cores from `time` waiting for room in the
# node's memory (the staging proxy, contract §6); its later rows say how it got its file.
WAITED_FOR_ROOM = "full"


class InputError(Exception):
    """An input file that cannot be read; the message names the file (and line, field)."""


def full_id(r):
    return f"{r['workload_name']}!{r['job_id']}"


def started(r):
    return r["starting_time"] not in ("", "-1")


# A kill timer is due at a call within one protocol tick (1 µs) of the window's end, and the decision log and
# jobs.csv print times to the microsecond: a job executed at its window's end starts no earlier than this before it.
WINDOW_END_SLACK = 2e-6


def executed_at_window_end(r, window_start, walltime):
    """Executed and killed in one answer at its window's end [t_k, t_k + walltime) (contract §6): its load
    outlasted its window. On Batsim and in the engine's timed mode the kill reaches the server a few link
    latencies after the execution, which sets its start (1e-5 s of run time when both come at once): the
    job starts at or after its window's end, where no job computing within its window can start."""
    if r["final_state"] != "COMPLETED_KILLED" or window_start is None or walltime is None or walltime < 0:
        return False
    end = window_start + walltime
    return r["_start"] >= end - WINDOW_END_SLACK - 4 * math.ulp(end)


def is_staging(r):
    return r["workload_name"] == STAGE_WORKLOAD


def check_presence(rows, workload_ids):
    """Every workload job exactly once with a final state, every staging job at most once; no row for a job
    the workload lacks."""
    out = []
    seen = Counter(r["job_id"] for r in rows if not is_staging(r))
    for jid in workload_ids:
        if seen[jid] == 0:
            out.append((MISSING, f"job {jid} of the workload is not in jobs.csv"))
        elif seen[jid] > 1:
            out.append((TWICE, f"job {jid} appears {seen[jid]} times in jobs.csv"))
    stagings = Counter(full_id(r) for r in rows if is_staging(r))
    out += [(TWICE, f"staging job {sid} appears {n} times in jobs.csv") for sid, n in stagings.items() if n > 1]
    known = set(workload_ids)
    for r in rows:
        if is_staging(r):
            continue
        if r["job_id"] not in known:
            out.append((UNKNOWN, f"{full_id(r)} is in jobs.csv but not in the workload"))
        elif r["final_state"] not in FINAL_STATES:
            out.append((NOT_FINAL, f"{full_id(r)} has no final state (final_state {r['final_state']!r})"))
    return out


def check_allocations(rows, compute_ids, storage_ids):
    """Allocations on the right kind of resource, of the requested size; finish >= start."""
    out = []
    for r in rows:
        if not started(r):
            continue
        alloc = r["_alloc"]
        if is_staging(r):
            stray = alloc - storage_ids
            if stray:
                out.append((STAGING_OUTSIDE, f"{full_id(r)} runs on {stray}, which are not storage ids"))
        else:
            stray = alloc - compute_ids
            if stray:
                out.append((OUTSIDE, f"{full_id(r)} runs on {stray}, outside the compute ids {compute_ids}"))
            if len(alloc) != r["_cores"]:
                out.append((CORE_COUNT, f"{full_id(r)} asked for {r['_cores']} cores and got {len(alloc)} "
                                        f"({r['allocated_resources'] or 'none'})"))
        if r["_finish"] < r["_start"] - EPS:
            out.append((FINISH_FIRST, f"{full_id(r)} finishes at {r['_finish']:.6f} before it starts "
                                      f"at {r['_start']:.6f}"))
    return out


def check_cores(rows):
    cores, starts, ends, ids = [], [], [], []
    for r in rows:
        if is_staging(r) or not started(r):
            continue
        for c in r["_alloc"]:
            cores.append(c)
            starts.append(r["_start"])
            ends.append(r["_finish"])
            ids.append(full_id(r))
    if not cores:
        return []
    cores, starts, ends = np.array(cores), np.array(starts), np.array(ends)
    order = np.lexsort((starts, cores))
    c, s, e = cores[order], starts[order], ends[order]
    bad = np.flatnonzero((c[1:] == c[:-1]) & (s[1:] < e[:-1] - EPS))
    return [(OVERLAP, f"core {c[i + 1]}: {ids[order[i + 1]]} starts at {s[i + 1]:.6f} while "
                      f"{ids[order[i]]} runs until {e[i]:.6f}") for i in bad]


def check_submission(rows):
    return [(EARLY, f"{full_id(r)} starts at {r['starting_time']} before its submission at {r['submission_time']}")
            for r in rows if not is_staging(r) and started(r) and r["_start"] < r["_submit"] - EPS]


def check_dependencies(rows, jobs):
    """No dependent job submitted or started before each of its parents ended successfully; no job
    reading an output before its producer completed (jobs: id -> workload job, dependent ones included)."""
    by_local = {r["job_id"]: r for r in rows if not is_staging(r)}
    writer = {f: jid for jid, j in jobs.items() for f, _ in job_outputs(j)}
    out = []
    for jid, j in jobs.items():
        r = by_local.get(jid)
        if r is None or not started(r):
            continue
        for p in parents(j):
            pr = by_local.get(p)
            if pr is None or not started(pr) or pr["final_state"] != "COMPLETED_SUCCESSFULLY":
                out.append((PARENT_LATE, f"{full_id(r)} ran though its parent {p} did not complete"))
            elif min(r["_start"], r["_submit"]) < pr["_finish"] - EPS:
                out.append((PARENT_LATE, f"{full_id(r)} is submitted at {r['_submit']:.6f} and starts at "
                                         f"{r['_start']:.6f}, before its parent {p} ends at {pr['_finish']:.6f}"))
        for f, _ in job_files(j):
            w = writer.get(f)
            if w is None:
                continue
            wr = by_local.get(w)
            if wr is None or not started(wr) or wr["final_state"] != "COMPLETED_SUCCESSFULLY":
                out.append((UNWRITTEN, f"{full_id(r)} reads {f}, which job {w} never wrote"))
            elif r["_start"] < wr["_finish"] - EPS:
                out.append((UNWRITTEN, f"{full_id(r)} reads {f} from {r['_start']:.6f}, before job {w} writes it "
                                       f"at {wr['_finish']:.6f}"))
    return out


def _entries(d, jobs):
    """A decision row's files: [(file, size, case, staging)], one per file (';'-separated lists for a
    job of several files, contract §2b; their sizes from the workload)."""
    if not d["input_file"]:
        return []
    files = d["input_file"].split(";")
    if len(files) == 1:
        return [(files[0], float(d["input_size"]) if d["input_size"] else 0.0, d["cache"], d["staging_job"])]
    job = jobs.get(d["job_id"].split("!", 1)[-1], {})
    sizes = dict(job_files(job)) if job else {}
    cases, stagings = d["cache"].split(";"), d["staging_job"].split(";")
    return [(f, sizes.get(f, 0.0), cases[i] if i < len(cases) else "", stagings[i] if i < len(stagings) else "")
            for i, f in enumerate(files)]


def check_files_and_memory(rows, decisions, memories, model, jobs=None):
    jobs = jobs or {}
    by_id = {full_id(r): r for r in rows if started(r)}
    out = []
    # (time, order, kind, payload). At equal times loads complete, then jobs end, then the file-sharing
    # family's replications are booked (at a submission, before the pass), then jobs start: a file whose
    # load completes in the very instant its last user ends is loaded then, in any model.
    events = []
    windows = {}        # job -> its reservation's start (t_k): its first row, a `full` one included
    for d in decisions:
        windows[d["job_id"]] = min(windows.get(d["job_id"], math.inf), float(d["time"]))
    for i, d in enumerate(decisions):
        jid = d["job_id"]
        if d["cache"] == WAITED_FOR_ROOM:
            continue        # cores held, nothing claimed in memory: the job's next rows claim it
        job = jobs.get(jid.split("!", 1)[-1])
        walltime = _walltime(job)
        r = by_id.get(jid)
        if r is None:
            out.append((DECISION, f"{jid}: in decisions.csv but not in jobs.csv"))
            continue
        start = r["_start"]
        load_ends = {}
        entries = _entries(d, jobs)
        for file, _, case, staging in entries:
            if case not in ("miss", "wait"):
                continue
            st = by_id.get(staging)
            if st is None:
                out.append((DECISION, f"{jid}: its staging job {staging} is not in jobs.csv"))
            elif start < st["_finish"] - EPS and not executed_at_window_end(r, windows.get(jid), walltime):
                out.append((FILE_LATE, f"{jid} starts at {start:.6f} before its file {file} is in "
                                       f"memory ({staging} ends at {st['_finish']:.6f})"))
            if case == "miss" and st is not None:
                events.append((st["_finish"], 0, "loaded", (d["node"], file)))
                load_ends[file] = st["_finish"]
        events.append((float(d["time"]), 3, "start", (i, jid, d["node"], entries, load_ends)))
        events.append((r["_finish"], 1, "end", (d["node"], [e[0] for e in entries])))
        outputs = job_outputs(job) if job else []
        if outputs and r["final_state"] == "COMPLETED_SUCCESSFULLY":
            wb = by_id.get(writeback_job_id(jid, d["node"]))
            events.append((r["_finish"], 1, "output", (d["node"], outputs, wb is not None)))
            if wb is not None:
                events.append((wb["_finish"], 1, "unpin", (d["node"], [f for f, _ in outputs])))
    if model is None:
        return out      # a memory model the replay does not know
    events += replication_events(rows, jobs, decisions, memories)
    events.sort(key=lambda e: (e[0], e[1], e[3][0] if e[2] == "start" else -1))
    caches = {}
    # Eq. 7's cluster-wide counts, fed as schedulers/filesharing/state.py feeds them (read by `value` only)
    census = FileCensus()
    # node -> (t, {file: Resident}): loaded files dropped at instant t once their last user ended at t. Under
    # Batsim's message timing that end may reach the scheduler after starts of its instant (they print alike),
    # and the scheduler then still held the file for them: a hit at t on such a file is no false hit.
    ended_now = {}
    orders = OtherOrders(model in ("lru", "value"))
    for t, _, kind, p in events:
        node = p[2] if kind == "start" else p[0]
        cache = caches.get(node)
        if cache is None:
            capacity = memories.get(node, float("inf"))
            cache = caches[node] = ValueCache(capacity, census) if model == "value" else NodeCache(capacity, model)
        if kind == "start":
            cache = _start(cache, t, p, census, ended_now, orders, out, model)
            caches[node] = cache
            continue
        if kind in DEFERRABLE:
            orders.deferrable(node, t, cache, lambda c, kind=kind, p=p, t=t: _apply(c, kind, p, t))
        if kind == "end":
            kept = {f: cache.files[f] for f in p[1] if f in cache.files and cache.files[f].loaded}
        for op, files in _apply(cache, kind, p, t):
            (census.drop if op == "drop" else _add_all(census))(files, node)
            if kind == "end":
                for f in files:
                    _dropped_at(ended_now, node, t)[f] = kept.get(f)
        if kind == "end":
            for f in p[1]:   # paper: the next start of the instant drops it, whichever file that start reads
                r = cache.files.get(f)
                if r is not None and r.users == 0 and r.loaded:
                    _dropped_at(ended_now, node, t)[f] = r
        orders.apply(node, lambda c, kind=kind, p=p, t=t: _apply(c, kind, p, t))
    return out


def _add_all(census):
    def add(files, node):
        for f in files:
            census.add(f, node)
    return add


def _apply(cache, kind, p, t):
    """An event other than a start applied to a node's memory: [("drop" | "add", files), ...] for the census,
    in order (an output may evict one added before it)."""
    if kind == "loaded":
        cache.load_done(p[1], t)
        return []
    if kind == "replica":           # booked: a load serving no job, its node's memory claimed from now
        _, file, size, load_end = p
        return [("drop", cache.start_job(file, size, t, load_end=load_end)[1]), ("add", (file,))]
    if kind == "replica loaded":
        cache.load_done(p[1], t)
        return [("drop", cache.end_job(p[1], t))]
    if kind == "end":
        return [("drop", cache.end_files(p[1], t))]
    if kind == "unpin":
        return [("drop", cache.unpin(f, t)) for f in p[1]]
    ops = []                        # outputs
    for f, size in p[1]:
        ops.append(("drop", cache.add_output(f, size, t, pinned=p[2])))
        if cache.status(f) != "absent":
            ops.append(("add", (f,)))
    return ops


def _start(cache, t, p, census, ended_now, orders, out, model):
    """A start replayed on its node's memory `cache`; the violations it shows into `out`. Returns the node's
    memory from now on (``instant_orders``: another order of the instant, where the log says so)."""
    _, jid, node, entries, load_ends = p
    dropped = ended_now.get(node, (None, {}))
    for f, _, logged, _ in entries:
        if (logged == "hit" and f not in cache.files and dropped[0] is not None
                and abs(t - dropped[0]) < SAME_INSTANT and dropped[1].get(f) is not None):
            cache.files[f] = dropped[1][f]   # its last user's end had not reached the scheduler yet
            census.add(f, node)
    files = [(f, size) for f, size, _, _ in entries]

    def start(c):
        before = [c.status(f, t) for f, _ in files]
        c.start_files(files, t, load_end=load_ends)
        return before, c.used_bytes()

    for f, _ in files:
        census.accessed(f)
    before = [cache.status(f, t) for f, _ in files]
    census.drop(cache.start_files(files, t, load_end=load_ends)[1], node)
    _add_all(census)([f for f, _ in files], node)
    had = set(cache.files)
    kept, before, over = orders.start(node, t, cache, start, [e[2] for e in entries], before, cache.used_bytes())
    if kept is not cache:           # the census follows the node's memory
        census.drop([f for f in had if f not in kept.files], node)
        _add_all(census)([f for f in kept.files if f not in had], node)
    for (file, _, logged, _), was in zip(entries, before):
        if logged == "hit" and was != "loaded":
            out.append((FALSE_HIT, f"{jid}: logged as a hit at {t:.6f} but {file} is not in {node}'s "
                                   f"memory under the {model} model"))
    if over:
        reads = ";".join(f for f, _ in files) or "no file"
        out.append((OVER_CAPACITY, f"{node}: memory holds {kept.used_bytes():.0f} bytes > capacity "
                                   f"{kept.capacity:.0f} at {t:.6f} (after {jid} starts, reading {reads})"))
    return kept


def _dropped_at(ended_now, node, t):
    """The files dropped on `node` at instant t (a new instant forgets the last one's)."""
    at, files = ended_now.get(node, (None, None))
    if at is None or abs(t - at) >= SAME_INSTANT:
        at, files = ended_now[node] = (t, {})
    return files


def _walltime(job):
    """A workload job's walltime in seconds, None without one (-1 or absent: no window to end)."""
    try:
        w = float(job.get("walltime")) if job else None
    except (TypeError, ValueError):
        return None
    return w if w is not None and math.isfinite(w) and w >= 0 else None


_JOB_FIELDS = ("job_id", "workload_name", "submission_time", "requested_number_of_resources", "final_state",
               "starting_time", "finish_time", "allocated_resources")


def read_jobs_csv(path):
    """jobs.csv rows, with parsed `_submit`, and `_start`, `_finish`, `_cores`, `_alloc` on started rows."""
    columns, rows = _read_csv(path, "_line")
    missing = [f for f in _JOB_FIELDS if f not in columns]
    if missing:
        raise InputError(f"{path}: not a Batsim jobs.csv (no column {', '.join(missing)})")
    for r in rows:
        field = ""
        try:
            field = "submission_time"
            r["_submit"] = float(r[field])
            if started(r):
                field = "starting_time"
                r["_start"] = float(r[field])
                field = "finish_time"
                # an unfinished job (run stopped) holds its cores to the end
                r["_finish"] = float(r[field]) if r[field] else float("inf")
                if r.get("execution_time") == NULL_RUNTIME:   # it ran in no time: its cores were free at its start
                    r["_finish"] = r["_start"]
                field = "requested_number_of_resources"
                r["_cores"] = int(float(r[field]))
                field = "allocated_resources"
                r["_alloc"] = ProcSet.from_str(r[field]) if r[field] else ProcSet()
        except (TypeError, ValueError):
            raise InputError(f"{path}:{r['_line']}: job {r.get('job_id')}: cannot read {field} "
                             f"{r.get(field)!r}") from None
    return rows


def _read_csv(path, line_key=None):
    """(columns, rows) of an output CSV (``batloc.outputs``); anything unreadable is an InputError."""
    try:
        return read_rows(path, line_key)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV file: {exc}") from None


def read_decisions(path, quiet=False):
    if not os.path.exists(path):
        if not quiet:
            print(f"batloc validate: no {path}: file checks skipped", file=sys.stderr)
        return []
    columns, rows = _read_csv(path, "_line")
    missing = [f for f in DECISIONS_COLUMNS if f not in columns]
    if missing:
        raise InputError(f"{path}: not a batloc decision log (no column {', '.join(missing)})")
    for d in rows:
        for field in ("time", "input_size"):
            try:
                if field == "time" or d[field]:
                    float(d[field])
            except (TypeError, ValueError):
                raise InputError(f"{path}:{d['_line']}: job {d.get('job_id')}: cannot read {field} "
                                 f"{d.get(field)!r}") from None
    return rows


def read_workload_jobs(path):
    """{job id: job} of a workload, its dependent jobs (contract §2b) included, in order."""
    return read_workload(path)[0]


def read_workload(path):
    """({job id: job}, dependent jobs included, in order; {profile name: profile}) of a workload, read within
    the workload's bound as the engine reads it (``batloc.reading``: a FIFO, a device or an over-sized file is
    refused in one line, never read for ever)."""
    try:
        doc = read_json(path, WORKLOAD_BYTES, "workload")
        doc["jobs"]
        profiles = doc.get("profiles")
        return check_workflows(doc, path), profiles if isinstance(profiles, dict) else {}
    except WorkloadError as exc:   # names the file: unreadable, refused, not UTF-8, not JSON
        raise InputError(str(exc)) from None
    except WorkflowError as exc:
        raise InputError(str(exc)) from None
    except (KeyError, TypeError, AttributeError):
        raise InputError(f"{path}: not a Batsim workload (a 'jobs' list of jobs with an 'id')") from None


def read_workload_ids(path):
    return list(read_workload_jobs(path))


def validate(prefix, workload, platform, cache="paper", quiet=False, roles=None):
    """(violations as (kind, message), jobs checked, stagings, decisions); InputError on unreadable input.

    `cache` None: the run's memory model is not one the replay knows; hits and capacity go unchecked.
    `roles`: the engine's -m/-r as `read_resources`' keywords (master_host, roles), None for Batsim's defaults.
    """
    rows = read_jobs_csv(f"{prefix}_jobs.csv")
    jobs, profiles = read_workload(workload)
    workload_ids = list(jobs)
    try:
        resources = read_resources(platform, **(roles or {}))
        # a plain Batsim platform: one node per host, no memory to overflow (locality.platform_view)
        view = PlatformView.from_resources(resources.compute, resources.storage)
    except PlatformError as exc:
        raise InputError(exc if str(exc).startswith(str(platform)) else f"{platform}: {exc}") from None
    decisions_path = f"{prefix}_decisions.csv"
    decisions = read_decisions(decisions_path, quiet)
    compute_ids = ProcSet(*(r["id"] for r in resources.compute))
    storage_ids = ProcSet(*(r["id"] for r in resources.storage))
    memories = {n.name: n.memory_bytes for n in view.nodes}
    violations = check_presence(rows, workload_ids)
    violations += check_allocations(rows, compute_ids, storage_ids)
    violations += check_cores(rows) + check_submission(rows)
    violations += records.check_rows_against_workload(rows, jobs, profiles)
    violations += check_dependencies(rows, jobs)
    if os.path.exists(decisions_path):
        violations += records.check_decisions_against_rows(rows, decisions, jobs, view,
                                                           lambda d: _entries(d, jobs), WAITED_FOR_ROOM)
    violations += check_files_and_memory(rows, decisions, memories, cache, jobs)
    ran = [r for r in rows if started(r)]
    stagings = sum(1 for r in ran if is_staging(r))
    return violations, len(ran) - stagings, len(workload_ids), stagings, len(decisions)


def verdict(prefix, workload, platform, cache="paper", roles=None):
    """A finished run's verdict as robin records it in run.json, and the violations' lines.

    ({"valid": bool, "violations": {kind: count}, "outputs": {file name: sha256}}, [line, ...]): `outputs`
    are the files judged, so that a reader can tell them from files changed since; InputError on
    unreadable input.
    """
    digests = run_folder.output_digests(prefix)
    violations = validate(prefix, workload, platform, cache, quiet=True, roles=roles)[0]
    counts = Counter(kind for kind, _ in violations)
    return ({"valid": not violations, "violations": dict(sorted(counts.items())), "outputs": digests},
            [f"{kind}: {message}" for kind, message in violations])


def changed_since_run(prefix, folder, meta, given=()):
    """Violations for a run folder's files that are not the run's: outputs changed since robin validated
    them, inputs (those run.json names, not `given` on the command line) changed since the run read them."""
    recorded = (meta.get("validation") or {}).get("outputs") if isinstance(meta.get("validation"), dict) else None
    lines = run_folder.changed_outputs(prefix, recorded)
    lines += run_folder.changed_config(meta)
    lines += run_folder.changed_inputs(folder, meta, [k for k in ("platform", "workload") if k not in given])
    return [(CHANGED, line) for line in lines]


def one_line(message):
    """`message` with its unprintable characters escaped: an id holding a newline must not split a line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def _given_roles(args) -> dict:
    """The command line's -m/-r as `read_resources`' keywords; InputError names a -r it cannot read."""
    from batloc.platforms.numbering import RoleError, parse_role_maps

    try:
        return {"master_host": args.master_host, "roles": parse_role_maps(args.add_role_to_hosts) or None}
    except RoleError as exc:
        raise InputError(str(exc)) from None


def _from_run_json(args) -> None:
    """A run folder: its own outputs (the folder's `*_jobs.csv`, as `batloc report` reads them, never
    run.json's `export_prefix`, which names where the run wrote them first), its inputs and memory model
    from robin's run.json (what is given wins)."""
    folder = Path(args.prefix)
    meta_path = folder / "run.json"
    args.folder, args.meta = None, {}
    if not folder.is_dir():
        args.cache = args.cache or "paper"
        return
    if not meta_path.is_file():
        raise InputError(f"{folder} is a folder without run.json: give the run's output prefix "
                         f"(e.g. {folder / 'out'}) with --workload and --platform")
    try:
        meta = json.loads(read_bytes(meta_path, DESCRIPTION_BYTES, "run.json").decode("utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{meta_path}: unreadable run.json ({str(exc).splitlines()[0] if str(exc) else exc})") from None
    try:
        args.prefix = str(run_folder.own_prefix(folder, meta))
    except run_folder.FolderError as exc:
        raise InputError(str(exc)) from None
    args.folder, args.meta = folder, meta
    args.given = [k for k in ("workload", "platform") if getattr(args, k)]
    args.workload = args.workload or run_folder.input_path(folder, meta, "workload")
    args.platform = args.platform or run_folder.input_path(folder, meta, "platform")
    if args.master_host is None and not args.add_role_to_hosts:   # the engine's -m/-r, as the run read its platform
        try:
            args.roles = run_folder.platform_roles(meta)
        except run_folder.FolderError as exc:
            raise InputError(f"{folder}/{exc}") from None
    if args.cache is None:
        from .memory_model import memory_model

        args.cache = memory_model(meta.get("scheduler") if isinstance(meta.get("scheduler"), dict) else {})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="batloc validate", description=__doc__.splitlines()[0])
    ap.add_argument("prefix", help="a run folder holding robin's run.json (its workload, platform, memory model and "
                                   "outputs are read there), or the output prefix of a run (reads "
                                   "<prefix>_jobs.csv, <prefix>_decisions.csv; then --workload and --platform)")
    ap.add_argument("--workload", help="the run's workload (default: run.json's)")
    ap.add_argument("--platform", help="the run's platform (default: run.json's)")
    ap.add_argument("--cache", choices=REPLAY_MODELS,
                    help="memory model of the run (default: run.json's scheduler's, else paper)")
    ap.add_argument("-m", "--master-host", metavar="NAME",
                    help="the engine's -m: the host that runs no job when none has role=master (default: run.json's, "
                         "else master_host)")
    ap.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                    help="the engine's -r, repeatable (default: run.json's)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage and the error
        return int(exc.code or 0)
    try:
        args.roles = _given_roles(args)
        _from_run_json(args)
    except InputError as exc:
        print(f"batloc validate: {exc}", file=sys.stderr)
        return 2
    if not args.workload or not args.platform:
        missing = " and ".join(f"--{k}" for k in ("workload", "platform") if not getattr(args, k))
        print(f"batloc validate: {args.prefix} is not a run folder with a run.json: give {missing}", file=sys.stderr)
        return 2
    try:
        violations, done, n_jobs, stagings, n_decisions = validate(args.prefix, args.workload, args.platform,
                                                                   args.cache, roles=args.roles)
        if args.folder is not None:
            violations += changed_since_run(args.prefix, args.folder, args.meta, args.given)
    except InputError as exc:
        print(f"batloc validate: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    if violations:
        counts = Counter(kind for kind, _ in violations)
        print(f"{len(violations)} violation(s): " + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())))
        for kind, message in violations:
            print(f"  {kind}: {one_line(message)}")
        return 1
    print(f"ok: {done}/{n_jobs} jobs, {stagings} stagings, {n_decisions} decisions checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
