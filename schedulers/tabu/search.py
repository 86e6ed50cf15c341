"""One Tabu-search round on a Plan: the users' NUWT sums, the compiled round, the moves it made."""

import numpy as np

from .search_kernel import tabu_round


def optimise(plan, fixed_wait, fixed_den, now, rng, iterations_per_job=4, fairness_weight=10.0):
    """Run iterations_per_job × |plan| iterations; returns [(item, from node, to node, gain)].

    `fixed_wait`/`fixed_den` per user index: waits and cores × time of the jobs that already
    started (actual run time once completed, walltime while running); planned jobs add theirs."""
    slots = plan.planned_slots()
    wsum = np.array(fixed_wait, dtype=float)
    den = np.array(fixed_den, dtype=float)
    np.add.at(wsum, plan.user[slots], plan.start[slots] - plan.sub[slots])
    np.add.at(den, plan.user[slots], plan.cores[slots] * plan.wall[slots])
    den = np.maximum(1.0, den)
    iterations = int(iterations_per_job) * len(slots)
    log_job = np.zeros(iterations, dtype=np.int64)
    log_from = np.zeros(iterations, dtype=np.int64)
    log_to = np.zeros(iterations, dtype=np.int64)
    log_gain = np.zeros(iterations)
    items = {int(s): plan.items[s] for s in slots}
    moves = tabu_round(plan.base, plan.after, plan.lists, plan.length, plan.node_cores, plan.cores, plan.wall,
                       plan.sub, plan.user, plan.start, plan.slack, plan.pos, wsum, den, iterations,
                       min(10, len(slots) // 2), float(fairness_weight), float(now), rng,
                       log_job, log_from, log_to, log_gain)
    plan.sync_nodes()
    return [(items[int(log_job[i])], int(log_from[i]), int(log_to[i]), float(log_gain[i])) for i in range(moves)]


def seed_state(seed):
    """The generator's state for `seed` (splitmix64: a non-zero xorshift state whatever the seed)."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return np.array([(z ^ (z >> 31)) or 1], dtype=np.uint64)
