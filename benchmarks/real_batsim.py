"""Real Batsim 4.2.1 as the referee: batloc's platforms and schedulers run on it unchanged.

Needs a Batsim 4.2.1 build (its prefix holds bin/batsim and lib/), named by the
environment variable BATLOC_REF_BATSIM; without it, says so in one line and exits 0.

    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py platforms [--keep DIR]
    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py parity [--keep DIR]
                                      [--nodes 32] [--duration 1d] [--seed 1]
    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py policies [--keep DIR] ...

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

`policies`: every policy batloc ships on real Batsim and on the embedded
engine, on saturated `batloc workload synth` inputs (files shared by about 6
jobs, as `batloc demo`'s) of each `--nodes` × `--duration` × `--load` × `--seed`;
the I/O-aware policies on the same nodes with a backbone and an I/O workload of
200 jobs per day. One row per policy and input: whether each engine ran it to
the end, how many jobs have the same start and finish (to 1e-6 s), allocation
and final state on both, how far the run's mean wait, mean stretch and total
file wait (as `batloc report` computes them) are from Batsim's, and where the
runs part: the first instant at which the scheduler answered the two engines
differently, and the latest difference in what they had told it by then (from
the scheduler's own log of every message: events split over other messages, in
another order, other events, or none: a scheduler that is not deterministic).
Then one row per policy against issue 38's targets (every run >= 99 % of jobs
identical, each metric within 0.1 %), and the total. Real Batsim's runs are kept
in --keep (default: a temporary folder) and reused while the schedulers' and the
locality model's sources are unchanged; `--reuse` reuses the embedded engine's
runs too; `--instant` runs the embedded engine in its instant mode. Every
process runs at nice 10; `--parallel N` runs N cases at a time.

    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py policies [--keep DIR]
        [--nodes 32 64] [--duration 1d 2d] [--load 1.1 1.3] [--seed 11 12] [--policies fcfs lea ...]
        [--parallel 2] [--instant]

`steps`: one policy (the first of --policies, default fcfs_bf) on one input (the first --nodes, --duration,
--seed, --load) on both engines with every advance of the simulated clock logged: real Batsim's through
SimGrid's `on_time_advance` signal (a small library preloaded into it, compiled with g++ against the build's
headers), the embedded engine's L07 clock steps with the actions each ended. Prints the jobs identical and the
first step whose clock or delta differs by a bit, in context: where a run that parts from Batsim's first parts
at the sub-nanosecond level (issue 38: FCFS-BF on n32-1d-s11 at load 1.3).

    BATLOC_REF_BATSIM=/path/to/prefix python3 benchmarks/real_batsim.py steps --nodes 32 --seed 11 --load 1.3 \
        --policies fcfs_bf [--keep DIR]

`batsim-files`: Batsim 4.2.1's own platforms/ × workloads/ (every pair, or those named by --platform and
--workload) with pybatsim's stock schedFcfs, easyBackfill and schedEasySjfBackfill on both engines, jobs.csv
compared job by job (start and finish to 1e-6 s, allocation, final state). One row per case: identical,
differing (how many jobs, the first ones), refused by batloc (its one line), failed, or not run by Batsim
(a case real Batsim refuses or aborts on is not batloc's to match); then the totals. The files are read from
--files or $BATLOC_BATSIM_FILES, a folder holding Batsim's platforms/ and workloads/ at tag v4.2.1; they are
not part of batloc. Get them with:

    git clone https://github.com/oar-team/batsim && cd batsim && \
        git archive v4.2.1 platforms workloads | tar -x -C /path/to/batsim-files

    BATLOC_REF_BATSIM=/path/to/prefix BATLOC_BATSIM_FILES=/path/to/batsim-files \
        python3 benchmarks/real_batsim.py batsim-files [--keep DIR] [--platform small_platform.xml ...]
        [--workload test_delays.json ...] [--scheduler schedFcfs ...]

With --keep, real Batsim's result of a case is kept there and reused by later runs (it does not change).
The case runner, the comparison and the cache are benchmarks/batsim_parity.py's (this mode is its grid
without the per-platform table).

Exit status 0 when every check holds.
"""

