"""Batsim's own files on both engines: one case run on real Batsim 4.2.1 and on batloc's engine, jobs.csv compared.

A *case* is a platform, a workload and one of pybatsim's stock schedulers. Real
Batsim is the referee: a case it does not run to the end (it aborts, or refuses
the files) is left out of the count; for every other case batloc's engine must
give the identical jobs.csv (every job's start and finish to 1e-6 s, allocation
and final state), or refuse the files in one line naming what it does not support.

Functions other scripts call (``benchmarks/real_batsim.py``'s referee mode does):

- ``run_batsim(prefix_dir, platform, workload, scheduler, out_prefix)`` and
  ``run_batloc(platform, workload, scheduler, out_prefix)`` run one case on one
  engine and return a ``Run`` (``ended``: the engine exited 0 and wrote every
  job; ``note``: its one-line error otherwise; ``rows``: jobs.csv as dicts);
- ``compare(batsim_rows, batloc_rows)`` returns the list of differences, one
  line per job (empty: identical);
- ``verdict(batsim_run, batloc_run)`` is ``identical``, ``differing``,
  ``refused`` (batloc stopped in one line before simulating), ``failed``
  (batloc stopped later) or ``not run by Batsim``.

As a script it runs a grid and prints one row per case, then the totals:

    python3 benchmarks/batsim_parity.py --batsim /path/to/prefix --files /path/to/batsim-files \
        [--platform NAME ...] [--workload NAME ...] [--scheduler schedFcfs ...] [--keep DIR]

`--files` holds Batsim's `platforms/` and `workloads/` (tag v4.2.1); the
reference outputs are kept in `--keep` and reused by later runs (real Batsim's
result of a case does not change), so a second run costs the embedded engine's
runs only. Workloads whose jobs need more resources than a platform's compute
hosts, or SMPI traces it cannot find, are simply cases Batsim refuses.
"""

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

from batloc.processes import free_port, pybatsim_command, stop_group

STOCK = ("schedFcfs", "easyBackfill", "schedEasySjfBackfill")
TIMEOUT = 600
KEY = ("starting_time", "finish_time", "allocated_resources", "final_state")
TOLERANCE = 1.5e-6   # both print 6 decimals: a value 1e-6 apart after rounding is within the target


@dataclass
class Run:
    ended: bool
    note: str = ""
    rows: list = field(default_factory=list)
    simulated: bool = True   # False: the engine refused its inputs before simulating anything
    wall: float = 0.0


def _rows(prefix):
    path = prefix + "_jobs.csv"
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _first_error(path):
    """The engine's error line: Batsim's first CRITICAL line (its backtrace follows), else the last line."""
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return "(no output)"
    critical = [line for line in lines if "CRITICAL" in line or "xbt_assert" in line or "error:" in line]
    return (critical or lines or ["(no output)"])[0 if critical else -1][:400]


def run_batsim(batsim_prefix, platform, workload, scheduler, out_prefix, timeout=TIMEOUT, extra=()):
    """One case on real Batsim (installed under `batsim_prefix`) with pybatsim's `scheduler` over ZeroMQ."""
    os.makedirs(os.path.dirname(out_prefix) or ".", exist_ok=True)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(batsim_prefix, "lib"))
    argv = [os.path.join(batsim_prefix, "bin", "batsim"), "-q", "-p", platform, "-w", workload, "-e", out_prefix,
            *extra]
    return _run_pair(argv, env, scheduler, out_prefix, timeout)


def run_batloc(platform, workload, scheduler, out_prefix, timeout=TIMEOUT, extra=(), in_process=True):
    """One case on batloc's engine: the scheduler inside it (``--in-process``, same outputs), or over ZeroMQ."""
    os.makedirs(os.path.dirname(out_prefix) or ".", exist_ok=True)
    argv = [sys.executable, "-m", "batloc.engine", "-q", "-p", platform, "-w", workload, "-e", out_prefix, *extra]
    if not in_process:
        return _run_pair(argv, None, scheduler, out_prefix, timeout)
    started = time.monotonic()
    with open(out_prefix + "_engine.log", "w") as log:
        try:
            proc = subprocess.run(argv + ["--in-process", scheduler], stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout)
            status = proc.returncode
        except subprocess.TimeoutExpired:
            status = None
    return _outcome(status, 0, out_prefix, time.monotonic() - started)


