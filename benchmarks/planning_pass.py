"""The compiled planning pass alone, on a synthetic saturated Rackham state: `python3 benchmarks/planning_pass.py`.

486 nodes x 20 cores, almost every core held by a running job (random
walltimes, files in memory), a few cores free, and a long queue (default
3 000 jobs, about 8 per file, a third of the files already in some node's
memory). Each variant plans the same queue repeatedly from the same state;
prints µs per scanned job and ms per pass (of the fastest pass: other
processes only slow passes down). Isolates the kernel from pybatsim and
the engine (benchmarks/schedulers.py measures whole runs). Asserts nothing.

    python3 benchmarks/planning_pass.py [--queue 3000] [--passes 20] [--cache paper]
"""

import argparse
import random
import time

from batloc.locality.platform_view import PlatformView
from batloc.schedulers.planning.job_queue import JobQueue, QueuedJob
from batloc.schedulers.planning.options import SchedulerOptions
from batloc.schedulers.planning.planner import Planner
from batloc.schedulers.planning.state import ClusterState
from batloc.testing.dry_run import make_resources

CORE_MIX = [1] * 40 + [2] * 12 + [4] * 12 + [5] * 4 + [8] * 8 + [10] * 6 + [16] * 6 + [20] * 12
GB = 1e9


def saturated_state(options, rng, free_share=0.05):
    platform = PlatformView.from_resources(*make_resources({f"n{i:03d}": 20 for i in range(486)},
                                                           memory_bytes=128 * GB, bandwidth=0.1 * GB))
    state = ClusterState(platform, options)
    jid = 0
    for k in range(len(platform)):
        free = 20
        while free > 0:
            c = rng.choice([x for x in CORE_MIX if x <= free])
            if rng.random() < free_share:
                break
            jid += 1
            pos = list(range(20 - free, 20 - free + c))
            job = QueuedJob(f"w0!r{jid}", c, float(rng.choice([3600, 7200, 14400, 86400])) * rng.uniform(0.2, 1),
                            f"f{rng.randrange(4000)}", c / 20 * 128 * GB)
            state.start(job, k, pos, 0.0, job.size / 0.1e9)
            free -= c
    for sid in list(state.stagings.by_id):
        state.staging_done(sid, 1.0)
    return state


def queue_of(state, rng, length):
    q = JobQueue()
    files = [f"f{i}" for i in range(4000)] + [f"g{i}" for i in range(length // 8)]
    for i in range(length):
        c = rng.choice(CORE_MIX)
        f = rng.choice(files) if rng.random() < 0.3 else f"g{i // 8}"
        job = QueuedJob(f"w0!{i}", c, float(rng.choice([600, 3600, 7200, 36000])), f, c / 20 * 128 * GB)
        q.append(job, state.file_id(f))
    return q


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queue", type=int, default=3000)
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--cache", default="paper")
    args = ap.parse_args()
    print(f"{'variant':<8} {'scanned/pass':>12} {'us/scan':>8} {'ms/pass':>8}")
    for bf in (False, True):
        for policy in ("FCFS", "EFT", "LEA", "LEO", "LEM"):
            rng = random.Random(1)
            opts = SchedulerOptions(backfilling=bf, cache=args.cache)
            state = saturated_state(opts, rng)
            queue = queue_of(state, rng, args.queue)
            planner = Planner(state, policy)
            # every pass places the whole queue from the state: the standing plan would keep every
            # reservation of a queue nothing changed (no job scanned), and this measures a placement
            planner.standing = False
            planner.plan(2.0, queue)                  # compile or load, allocate
            s0 = planner.stats_jobs_scanned
            times = []
            for i in range(args.passes):
                t0 = time.perf_counter()
                planner.plan(2.0 + i, queue)
                times.append(time.perf_counter() - t0)
            dt = min(times) * args.passes        # the least disturbed pass, on a shared machine
            scanned = (planner.stats_jobs_scanned - s0) / args.passes
            name = policy + ("-BF" if bf else "")
            print(f"{name:<8} {scanned:>12.0f} {1e6 * dt / args.passes / max(scanned, 1):>8.2f} "
                  f"{1e3 * dt / args.passes:>8.2f}")


if __name__ == "__main__":
    main()