import argparse
import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from batloc.processes import free_port, pybatsim_command, stop_group

import batsim_parity   # benchmarks/batsim_parity.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMBEDDED = [sys.executable, "-m", "batloc.engine", "-q"]
TIMEOUT = 3600
ENDED = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "REJECTED")


def real_batsim(prefix):
    """(argv, environment) of the reference Batsim under `prefix`."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    return [os.path.join(prefix, "bin", "batsim"), "-q"], env


def run(engine, env, platform, workload, prefix, scheduler, dynamic):
    """One run: `scheduler` (argv without -s, or a function of the endpoint giving the whole argv)
    bound on a free port, then `engine` (argv without -p/-w/-e/-s). Returns (ok, note, wall seconds,
    engine peak RSS in MB, jobs.csv rows)."""
    port = free_port()
    started = time.monotonic()
    endpoint = f"tcp://127.0.0.1:{port}"
    argv = scheduler(endpoint) if callable(scheduler) else scheduler + ["-s", endpoint]
    with open(prefix + "_sched.log", "w") as slog, open(prefix + "_engine.log", "w") as elog:
        sched = subprocess.Popen(argv, stdout=slog,
                                 stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_niced)
        argv = engine + ["-p", platform, "-w", workload, "-e", prefix, "-s", f"tcp://localhost:{port}"]
        eng = subprocess.Popen(argv + (["--enable-dynamic-jobs"] if dynamic else []), stdout=elog,
                               stderr=subprocess.STDOUT, env=env, start_new_session=True, preexec_fn=_niced)
        try:
            status, rss = _wait(eng, TIMEOUT, sched)
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


def _niced():
    """Both engines and the schedulers run at a lower priority: a sweep of real-Batsim runs is long, the machine
    shared."""
    os.nice(10)


def _wait(proc, timeout, scheduler=None):
    """Wait for `proc`; once `scheduler` has failed, 30 s more at most: Batsim waits for ever for an answer
    from a scheduler that died (pybatsim's KeyError on a kill, say), and the case would hold the sweep for
    TIMEOUT."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if scheduler is not None and scheduler.poll() not in (None, 0):
            deadline = min(deadline, time.monotonic() + 30)
            scheduler = None
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


# ---- policies --------------------------------------------------------------------------------

# every scheduler file batloc ships, by family; the I/O-aware ones run on I/O workloads
POLICIES = ["fcfs", "eft", "lea", "leo", "lem", "fcfs_bf", "eft_bf", "lea_bf", "leo_bf", "lem_bf",
            "met", "mct", "sa", "jdp_dll", "online_hps", "cons_tabu"]
IO_POLICIES = ["io_list", "io_pack", "io_pack_random", "io_pack_max", "io_pack_char"]
IO_JOBS_PER_DAY = 200
# acceptance (issue 38): jobs with the same start, finish (to 1e-6 s), allocation and final state; each run's
# mean wait, mean stretch and total file wait
TARGET_IDENTICAL = 0.99
TARGET_METRIC = 0.001


def inputs(args, out):
    """{(nodes, duration, load, seed, io): (platform, workload, static jobs, name)} of the policies mode, written
    once (kept in --keep and reused)."""
    made = {}
    for nodes in args.nodes:
        plain = os.path.join(out, f"p{nodes}.xml")
        backbone = os.path.join(out, f"p{nodes}-backbone.xml")
        if not os.path.exists(plain):
            batloc_cli("platform", "generate", "-o", plain, "--nodes", str(nodes))
            batloc_cli("platform", "generate", "-o", backbone, "--nodes", str(nodes), "--io-routes",
                       "--backbone-bw", "auto")
        for duration in args.duration:
            days = max(1, round(parse_seconds(duration) / 86400))
            for seed in args.seed:
                cases = [(load, False) for load in args.load] + [(None, True)]
                for load, io in cases:
                    name = f"n{nodes}-{duration}-s{seed}" + ("-io" if io else f"-l{load}")
                    workload = os.path.join(out, name + ".json")
                    if not os.path.exists(workload):
                        if io:
                            batloc_cli("workload", "synth", "--io", "uniform", "--platform", backbone, "-o", workload,
                                       "--jobs", str(IO_JOBS_PER_DAY * days), "--seed", str(seed))
                        else:
                            batloc_cli("workload", "synth", "--platform", plain, "-o", workload, "--duration",
                                       duration, "--seed", str(seed), "--load", load, "--jobs-per-file",
                                       args.jobs_per_file)
                    with open(workload) as f:
                        static = len(json.load(f)["jobs"])
                    made[nodes, duration, load or "", seed, io] = (backbone if io else plain, workload, static, name)
    return made


def parse_seconds(text):
    from batloc.platforms.units import parse_duration
    return parse_duration(text)


def _plain(value, digits=None):
    """A message value with numbers as floats (Batsim prints 12.000000 where the engine prints 12), rounded
    to `digits` decimals if given."""
    if isinstance(value, dict):
        return {k: _plain(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, digits) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if digits is None else round(float(value), digits)
    return value


def _event_key(event, digits=None):
    data = dict(event.get("data") or {})
    data.pop("job_progress", None)      # each engine's own estimate of a killed job's progress
    data.pop("kill_reason", None)       # the engine's JOB_COMPLETED carries it empty; Batsim 4.2.1's has none
    return json.dumps([event.get("type"), _plain(data, digits)], sort_keys=True)


def _message_keys(events, digits=None):
    """A message's events as keys, a killed job's end once: Batsim 4.2.1 tells it with a JOB_COMPLETED
    (COMPLETED_KILLED) and a JOB_KILLED, the engine with the JOB_KILLED alone; a scheduler ends the job
    either way."""
    keys = []
    for e in events:
        data = e.get("data") or {}
        if e.get("type") == "SIMULATION_BEGINS":
            continue
        if e.get("type") == "JOB_KILLED":
            found = [json.dumps(["KILLED", j]) for j in data.get("job_ids", [])]
        elif e.get("type") == "JOB_COMPLETED" and data.get("job_state") == "COMPLETED_KILLED":
            found = [json.dumps(["KILLED", data.get("job_id")])]
        else:
            found = [_event_key(e, digits)]
        keys += [k for k in found if k not in keys]
    return keys


def scheduler_stream(log_path):
    """[(now, [received messages' event keys], [sent messages' event keys])] per instant, in order, from the
    scheduler's pybatsim log (INFO: every message in and out). SIMULATION_BEGINS is left out: its config
    and resource lists say which engine runs."""
    instants = []
    with open(log_path, errors="replace") as f:
        for line in f:
            for marker, side in (("Message Received from Batsim: ", 1), ("Message Sent to Batsim: ", 2)):
                at = line.find(marker)
                if at < 0:
                    continue
                try:
                    msg = ast.literal_eval(line[at + len(marker):].strip())
                except (ValueError, SyntaxError):
                    continue
                now = float(msg["now"])
                if not instants or instants[-1][0] != now:
                    instants.append((now, [], []))
                instants[-1][side].append((_message_keys(msg["events"]), _message_keys(msg["events"], 6)))
    return instants


def first_told_otherwise(batsim_log, embedded_log):
    """Where the scheduler's answers first differ between the engines, and why: (time, kind, detail), or None.

    Instant by instant, in order. As long as both engines told the scheduler the same events in the same
    messages, a deterministic scheduler answers the same; so the first instant whose answers differ is
    explained by the latest difference in what the engines told it, at that instant or before (a different
    partition at an earlier instant can change the scheduler's state without changing its answer then).
    kinds: `split` (the same events, in other messages: either engine may send an instant's events in
    several), `order` (the same events and messages, in another order), `rounding` (numbers that differ
    beyond the 6 decimals Batsim prints them with), `engine` (other events or other instants: the engines
    simulated the same decisions differently), `scheduler` (the same messages so far, another answer: the
    scheduler is not deterministic, a batloc bug)."""
    from collections import Counter
    told = None
    for (bt, bin_, bout), (et, ein, eout) in zip(scheduler_stream(batsim_log), scheduler_stream(embedded_log)):
        if bt != et:
            return min(bt, et), "engine", f"Batsim's next instant is t={bt:.6f}, the engine's t={et:.6f}"
        kinds = []
        if Counter(k for m in bin_ for k in m[0]) != Counter(k for m in ein for k in m[0]):
            kinds.append(("rounding", "Batsim sent numbers rounded to 6 decimals (as every number of its "
                                      "messages), the engine the workload's own"))
        bin_, ein = [m[1] for m in bin_], [m[1] for m in ein]
        bout, eout = [m[1] for m in bout], [m[1] for m in eout]
        flat_b, flat_e = [k for m in bin_ for k in m], [k for m in ein for k in m]
        if Counter(flat_b) != Counter(flat_e):
            only = next(iter((Counter(flat_b) - Counter(flat_e)) or (Counter(flat_e) - Counter(flat_b))))
            return bt, "engine", f"events differ (e.g. {json.loads(only)[0]} {str(json.loads(only)[1])[:80]})"
        if flat_b != flat_e:
            kinds.append(("order", "the engines sent the same events in another order"))
        if [len(m) for m in bin_] != [len(m) for m in ein]:
            kinds.append(("split", f"Batsim sent {len(flat_b)} events in messages of {[len(m) for m in bin_]}, "
                                   f"the engine in {[len(m) for m in ein]}"))
        if kinds:
            told = (bt, "+".join(k for k, _ in kinds), f"at t={bt:.6f} " + "; ".join(d for _, d in kinds))
        if [Counter(m) for m in bout] != [Counter(m) for m in eout]:
            if told is None:
                return bt, "scheduler", "the same messages so far, another answer"
            return bt, told[1], told[2]
    return None


def _kept(prefix):
    """(ok, note, jobs.csv rows) of a run kept by an earlier invocation."""
    saved = {"ok": True, "note": ""}
    if os.path.exists(prefix + "_run.json"):
        with open(prefix + "_run.json") as f:
            saved = json.load(f)
    with open(prefix + "_jobs.csv", newline="") as f:
        return saved["ok"], saved["note"], list(csv.DictReader(f))


def scheduler_digest():
    """One digest of what batloc's policies decide by (their sources and the locality model): a kept real-Batsim
    run of a policy is reused while it holds."""
    from batloc.robin.identity import DIGESTS

    return ",".join(DIGESTS.of(os.path.join(ROOT, folder)) for folder in ("schedulers", "locality"))[:80]


def run_metrics(prefix, workload, platform):
    """(mean wait, mean stretch, total file wait) of a run, as `batloc report` computes them."""
    from batloc.analysis import load, metrics

    raw = load.read_jobs(prefix + "_jobs.csv")
    table = metrics.per_job(raw, load.read_workload(workload), load.read_decisions(prefix + "_decisions.csv"),
                            load.reference_bandwidth(platform))
    summary = metrics.per_run(table)
    return summary["mean_wait"], summary["mean_stretch"], summary["total_file_wait"]


def relative(a, b):
    """|a - b| / |b|, 0 when both are 0 (or both not a number: a run without such jobs)."""
    if a == b or (a != a and b != b):
        return 0.0
    return abs(a - b) / abs(b) if b else float("inf")


def policy_case(args, engine, env, policy, platform, workload, static, name, digest):
    """One policy on one input on both engines: a dict of the row's figures. Real Batsim's run is kept in
    --keep and reused while the schedulers' sources are the same (`digest`); the embedded engine always runs."""
    results = {}
    for label, argv, environment in (("batsim", engine, env), ("embedded", EMBEDDED + args.engine_args, None)):
        prefix = os.path.join(args.out, f"{name}__{policy}__{label}")
        saved = prefix + "_run.json"
        kept = None
        if os.path.exists(saved) and os.path.exists(prefix + "_jobs.csv"):
            with open(saved) as f:
                kept = json.load(f)
        reusable = kept is not None and (args.reuse or (label == "batsim" and kept.get("digest") == digest))
        if reusable:
            ok, note, rows = _kept(prefix)
        else:
            ok, note, _, _, rows = run(argv, environment, platform, workload, prefix,
                                       batloc_policy(policy, prefix), dynamic=True)
            with open(saved, "w") as f:
                json.dump({"ok": ok, "note": note, "digest": digest}, f)
        mine = [r for r in rows if r["workload_name"] == "w0"]
        ended = sum(r["final_state"] in ENDED for r in mine)
        ok = ok and len(mine) == static and ended == static
        metrics = run_metrics(prefix, workload, platform) if ok else (float("nan"),) * 3
        results[label] = (ok, note, mine, prefix, metrics)
    (b_ok, b_note, b_rows, b_prefix, b_m), (e_ok, e_note, e_rows, e_prefix, e_m) = \
        results["batsim"], results["embedded"]
    differing = [d for d in batsim_parity.compare(b_rows, e_rows) if not d.endswith("only on batloc")]
    same = len(b_rows) - len(differing)
    total = max(len(b_rows), len(e_rows))
    deltas = [relative(e, b) for e, b in zip(e_m, b_m)]
    where, kind = "", None
    if not b_ok:
        where = f"Batsim: {b_note}"
    elif not e_ok:
        where = f"embedded: {e_note}"
    elif same != total:
        why = first_told_otherwise(b_prefix + "_sched.log", e_prefix + "_sched.log")
        kind = why[1] if why else "unknown"
        where = (f"answers first differ at t={why[0]:.6f}: {kind}: {why[2]}" if why else
                 "the scheduler's logs do not say (pybatsim's INFO lines missing?)")
    if not args.keep_runs:
        for label in ("batsim", "embedded"):
            for suffix in ("_sched.log", "_engine.log", "_machine_states.csv", "_schedule.csv"):
                path = results[label][3] + suffix
                if os.path.exists(path) and label == "embedded":
                    os.remove(path)
    return dict(policy=policy, name=name, b_ok=b_ok, e_ok=e_ok, same=same, total=total, deltas=deltas, kind=kind,
                where=where, metrics=(b_m, e_m))


def policies(args, out):
    import concurrent.futures as cf

    engine, env = real_batsim(args.batsim)
    args.out = out
    chosen = args.policies or POLICIES + IO_POLICIES
    made = inputs(args, out)
    subprocess.run([sys.executable, "-c", "from batloc.schedulers.planning.planner import warm_up; warm_up()"],
                   check=True)   # the planning core compiles once per source version: not inside a run
    digest = scheduler_digest()
    print(f"inputs in {out}: " + ", ".join(f"{name} {static} jobs" for _, _, static, name in made.values()))
    print(f"engine: embedded {' '.join(args.engine_args) or '(default: Batsim timing)'}; {args.parallel} case(s) "
          f"at a time; real Batsim reused from {out} while the schedulers' sources are unchanged")
    header = (f"{'input':<20} {'policy':<15} {'batsim':<6} {'embed.':<6} {'identical':>11} {'%':>6} "
              f"{'wait Δ%':>8} {'stretch Δ%':>10} {'filewait Δ%':>11}  where they part")
    print(header, flush=True)
    cases = [(policy, key) for policy in chosen for key in sorted(made, key=str) if key[4] == (policy in IO_POLICIES)]
    rows = []

    def show(r):
        pct = 100.0 * r["same"] / r["total"] if r["total"] else 0.0
        d = [f"{100 * x:.3f}" if x == x and x != float("inf") else "-" for x in r["deltas"]]
        print(f"{r['name']:<20} {r['policy']:<15} {'ends' if r['b_ok'] else 'FAILS':<6} "
              f"{'ends' if r['e_ok'] else 'FAILS':<6} {r['same']:>5}/{r['total']:<5} {pct:>6.2f} {d[0]:>8} {d[1]:>10} "
              f"{d[2]:>11}  {r['where'][:240]}", flush=True)

    with cf.ThreadPoolExecutor(args.parallel) as pool:
        futures = [pool.submit(policy_case, args, engine, env, policy, *made[key], digest) for policy, key in cases]
        for fut in cf.as_completed(futures):
            rows.append(fut.result())
            show(rows[-1])
    print(f"\n{'policy':<15} {'runs':>5} {'both end':>9} {'jobs identical':>17} {'%':>7} {'worst run %':>11} "
          f"{'max metric Δ%':>13}  differing runs, by their first divergence")
    failed = 0
    for policy in chosen:
        mine = [r for r in rows if r["policy"] == policy]
        if not mine:
            continue
        both = sum(r["b_ok"] and r["e_ok"] for r in mine)
        same, total = sum(r["same"] for r in mine), sum(r["total"] for r in mine)
        worst = min(100.0 * r["same"] / r["total"] if r["total"] else 0.0 for r in mine)
        worst_delta = max((x for r in mine for x in r["deltas"]), default=0.0)
        kinds = [r["kind"] for r in mine if r["kind"]]
        why = ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds)))
        ok = both == len(mine) and all(r["total"] and r["same"] >= TARGET_IDENTICAL * r["total"]
                                       and max(r["deltas"]) <= TARGET_METRIC for r in mine)
        failed += not ok
        print(f"{policy:<15} {len(mine):>5} {both:>9} {same:>8}/{total:<8} {100.0 * same / max(total, 1):>7.2f} "
              f"{worst:>11.2f} {100 * worst_delta:>13.3f}  {why}{'' if ok else '  BELOW TARGET'}")
    same, total = sum(r["same"] for r in rows), sum(r["total"] for r in rows)
    print(f"{'all':<15} {len(rows):>5} {sum(r['b_ok'] and r['e_ok'] for r in rows):>9} {same:>8}/{total:<8} "
          f"{100.0 * same / max(total, 1):>7.2f}")
    print(f"(target per run: >= {100 * TARGET_IDENTICAL:.0f} % of jobs identical, start and finish to 1e-6 s, "
          f"allocation, final state; mean wait, mean stretch, total file wait within {100 * TARGET_METRIC:.1f} % of "
          "Batsim's, Δ% columns. split: the engines sent an instant's events in other messages; order: in another "
          "order; rounding: numbers beyond Batsim's 6 decimals; engine: the engines simulated the same decisions "
          "differently; scheduler: the same messages, another answer. Contract section 4.)")
    return failed


