"""Staging proxy overhead: a file-unaware scheduler on a ~20 000-job file-annotated workload, with and without it.

Both runs use the embedded engine and the same file-unaware scheduler on the
same platform and workload; the second goes through `batloc-stage-proxy`, which
also makes the engine simulate every load. Prints both wall times and their
ratio (target of issue 4: < 1.20). Schedulers (`--scheduler`):
- `raw` (default): the minimal first-come first-served process `raw_fcfs.py` (it packs
  each job into one node, as stock schedulers do on Rackham); it costs almost
  nothing, so the ratio is the proxy's relay plus the simulated loads;
- `fcfs`, `fcfs_bf`, `eft`, `lea`: a batloc pybatsim policy with
  `ignore_files` (a real node-aware decision process that knows no files);
  a third run then lets the same policy stage files itself without the proxy,
  which separates the cost of the loads from the cost of the relay;
- a pybatsim stock scheduler such as `schedFcfs` (its per-event cost grows
  with its queue and dominates both runs).

    python benchmarks/stage_proxy.py [--jobs 20000] [--nodes 16] [--scheduler raw|fcfs|schedFcfs] [--keep DIR]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from batloc.outputs import read_rows
from batloc.processes import free_port, pin_to, pybatsim_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATLOC_POLICIES = ("fcfs", "fcfs_bf", "eft", "lea")


def make_inputs(d, nodes, jobs, seed, load):
    platform, workload = os.path.join(d, "p.xml"), os.path.join(d, "w.json")
    subprocess.run(["batloc", "platform", "generate", "-o", platform, "--nodes", str(nodes), "--cores", "20",
                    "--memory", "128GB", "--node-bw", "0.1GB/s"], check=True, stdout=subprocess.DEVNULL)
    # The synthetic generator sizes a workload by duration: about 1.35 jobs per node-hour at its
    # defaults; generate generously, then keep the first `jobs` jobs.
    hours = max(1, int(jobs / (1.2 * nodes * load / 0.9)) + 1)
    subprocess.run(["batloc", "workload", "synth", "-o", workload, "--platform", platform,
                    "--duration", f"{hours}h", "--seed", str(seed), "--load", str(load)], check=True, stdout=subprocess.DEVNULL)
    with open(workload) as f:
        wl = json.load(f)
    wl["jobs"] = [j for j in wl["jobs"] if j["subtime"] > 0][:jobs]   # stock schedulers: no t=0 (contract §4b)
    used = {j["profile"] for j in wl["jobs"]}
    wl["profiles"] = {k: v for k, v in wl["profiles"].items() if k in used}
    with open(workload, "w") as f:
        json.dump(wl, f)
    return platform, workload, len(wl["jobs"])


def run(d, name, platform, workload, scheduler, proxy, own_staging=False):
    out = os.path.join(d, name)
    os.makedirs(out, exist_ok=True)
    port = free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    inner = f"tcp://127.0.0.1:{free_port()}"
    listen = inner if proxy else endpoint
    if scheduler == "raw":
        sched_cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "raw_fcfs.py"), listen, "--per-node"]
    elif scheduler in BATLOC_POLICIES:
        sched_cmd = pybatsim_command() + [os.path.join(ROOT, "schedulers", scheduler + ".py"), "-v", "warning",
                     "-s", listen, "-o", json.dumps({"ignore_files": not own_staging})]
    else:
        sched_cmd = pybatsim_command() + [scheduler, "-v", "warning", "-s", listen]
    proxy_cmd = ["batloc-stage-proxy", "-q", "--bind", endpoint, "--connect", inner,
                 "--export-prefix", os.path.join(out, "out")]
    engine_cmd = ["batloc-batsim", "-q", "-p", platform, "-w", workload, "-e", os.path.join(out, "out"),
                  "-s", endpoint] + (["--enable-dynamic-jobs"] if proxy or own_staging else [])
    log = open(os.path.join(out, "sched.log"), "w")
    # All processes of a run on one CPU, as robin places them: they take turns.
    pin = None if os.environ.get("BATLOC_NO_PIN") else pin_to(min(os.sched_getaffinity(0)))
    t0 = time.monotonic()
    sched = subprocess.Popen(sched_cmd, stdout=log, stderr=subprocess.STDOUT, cwd=out, preexec_fn=pin)
    prox = subprocess.Popen(proxy_cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin) if proxy else None
    engine = subprocess.run(engine_cmd, capture_output=True, text=True, preexec_fn=pin)
    sched.wait(timeout=120)
    wall = time.monotonic() - t0
    proxy_cpu = None
    if prox is not None:
        _, status, usage = os.wait4(prox.pid, 0)   # the proxy's own CPU time
        prox.returncode = os.waitstatus_to_exitcode(status)
        proxy_cpu = usage.ru_utime + usage.ru_stime
        if prox.returncode:
            sys.exit(f"{name}: proxy exited with {prox.returncode}, see {out}/sched.log")
    log.close()
    if engine.returncode or sched.returncode:
        sys.exit(f"{name}: engine {engine.returncode}, scheduler {sched.returncode}: {engine.stderr[-2000:]}\n"
                 f"see {out}/sched.log")
    _, rows = read_rows(os.path.join(out, "out_jobs.csv"))
    stagings = sum(r["workload_name"] == "batloc-stage" for r in rows)
    return wall, len(rows) - stagings, stagings, proxy_cpu


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=0.5,
                    help="offered load (default 0.5: at 0.9 the stock FCFS queue grows for days and "
                         "pybatsim's own per-event cost, which grows with its queue, dominates both runs)")
    ap.add_argument("--scheduler", default="raw",
                    help="raw (a minimal FCFS, default) or a pybatsim stock scheduler such as schedFcfs")
    ap.add_argument("--keep", help="keep inputs and outputs in this directory")
    args = ap.parse_args(argv)
    d = args.keep or tempfile.mkdtemp(prefix="batloc-stage-proxy-")
    os.makedirs(d, exist_ok=True)
    try:
        platform, workload, n = make_inputs(d, args.nodes, args.jobs, args.seed, args.load)
        print(f"{n} jobs on {args.nodes} nodes x 20 cores, scheduler {args.scheduler}")
        base, jobs_a, _, _ = run(d, "direct", platform, workload, args.scheduler, proxy=False)
        print(f"without proxy: {base:.1f} s wall ({jobs_a} jobs)")
        prox, jobs_b, st, cpu = run(d, "proxy", platform, workload, args.scheduler, proxy=True)
        print(f"with proxy:    {prox:.1f} s wall ({jobs_b} jobs, {st} stagings; the proxy itself used "
              f"{cpu:.1f} s CPU)")
        print(f"ratio: {prox / base:.3f} (the proxied run also simulates its loads)")
        if args.scheduler in BATLOC_POLICIES:
            # The same policy staging files itself: what the loads cost without any proxy.
            own, jobs_c, st_c, _ = run(d, "own", platform, workload, args.scheduler, proxy=False, own_staging=True)
            print(f"the policy staging files itself, no proxy: {own:.1f} s wall ({jobs_c} jobs, {st_c} stagings)")
            print(f"proxy overhead, same loads with and without the proxy: {prox / own:.3f} (target < 1.20)")
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
