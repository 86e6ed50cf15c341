"""Online-HPS pass time on a Rackham-sized problem: a 2 000-job queue over 486 nodes of 20 cores.

Target (issue 13): one pass (hypergraph, partition, ordering and starts) in <= 1 s.
Two passes are timed, without the engine (the scheduler's outgoing events are
collected, not simulated):
- `empty`: the queue arrives on an idle cluster, so the pass also starts
  thousands of jobs (one staging each, or a shared one);
- `full`: a second queue of the same size arrives while every core is held,
  so the pass maps 2 000 jobs against 486 loaded anchors and starts none.

    python benchmarks/online_hps.py [--jobs 2000] [--repeat 3] [--partitioner greedy|mtkahypar]
"""

import argparse
import statistics
import time

import numpy as np
from batsim.batsim import Job

from batloc.testing.dry_run import DryRun, make_resources
from batloc.schedulers.online_hps import Online_hps
from batloc.workloads.synth import DEFAULT_CORE_MIX


def queue(n, first_id, seed, jobs_per_file=4):
    rng = np.random.default_rng(seed)
    cores_values = np.array(sorted(DEFAULT_CORE_MIX))
    weights = np.array([DEFAULT_CORE_MIX[c] for c in cores_values])
    cores = rng.choice(cores_values, n, p=weights / weights.sum())
    files = rng.integers(0, max(1, n // jobs_per_file), n)
    walltime = np.round(rng.lognormal(np.log(1800), 1.0, n))
    out = []
    for i in range(n):
        out.append(Job.from_json_dict({
            "id": f"w0!{first_id + i}", "subtime": 0, "res": int(cores[i]), "walltime": float(walltime[i]),
            "profile": "d1", "input_file": f"f{seed}-{files[i]}", "input_size": float(cores[i]) / 20 * 128e9}))
    return out


def one_pass(sched, jobs, now):
    sched.bs._run.now = now
    for job in jobs:
        sched.onJobSubmission(job)
    t0 = time.perf_counter()
    sched.onNoMoreEvents()
    return time.perf_counter() - t0


def measure(n, partitioner):
    compute, storage = make_resources({f"n{i:03d}": 20 for i in range(486)})
    sched = Online_hps({"partitioner": partitioner})
    run = DryRun(sched, compute, storage, {"jobs": [], "profiles": {}})
    sched.onSimulationBegins()
    empty = one_pass(sched, queue(n, 1, seed=1), 1.0)
    started = sum(len(h) for h in sched.state.on_node)
    # Hold every remaining core, so that the next queue maps against loaded anchors only.
    filler = [Job.from_json_dict({"id": f"w0!fill{k}", "subtime": 0, "res": sched.free_cores(k),
                                  "walltime": 3600.0, "profile": "d1"})
              for k in range(len(sched.state.free)) if sched.free_cores(k)]
    one_pass(sched, filler, 2.0)
    run.out.clear()
    full = one_pass(sched, queue(n, 10 ** 6, seed=2), 3.0)
    return empty, started, full, len(sched.pending)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--partitioner", default="greedy")
    args = ap.parse_args(argv)
    rows = [measure(args.jobs, args.partitioner) for _ in range(args.repeat)]
    print(f"Online-HPS ({args.partitioner}), {args.jobs}-job queue, 486 nodes x 20 cores; "
          f"median of {args.repeat}, target <= 1 s per pass")
    print(f"{'pass':<8}{'seconds':>10}  what")
    print(f"{'empty':<8}{statistics.median(r[0] for r in rows):>10.3f}  {rows[0][1]} jobs started")
    print(f"{'full':<8}{statistics.median(r[2] for r in rows):>10.3f}  {rows[0][3]} jobs mapped, none can start")


if __name__ == "__main__":
    main()
