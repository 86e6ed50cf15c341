"""`batloc validate OUTPREFIX --workload W.json --platform P.xml`: impossible schedules.

Checks a run's outputs (``<prefix>_jobs.csv``, ``<prefix>_decisions.csv``):
- no core used by two jobs at once;
- no job started before its submission;
- no job started before its file was in memory: a job that missed or waited
  starts after its staging job finished; a hit finds the file in memory when
  the node's memory is replayed under the memory model;
- no node memory over capacity under that model (``--cache``, default paper).
Exit status 1 with one line per violation.
"""

import argparse
import csv
import json
import sys
import xml.etree.ElementTree as ET

import numpy as np
from procset import ProcSet

from batloc.locality.cache import MODELS, NodeCache
from batloc.locality.staging import STAGE_WORKLOAD

EPS = 1e-6


def read_memories(platform_path):
    mems = {}
    for host in ET.parse(platform_path).getroot().iter("host"):
        name = host.get("id", "")
        if name.endswith("_mem"):
            props = {p.get("id"): p.get("value") for p in host.findall("prop")}
            mems[props.get("node", name[:-4])] = float(props.get("memory_bytes", "inf"))
    return mems


def check_cores(rows):
    cores, starts, ends, ids = [], [], [], []
    for r in rows:
        if r["workload_name"] == STAGE_WORKLOAD or not r["allocated_resources"]:
            continue
        for c in ProcSet.from_str(r["allocated_resources"]):
            cores.append(c)
            starts.append(float(r["starting_time"]))
            ends.append(float(r["finish_time"]))
            ids.append(f"{r['workload_name']}!{r['job_id']}")
    if not cores:
        return []
    cores, starts, ends = np.array(cores), np.array(starts), np.array(ends)
    order = np.lexsort((starts, cores))
    c, s, e = cores[order], starts[order], ends[order]
    bad = np.flatnonzero((c[1:] == c[:-1]) & (s[1:] < e[:-1] - EPS))
    return [f"core {c[i + 1]}: {ids[order[i + 1]]} starts at {s[i + 1]:.6f} while "
            f"{ids[order[i]]} runs until {e[i]:.6f}" for i in bad]


def check_submission(rows):
    return [f"{r['workload_name']}!{r['job_id']} starts at {r['starting_time']} before its "
            f"submission at {r['submission_time']}"
            for r in rows if r["workload_name"] != STAGE_WORKLOAD and r["starting_time"] not in ("", "-1")
            and float(r["starting_time"]) < float(r["submission_time"]) - EPS]


def check_files_and_memory(rows, decisions, memories, model):
    by_id = {f"{r['workload_name']}!{r['job_id']}": r for r in rows}
    out = []
    events = []      # (time, order, kind, payload); ends and loads before starts at equal times
    for i, d in enumerate(decisions):
        jid = d["job_id"]
        r = by_id.get(jid)
        if r is None:
            out.append(f"{jid}: in decisions.csv but not in jobs.csv")
            continue
        start = float(r["starting_time"])
        if d["cache"] in ("miss", "wait"):
            st = by_id.get(d["staging_job"])
            if st is None:
                out.append(f"{jid}: its staging job {d['staging_job']} is not in jobs.csv")
            elif start < float(st["finish_time"]) - EPS:
                out.append(f"{jid} starts at {start:.6f} before its file {d['input_file']} is in memory "
                           f"({d['staging_job']} ends at {float(st['finish_time']):.6f})")
            if d["cache"] == "miss" and st is not None:
                events.append((float(st["finish_time"]), 0, "loaded", (d["node"], d["input_file"])))
        file = d["input_file"] or None
        size = float(d["input_size"]) if d["input_size"] else 0.0
        events.append((float(d["time"]), 1, "start", (i, jid, d["node"], file, size, d["cache"])))
        events.append((float(r["finish_time"]), 0, "end", (d["node"], file)))
    events.sort(key=lambda e: (e[0], e[1], e[3][0] if e[2] == "start" else -1))
    caches = {}
    for t, _, kind, p in events:
        node = p[2] if kind == "start" else p[0]
        cache = caches.get(node)
        if cache is None:
            cache = caches[node] = NodeCache(memories.get(node, float("inf")), model)
        if kind == "loaded":
            cache.load_done(p[1], t)
        elif kind == "end":
            cache.end_job(p[1], t)
        else:
            _, jid, _, file, size, logged = p
            before = cache.status(file) if file else None
            cache.start_job(file, size, t, load_end=t)
            if logged == "hit" and before != "loaded":
                out.append(f"{jid}: logged as a hit at {t:.6f} but {file} is not in {node}'s memory "
                           f"under the {model} model")
            used = cache.used_bytes()
            if used > cache.capacity + EPS:
                out.append(f"{node}: memory holds {used:.0f} bytes > capacity {cache.capacity:.0f} "
                           f"at {t:.6f} (after {jid} starts)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="batloc validate", description=__doc__.splitlines()[0])
    ap.add_argument("prefix", help="output prefix of the run (reads <prefix>_jobs.csv, <prefix>_decisions.csv)")
    ap.add_argument("--workload", required=True)
    ap.add_argument("--platform", required=True)
    ap.add_argument("--cache", default="paper", choices=MODELS, help="memory model of the run")
    args = ap.parse_args(argv)
    with open(f"{args.prefix}_jobs.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("starting_time") not in (None, "", "-1")]
    try:
        with open(f"{args.prefix}_decisions.csv") as fh:
            decisions = list(csv.DictReader(fh))
    except FileNotFoundError:
        decisions = []
        print(f"batloc validate: no {args.prefix}_decisions.csv: file checks skipped", file=sys.stderr)
    with open(args.workload) as fh:
        n_jobs = len(json.load(fh)["jobs"])
    violations = check_cores(rows) + check_submission(rows)
    violations += check_files_and_memory(rows, decisions, read_memories(args.platform), args.cache)
    done = sum(1 for r in rows if r["workload_name"] != STAGE_WORKLOAD)
    if violations:
        print(f"{len(violations)} violation(s):")
        for v in violations:
            print("  " + v)
        return 1
    print(f"ok: {done}/{n_jobs} jobs, {len(rows) - done} stagings, {len(decisions)} decisions checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
