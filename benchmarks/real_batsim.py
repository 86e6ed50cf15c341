"""Real Batsim 4.2.1 as the referee: batloc's platforms and schedulers run on it unchanged.

Needs a Batsim 4.2.1 build (its prefix holds bin/batsim and lib/), named by the
environment variable BATLOC_REF_BATSIM; without it, says so in one line and exits 0.

    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py platforms [--keep DIR]
    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py parity [--keep DIR]
                                      [--nodes 32] [--duration 1d] [--seed 1]

`platforms`: every shipped platform (platforms/*.xml, experiments/*.xml) and one
`batloc platform generate` output (SHARED links, a backbone, lustre's I/O
bandwidth, exclusive file-system access) run a small workload with pybatsim's
stock schedFcfs to the end on real Batsim: one row per platform (every job
COMPLETED_SUCCESSFULLY, Batsim's wall time and peak RSS).

`parity`: a generated platform of 32 nodes and a 1-day `batloc workload synth`
workload. Stock easyBackfill runs on both engines, and every job's start,
finish and allocation in jobs.csv are compared; batloc's FCFS, LEA and LEA-BF
run on real Batsim and every job must end (none left waiting or running, Batsim
exits 0), and on the embedded engine for comparison. One row per run.

Exit status 0 when every check holds.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from batloc.processes import free_port, pybatsim_command, stop_group

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBEDDED = [sys.executable, "-m", "batloc.engine", "-q"]
TIMEOUT = 3600
ENDED = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "REJECTED")


def real_batsim(prefix):
    """(argv, environment) of the reference Batsim under `prefix`."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    return [os.path.join(prefix, "bin", "batsim"), "-q"], env