def _run_pair(argv, env, scheduler, out_prefix, timeout):
    port = free_port()
    started = time.monotonic()
    with open(out_prefix + "_sched.log", "w") as slog, open(out_prefix + "_engine.log", "w") as elog:
        # -t 0: pybatsim waits for Batsim without limit (its default, 2 s, calls a slow step on a loaded
        # machine a deadlock and stops the scheduler: 12 SMPI and walltime cases did so)
        sched = subprocess.Popen(pybatsim_command() + [scheduler, "-t", "0", "-s", f"tcp://127.0.0.1:{port}"],
                                 stdout=slog,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        eng = subprocess.Popen(argv + ["-s", f"tcp://localhost:{port}"], stdout=elog, stderr=subprocess.STDOUT,
                               env=env, start_new_session=True)
        status = None
        try:
            status = _wait_engine(eng, sched, timeout)
            if status is not None:
                sched.wait(timeout=30 if status == 0 else 2)
        except subprocess.TimeoutExpired:
            pass
        finally:
            for proc in (eng, sched):
                if proc.poll() is None:
                    stop_group(proc)
    return _outcome(status, sched.returncode, out_prefix, time.monotonic() - started)


def _wait_engine(eng, sched, timeout, grace=10.0):
    """The engine's exit status, or None when it runs past `timeout` or outlives its scheduler by `grace` s
    (Batsim waits for ever for a scheduler that died)."""
    deadline = time.monotonic() + timeout
    orphaned = None
    while time.monotonic() < deadline:
        status = eng.poll()
        if status is not None:
            return status
        if sched.poll() is not None:
            orphaned = orphaned or time.monotonic()
            if time.monotonic() - orphaned > grace:
                return None
        time.sleep(0.05)
    return None


def _outcome(status, sched_status, out_prefix, wall):
    rows = _rows(out_prefix)
    log = out_prefix + "_engine.log"
    if status is None:
        why = f"scheduler exit {sched_status}" if sched_status is not None else f"timed out after {TIMEOUT} s"
        return Run(False, f"{why}: {_first_error(out_prefix + '_sched.log')}", rows, True, wall)
    ended = status == 0 and sched_status == 0 and bool(rows) and all(
        r["final_state"] not in ("SUBMITTED", "RUNNING", "NOT_SUBMITTED") for r in rows)
    note = "" if ended else f"exit {status}: {_first_error(log)}"
    if not ended and sched_status not in (0, None) and status == 0:
        note = f"scheduler exit {sched_status}: {_first_error(out_prefix + '_sched.log')}"
    return Run(ended, note, rows, bool(rows), wall)


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def compare(batsim_rows, batloc_rows, tolerance=TOLERANCE):
    """One line per job whose start, finish, allocation or final state differ (times within `tolerance`)."""
    mine = {r["job_id"]: r for r in batloc_rows}
    out = []
    for r in batsim_rows:
        other = mine.pop(r["job_id"], None)
        if other is None:
            out.append(f"job {r['job_id']}: missing on batloc")
            continue
        bad = []
        for k in KEY:
            a, b = r[k], other[k]
            if k.endswith("_time") and _number(a) is not None and _number(b) is not None:
                if abs(float(a) - float(b)) > tolerance:
                    bad.append(f"{k} {a} vs {b}")
            elif a != b:
                bad.append(f"{k} {a!r} vs {b!r}")
        if bad:
            out.append(f"job {r['job_id']}: " + ", ".join(bad))
    out.extend(f"job {j}: only on batloc" for j in mine)
    return out


def verdict(batsim, batloc):
    if not batsim.ended:
        return "not run by Batsim"
    if batloc.ended:
        return "differing" if compare(batsim.rows, batloc.rows) else "identical"
    return "refused" if not batloc.simulated else "failed"


def cases(files, platforms=None, workloads=None, schedulers=STOCK):
    """(platform path, workload path, scheduler) of the grid, platforms and workloads by file name."""
    plats = sorted(glob.glob(os.path.join(files, "platforms", "*.xml")))
    plats += sorted(glob.glob(os.path.join(files, "platforms", "*", "*.xml")))
    loads = sorted(glob.glob(os.path.join(files, "workloads", "*.json")))
    loads += sorted(glob.glob(os.path.join(files, "workloads", "*", "*.json")))   # untested/
    pick = (lambda paths, names: [p for p in paths if not names or os.path.basename(p) in names
                                  or os.path.splitext(os.path.basename(p))[0] in names])
    return [(p, w, s) for p in pick(plats, platforms) for w in pick(loads, workloads) for s in schedulers]


def case_name(platform, workload, scheduler):
    stem = lambda p: os.path.splitext(os.path.basename(p))[0]   # noqa: E731
    parent = os.path.basename(os.path.dirname(platform))
    plat = stem(platform) if parent == "platforms" else f"{parent}-{stem(platform)}"
    return f"{plat}__{stem(workload)}__{scheduler}"


def cached_batsim(args, platform, workload, scheduler, folder, extra=()):
    """Real Batsim's run of a case (`args.batsim` its prefix), kept in `folder` and reused: it does not change."""
    prefix = os.path.join(folder, "batsim", "out")
    done = os.path.join(folder, "batsim", "run.json")
    if os.path.exists(done):
        with open(done) as f:
            saved = json.load(f)
        return Run(saved["ended"], saved["note"], _rows(prefix), True, saved["wall"])
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    run = run_batsim(args.batsim, platform, workload, scheduler, prefix, extra=extra)
    with open(done, "w") as f:
        json.dump({"ended": run.ended, "note": run.note, "wall": run.wall}, f)
    return run


def _masters(pairs):
    """{platform file name or stem: host} from --master-host PLATFORM=HOST."""
    out = {}
    for pair in pairs or ():
        plat, sep, host = pair.partition("=")
        if not sep or not plat or not host:
            raise SystemExit(f"batsim_parity: --master-host {pair!r}: expected PLATFORM=HOST")
        out[plat] = host
    return out


def table(per_platform):
    """The markdown table of docs/performance.md: one row per platform, then the totals and the shares."""
    cols = ("identical", "differing", "refused", "not run by Batsim")
    lines = ["| platform | run by Batsim | identical | differing | refused | not run by Batsim |",
             "|---|---|---|---|---|---|"]
    total = {}
    for plat, counts in sorted(per_platform.items()):
        got = {c: counts.get(c, 0) for c in cols}
        got["differing"] += counts.get("failed", 0)
        ran = got["identical"] + got["differing"] + got["refused"]
        lines.append(f"| `{plat}` | {ran} | " + " | ".join(str(got[c]) for c in cols) + " |")
        for c in cols:
            total[c] = total.get(c, 0) + got[c]
    ran = total.get("identical", 0) + total.get("differing", 0) + total.get("refused", 0)
    lines.append(f"| **all** | {ran} | " + " | ".join(str(total.get(c, 0)) for c in cols) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batsim", default=os.environ.get("BATLOC_REF_BATSIM"),
                    help="prefix of a Batsim 4.2.1 build (bin/batsim, lib/); default $BATLOC_REF_BATSIM")
    ap.add_argument("--files", required=True, help="folder holding Batsim's platforms/ and workloads/")
    ap.add_argument("--platform", action="append", help="only this platform (file name, repeatable)")
    ap.add_argument("--workload", action="append", help="only this workload (file name, repeatable)")
    ap.add_argument("--scheduler", action="append", help=f"only this stock scheduler (default: {', '.join(STOCK)})")
    ap.add_argument("--master-host", action="append", metavar="PLATFORM=HOST",
                    help="run PLATFORM (file name or stem) with -m HOST on both engines, as a user of a platform "
                         "whose master is not named master_host would (its cases are named PLATFORM-m_HOST)")
    ap.add_argument("--keep", default="/tmp/batloc-batsim-parity", help="outputs, and Batsim's reused results")
    ap.add_argument("--show", type=int, default=2, help="differences printed per differing case")
    ap.add_argument("--reference-only", action="store_true", help="only run (and keep) real Batsim's results")
    args = ap.parse_args(argv)
    if not args.batsim or not os.access(os.path.join(args.batsim, "bin", "batsim"), os.X_OK):
        print("batsim_parity: skipped: --batsim (or BATLOC_REF_BATSIM) must name a Batsim 4.2.1 prefix")
        return 0
    masters = _masters(args.master_host)
    counts, per_platform = {}, {}
    grid = cases(args.files, args.platform, args.workload, args.scheduler or STOCK)
    for platform, workload, scheduler in grid:
        name = case_name(platform, workload, scheduler)
        host = masters.get(os.path.basename(platform), masters.get(os.path.splitext(os.path.basename(platform))[0]))
        extra = ("-m", host) if host else ()
        if host:
            plat, rest = name.split("__", 1)
            name = f"{plat}-m_{host}__{rest}"
        row = per_platform.setdefault(name.split("__")[0], {})
        folder = os.path.join(args.keep, name)
        ref = cached_batsim(args, platform, workload, scheduler, folder, extra)
        if not ref.ended:
            v, detail = "not run by Batsim", ref.note
        elif args.reference_only:
            v, detail = "run by Batsim", f"({len(ref.rows)} jobs)"
        else:
            mine = run_batloc(platform, workload, scheduler, os.path.join(folder, "batloc", "out"), extra=extra)
            v, detail = verdict(ref, mine), ""
            if v == "differing":
                diffs = compare(ref.rows, mine.rows)
                detail = f"{len(diffs)}/{len(ref.rows)} jobs differ: " + "; ".join(diffs[:args.show])
            elif v in ("refused", "failed"):
                detail = mine.note
        counts[v] = counts.get(v, 0) + 1
        row[v] = row.get(v, 0) + 1
        print(f"{name:<75} {v} {detail[:400]}", flush=True)
    ran = sum(n for v, n in counts.items() if v != "not run by Batsim")
    print(f"\n{len(grid)} cases; run to the end by Batsim: {ran}; "
          + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items())))
    if not args.reference_only:
        print("\n" + table(per_platform))
    return 0


if __name__ == "__main__":
    sys.exit(main())