# ---- steps -------------------------------------------------------------------------------------

# Preloaded into real Batsim (LD_PRELOAD): every advance of SimGrid's clock (EngineImpl::solve), as "now delta"
STEP_SHIM = r"""
#include <simgrid/s4u/Engine.hpp>
#include <cstdio>
#include <cstdlib>
static FILE* out;
__attribute__((constructor)) static void batloc_steps()
{
  const char* path = getenv("BATLOC_STEPS");
  if (!path || !(out = fopen(path, "w")))
    return;
  simgrid::s4u::Engine::on_time_advance_cb(
      [](double delta) { fprintf(out, "%.17g %.17g\n", simgrid::s4u::Engine::get_clock(), delta); });
  simgrid::s4u::Engine::on_simulation_end_cb([]() { fflush(out); });
}
"""

# The embedded engine with every step of its L07 clock written the same way, with the actions it ended
ENGINE_STEPS = """
import os, sys
from batloc.engine import l07_clock
out = open(os.environ["BATLOC_STEPS"], "w")
step = l07_clock.L07Clock.step
def logged(self, delta):
    ended = step(self, delta)
    out.write(f"{self.now!r} {delta!r} " + ",".join(getattr(a.done, "__qualname__", "?") for a in ended) + "\\n")
    return ended
l07_clock.L07Clock.step = logged
from batloc.engine.cli import main
try:
    code = main()
finally:
    out.close()
sys.exit(code)
"""


