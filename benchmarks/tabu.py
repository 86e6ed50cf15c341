"""Tabu-search round speed: `python3 benchmarks/tabu.py [--jobs 2000] [--rounds 3] [--seed 0]`.

Builds a plan of `--jobs` planned jobs by CONS (rule 1) on two machines — the
KTH SP2 as one node of 100 cores (the PWA mapping of seed-schedulers.md §3)
and a contract cluster of 64 nodes x 20 cores — behind running jobs that fill
every core, then times optimisation rounds of 4·|plan| iterations each
(Klusáček & Rudová's 2·|plan| × multiplicator 2). Job sizes and walltimes
are drawn like a PWA trace (powers of two and odd sizes; log-uniform
walltimes from 1 min to 1 day), 100 users. The target is one round in ≤ 2 s
on a 2 000-job plan. The first round of a process also loads the compiled
kernels (numba's cache); it is shown apart. Wall and CPU seconds: on a
shared machine the CPU time is the steadier figure. Prints a table, asserts
nothing.
"""

import argparse
import time
from types import SimpleNamespace

import numpy as np

from batloc.schedulers.tabu.plan import Plan
from batloc.schedulers.tabu.search import optimise, seed_state

MACHINES = {"KTH as 1 node x 100 cores": [100], "64 nodes x 20 cores": [20] * 64}


def build(node_cores, jobs, seed):
    rng = np.random.default_rng(seed)
    plan = Plan(node_cores)
    now = 1000.0
    for k, c in enumerate(node_cores):
        plan.set_available(k, now + rng.uniform(0, 7200, size=c), now)
    widest = max(node_cores)
    sizes = np.array([1, 2, 4, 8, 16, 32, 64, 3, 5, 10, 24])
    sizes = sizes[sizes <= widest]
    users = 100
    for i in range(jobs):
        item = SimpleNamespace(id=f"w0!{i}", cores=int(rng.choice(sizes)),
                               walltime=float(np.exp(rng.uniform(np.log(60), np.log(86400)))),
                               subtime=float(rng.uniform(0, now)))
        plan.place(item, int(rng.integers(users)), now)
    fixed_wait = rng.uniform(0, 5000, size=users)
    fixed_den = rng.uniform(1e4, 1e6, size=users)
    return plan, fixed_wait, fixed_den, now


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"{'machine':28s} {'|plan|':>6s} {'iterations':>10s} {'round':>5s} {'moves':>6s} {'wall s':>8s} {'cpu s':>8s}")
    for name, node_cores in MACHINES.items():
        t0 = time.perf_counter()
        plan, fixed_wait, fixed_den, now = build(node_cores, args.jobs, args.seed)
        build_s = time.perf_counter() - t0
        rng = seed_state(args.seed)
        for r in range(args.rounds + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            moves = optimise(plan, fixed_wait, fixed_den, now, rng)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            label = "load" if r == 0 else str(r)
            print(f"{name:28s} {len(plan):6d} {4 * len(plan):10d} {label:>5s} {len(moves):6d} {wall:8.3f} {cpu:8.3f}")
        print(f"{'':28s} (building the plan by CONS took {build_s:.2f} s)")


if __name__ == "__main__":
    main()