def run(engine, env, platform, workload, prefix, scheduler, dynamic):
    """One run: `scheduler` (argv without -s) bound on a free port, then `engine` (argv without
    -p/-w/-e/-s). Returns (ok, note, wall seconds, engine peak RSS in MB, jobs.csv rows)."""
    port = free_port()
    started = time.monotonic()
    with open(prefix + "_sched.log", "w") as slog, open(prefix + "_engine.log", "w") as elog:
        sched = subprocess.Popen(scheduler + ["-s", f"tcp://127.0.0.1:{port}"], stdout=slog,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        argv = engine + ["-p", platform, "-w", workload, "-e", prefix, "-s", f"tcp://localhost:{port}"]
        eng = subprocess.Popen(argv + (["--enable-dynamic-jobs"] if dynamic else []), stdout=elog,
                               stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            status, rss = _wait(eng, TIMEOUT)
            sched.wait(timeout=60 if status == 0 else 5)
        except subprocess.TimeoutExpired:
            status, rss = (None, float("nan")) if eng.poll() is None else (eng.returncode, rss)
        finally:
            for proc in (eng, sched):
                if proc.poll() is None:
                    stop_group(proc)
    wall = time.monotonic() - started
    rows = []
    if os.path.exists(prefix + "_jobs.csv"):
        with open(prefix + "_jobs.csv") as f:
            rows = list(csv.DictReader(f))
    ok = status == 0 and sched.returncode == 0
    note = "" if ok else f"engine exit {status}, scheduler exit {sched.returncode}: " + _last_line(prefix + "_engine.log")
    return ok, note, wall, rss, rows


def _wait(proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_maxrss / 1024.0
        time.sleep(0.05)
    raise subprocess.TimeoutExpired(proc.args, timeout)


def _last_line(path):
    """The engine's error: Batsim's first CRITICAL line (its backtrace follows), else the last line."""
    with open(path, errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    critical = [line for line in lines if "CRITICAL" in line]
    return (critical or lines or ["(no output)"])[0 if critical else -1][:300]


def batloc_cli(*args):
    subprocess.run([sys.executable, "-m", "batloc.cli.main", *args], check=True, stdout=subprocess.DEVNULL)


def stock(name):
    return pybatsim_command() + [name]


def batloc_policy(policy, prefix, options=None):
    opts = {**(options or {}), "export_prefix": prefix}
    return pybatsim_command() + [os.path.join(ROOT, "schedulers", policy + ".py"), "-o", json.dumps(opts)]


# ---- platforms -------------------------------------------------------------------------------

def small_workload(path, cores, cores_per_node):
    """Five delay jobs from 1 core to two nodes' worth (ids integer-like, the first after t = 0)."""
    sizes = sorted({1, 2, min(cores, cores_per_node), min(cores, 2 * cores_per_node), min(cores, 3)})
    jobs = [{"id": i + 1, "subtime": 1 + 2 * i, "res": res, "walltime": 100, "profile": f"d{5 + i}"}
            for i, res in enumerate(sizes)]
    profiles = {j["profile"]: {"type": "delay", "delay": 5 + i} for i, j in enumerate(jobs)}
    with open(path, "w") as f:
        json.dump({"nb_res": cores, "jobs": jobs, "profiles": profiles}, f)
    return len(jobs)


def platforms(args, out):
    from batloc.platforms.reader import read_platform

    engine, env = real_batsim(args.batsim)
    generated = os.path.join(out, "generated.xml")
    batloc_cli("platform", "generate", "-o", generated, "--nodes", "5", "--cores", "4", "--sharing", "shared",
               "--backbone-bw", "auto", "--io-routes", "--pfs-access", "exclusive", "--latency", "1us")
    paths = sorted(os.path.join(ROOT, "platforms", p) for p in os.listdir(os.path.join(ROOT, "platforms"))
                   if p.endswith(".xml"))
    paths += sorted(os.path.join(ROOT, "experiments", p) for p in os.listdir(os.path.join(ROOT, "experiments"))
                    if p.endswith(".xml"))
    paths.append(generated)
    print(f"{'platform':<40} {'hosts':>6} {'jobs':>5} {'wall s':>7} {'RSS MB':>7}  verdict")
    failed = 0
    for path in paths:
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else "generated (5 x 4, shared, backbone, io)"
        summary = read_platform(path)
        prefix = os.path.join(out, os.path.basename(path).removesuffix(".xml"))
        workload = prefix + "_workload.json"
        n = small_workload(workload, summary.total_cores, summary.cores_per_node)
        ok, note, wall, rss, rows = run(engine, env, path, workload, prefix, stock("schedFcfs"), dynamic=False)
        done = sum(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
        ok = ok and done == n
        failed += not ok
        verdict = "ok" if ok else f"FAILED: {done}/{n} jobs completed; {note}"
        print(f"{name:<40} {summary.total_cores + len(summary.nodes) + 2:>6} {done:>5} {wall:>7.1f} {rss:>7.0f}  {verdict}",
              flush=True)
    return failed


# ---- parity ----------------------------------------------------------------------------------

def parity(args, out):
    engine, env = real_batsim(args.batsim)
    platform = os.path.join(out, "platform.xml")
    workload = os.path.join(out, "workload.json")
    batloc_cli("platform", "generate", "-o", platform, "--nodes", str(args.nodes))
    batloc_cli("workload", "synth", "-o", workload, "--platform", platform, "--duration", args.duration,
               "--seed", str(args.seed))
    with open(workload) as f:
        static = len(json.load(f)["jobs"])
    print(f"platform {args.nodes} nodes x 20 cores; workload {static} jobs over {args.duration}; outputs in {out}")
    print(f"{'scheduler':<14} {'engine':<9} {'wall s':>7} {'jobs':>6} {'ended':>6} {'staged':>7}  verdict")
    failed = 0
    runs = {}
    for name, make, dynamic in [
        ("easyBackfill", lambda p: stock("easyBackfill"), False),
        ("fcfs", lambda p: batloc_policy("fcfs", p), True),
        ("lea", lambda p: batloc_policy("lea", p), True),
        ("lea-bf", lambda p: batloc_policy("lea_bf", p), True),
    ]:
        for label, argv, environment in (("batsim", engine, env), ("embedded", EMBEDDED, None)):
            prefix = os.path.join(out, f"{name}-{label}")
            ok, note, wall, _, rows = run(argv, environment, platform, workload, prefix, make(prefix), dynamic)
            mine = [r for r in rows if r["workload_name"] == "w0"]
            ended = sum(r["final_state"] in ENDED for r in mine)
            staged = len(rows) - len(mine)
            ok = ok and len(mine) == static and ended == static
            failed += not ok
            runs[name, label] = mine
            verdict = "every job ended" if ok else f"FAILED: {note or f'{ended}/{static} jobs ended'}"
            print(f"{name:<14} {label:<9} {wall:>7.0f} {len(mine):>6} {ended:>6} {staged:>7}  {verdict}", flush=True)
    for name in ("easyBackfill", "fcfs", "lea", "lea-bf"):
        same, total, first = compare(runs[name, "batsim"], runs[name, "embedded"])
        if name == "easyBackfill":
            failed += same != total or total != static
        shown = f"; first difference: {first}" if first else ""
        print(f"{name}: {same}/{total} jobs with the same start, finish and allocation on both engines{shown}")
    return failed


def compare(a_rows, b_rows):
    """(jobs agreeing on start, finish and allocation, jobs compared, first difference or '')."""
    key = ("starting_time", "finish_time", "allocated_resources", "final_state")
    b = {r["job_id"]: r for r in b_rows}
    same, first = 0, ""
    for r in a_rows:
        other = b.get(r["job_id"])
        if other is not None and all(r[k] == other[k] for k in key):
            same += 1
        elif not first:
            got = "missing" if other is None else {k: other[k] for k in key}
            first = f"job {r['job_id']}: batsim {({k: r[k] for k in key})}, embedded {got}"
    return same, max(len(a_rows), len(b_rows)), first


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("check", choices=("platforms", "parity"))
    ap.add_argument("--keep", help="keep the outputs in this folder")
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--duration", default="1d")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.batsim = os.environ.get("BATLOC_REF_BATSIM")
    if not args.batsim:
        print("real_batsim: skipped: set BATLOC_REF_BATSIM to the prefix of a Batsim 4.2.1 build (bin/batsim)")
        return 0
    if not os.access(os.path.join(args.batsim, "bin", "batsim"), os.X_OK):
        print(f"real_batsim: no executable {args.batsim}/bin/batsim (BATLOC_REF_BATSIM)", file=sys.stderr)
        return 2
    out = args.keep or tempfile.mkdtemp(prefix=f"batloc-real-{args.check}-")
    os.makedirs(out, exist_ok=True)
    failed = (platforms if args.check == "platforms" else parity)(args, out)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