def step_shim(prefix, out):
    """The preloaded library, compiled against the Batsim build's SimGrid headers (g++ needed)."""
    lib = os.path.join(out, "batloc_steps.so")
    if not os.path.exists(lib):
        src = os.path.join(out, "batloc_steps.cpp")
        with open(src, "w") as f:
            f.write(STEP_SHIM)
        subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-std=c++17", "-I", os.path.join(prefix, "include"), src,
                        "-o", lib, "-L", os.path.join(prefix, "lib"), "-lsimgrid"], check=True)
    return lib


def read_steps(path):
    """[now, delta, actions ended] per step, each double as Python prints it (shortest, exact)."""
    with open(path) as f:
        return [[repr(float(x)) for x in line.split(None, 2)[:2]] + line.split(None, 2)[2:] for line in f]


def steps(args, out):
    """One policy on one input on both engines, every clock step compared: the first that differs, in context."""
    engine, env = real_batsim(args.batsim)
    policy = (args.policies or ["fcfs_bf"])[0]
    args.duration, args.seed = args.duration[:1], args.seed[:1]
    args.nodes, args.load = args.nodes[:1], args.load[:1]
    platform, workload, static, name = next(v for k, v in inputs(args, out).items() if not k[4])
    prefix = os.path.join(out, f"{name}__{policy}__")
    env = dict(env, LD_PRELOAD=step_shim(args.batsim, out), BATLOC_STEPS=prefix + "batsim_steps.txt")
    embedded = [sys.executable, "-c", ENGINE_STEPS, "-q"] + args.engine_args
    rows = {}
    logged = dict(os.environ, BATLOC_STEPS=prefix + "embedded_steps.txt")
    for label, argv, environment in (("batsim", engine, env), ("embedded", embedded, logged)):
        ok, note, _, _, got = run(argv, environment, platform, workload, prefix + label,
                                  batloc_policy(policy, prefix + label), dynamic=True)
        if not ok:
            print(f"{name} {policy}: {label} failed: {note}")
            return 1
        rows[label] = [r for r in got if r["workload_name"] == "w0"]
    differing = [d for d in batsim_parity.compare(rows["batsim"], rows["embedded"]) if not d.endswith("only on batloc")]
    b, e = read_steps(prefix + "batsim_steps.txt"), read_steps(prefix + "embedded_steps.txt")
    print(f"{name} {policy}: {len(rows['batsim']) - len(differing)} / {len(rows['batsim'])} jobs identical; clock "
          f"steps: Batsim {len(b)}, embedded {len(e)}")
    first = next((i for i, (x, y) in enumerate(zip(b, e)) if x[:2] != y[:2]),
                 None if len(b) == len(e) else min(len(b), len(e)))
    if first is None:
        print("every step identical (clock and delta, to the last bit)")
        return 0
    print(f"first differing step: #{first}\n{'step':>8} {'Batsim: now':>24} {'delta':>24} | {'embedded: now':>24} "
          f"{'delta':>24}  actions the embedded engine ended")
    for i in range(max(0, first - 6), min(max(len(b), len(e)), first + 6)):
        x = b[i][:2] if i < len(b) else ["", ""]
        y = e[i] + [""] * (3 - len(e[i])) if i < len(e) else ["", "", ""]
        mark = "*" if i == first else " "
        print(f"{mark}{i:>7} {x[0]:>24} {x[1]:>24} | {y[0]:>24} {y[1]:>24}  {y[2].strip()}")
    return 1


# ---- batsim-files ---------------------------------------------------------------------------

def batsim_files(args, out):
    files = args.files or os.environ.get("BATLOC_BATSIM_FILES")
    if not files or not os.path.isdir(os.path.join(files, "platforms")):
        print("real_batsim: batsim-files: skipped: give --files or BATLOC_BATSIM_FILES, a folder holding Batsim "
              "4.2.1's platforms/ and workloads/ (git archive v4.2.1 platforms workloads, from oar-team/batsim)")
        return 0
    grid = batsim_parity.cases(files, args.platform, args.workload, args.scheduler or batsim_parity.STOCK)
    print(f"{len(grid)} cases from {files}")
    counts, failed = {}, 0
    for platform, workload, scheduler in grid:
        name = batsim_parity.case_name(platform, workload, scheduler)
        folder = os.path.join(out, name)
        ref = batsim_parity.cached_batsim(args, platform, workload, scheduler, folder)
        if not ref.ended:
            verdict, detail = "not run by Batsim", ref.note
        else:
            mine = batsim_parity.run_batloc(platform, workload, scheduler, os.path.join(folder, "batloc", "out"))
            verdict = batsim_parity.verdict(ref, mine)
            detail = ""
            if verdict == "differing":
                diffs = batsim_parity.compare(ref.rows, mine.rows)
                detail = f"{len(diffs)}/{len(ref.rows)} jobs differ: " + "; ".join(diffs[:2])
            elif verdict in ("refused", "failed"):
                detail = mine.note
        counts[verdict] = counts.get(verdict, 0) + 1
        failed += verdict in ("differing", "failed")
        print(f"{name:<78} {verdict:<17} {detail[:240]}", flush=True)
    ran = sum(n for v, n in counts.items() if v != "not run by Batsim")
    print(f"\ntotal: {len(grid)} cases; run to the end by real Batsim: {ran}; "
          + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items()))
          + (f" ({100 * counts.get('identical', 0) / ran:.0f} % of the cases Batsim ran give its jobs.csv)"
             if ran else ""))
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
    ap.add_argument("check", choices=("platforms", "parity", "policies", "steps", "batsim-files"))
    ap.add_argument("--keep", help="keep the outputs in this folder (the policies mode reuses its inputs there)")
    ap.add_argument("--nodes", type=int, nargs="+", default=[32])
    ap.add_argument("--duration", nargs="+", default=["1d"])
    ap.add_argument("--seed", type=int, nargs="+", default=[1])
    ap.add_argument("--policies", nargs="+", help="policies mode: these scheduler files only (default: all)")
    ap.add_argument("--load", nargs="+", default=["1.1"], help="policies mode: offered loads (default 1.1: "
                                                                   "saturated)")
    ap.add_argument("--parallel", type=int, default=1, help="policies mode: cases run at a time (each runs its two "
                                                           "engines one after the other; default 1)")
    ap.add_argument("--instant", action="store_true", help="policies mode: the embedded engine in its instant mode "
                                                           "(batloc-batsim --instant), as before issue 38")
    ap.add_argument("--keep-runs", action="store_true", help="policies mode: keep the embedded engine's logs too "
                                                             "(real Batsim's runs are always kept, for reuse)")
    ap.add_argument("--jobs-per-file", default="6", help="policies mode: mean jobs per input file (default 6)")
    ap.add_argument("--reuse", action="store_true", help="policies mode: take the runs kept in --keep by an "
                                                         "earlier invocation instead of running them again")
    ap.add_argument("--files", help="batsim-files: the folder holding Batsim's platforms/ and workloads/ "
                                    "(default $BATLOC_BATSIM_FILES)")
    ap.add_argument("--platform", action="append", help="batsim-files: only this platform (file name, repeatable)")
    ap.add_argument("--workload", action="append", help="batsim-files: only this workload (file name, repeatable)")
    ap.add_argument("--scheduler", action="append", help=f"batsim-files: only this stock scheduler "
                                                         f"(default: {', '.join(batsim_parity.STOCK)})")
    args = ap.parse_args()
    args.engine_args = ["--instant"] if args.instant else []
    args.batsim = os.environ.get("BATLOC_REF_BATSIM")
    if args.batsim and os.path.isfile(args.batsim):   # the executable itself: its prefix
        args.batsim = os.path.dirname(os.path.dirname(os.path.abspath(args.batsim)))
    if not args.batsim:
        print("real_batsim: skipped: set BATLOC_REF_BATSIM to the prefix of a Batsim 4.2.1 build (bin/batsim)")
        return 0
    if not os.access(os.path.join(args.batsim, "bin", "batsim"), os.X_OK):
        print(f"real_batsim: no executable {args.batsim}/bin/batsim (BATLOC_REF_BATSIM)", file=sys.stderr)
        return 2
    out = args.keep or tempfile.mkdtemp(prefix=f"batloc-real-{args.check}-")
    os.makedirs(out, exist_ok=True)
    if args.check == "parity":
        args.nodes, args.duration, args.seed = args.nodes[0], args.duration[0], args.seed[0]
    failed = {"platforms": platforms, "parity": parity, "policies": policies, "steps": steps,
              "batsim-files": batsim_files}[args.check](args, out)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
