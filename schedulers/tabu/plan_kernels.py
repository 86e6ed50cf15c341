"""The per-node plan of CONS + Tabu search, as compiled kernels (seed-schedulers.md §3).

A node's plan is an ordered list of not-yet-started jobs, evaluated in order
with the no-backfill core availability rule: the node's cores are a sorted
vector of availability times (running jobs hold theirs until start +
walltime); a job of c cores starts at max(now, c-th smallest availability)
and takes the c cores available longest, which then become available at its
end. So starts never decrease along a list, and a hole can only be used by
placing a job before the jobs that follow it ("positions").

Each planned job keeps ``after[j]``, the node's availability vector once it
has started (the vector seen by the job at position 0 is the node's
``base``: running jobs only), its start and its ``slack``: the cores still
free at its start once it has started. A job X (c_X cores, walltime w_X)
placed at position p starts at t = max(now, row[c_X - 1]) of the row before
p; it delays no planned job iff t ≤ start of the job at p and every job at
p' ≥ p starting before t + w_X has slack ≥ c_X. This makes rule 1 (the
earliest start that delays nobody) a scan of the positions that skips past
any job blocking a position, O(list length).

Re-evaluating a list after a change stops at the first job whose start and
row come out as they were (and were computed from the same predecessor): the
rest of the list cannot have changed. So a move costs the jobs it actually
shifts, not the list's length.

Arrays shared by the kernels (one slot per planned job): ``cores``, ``wall``,
``start``, ``slack``, ``pos``, ``after`` (slots × widest node); per node k:
``base[k]`` (the first ``node_cores[k]`` columns used), ``lists[k]`` (slots in
order; as long as the slot arrays, so a list never overflows), ``length[k]``.
Plain arrays, so that the compiled code is cached and nothing is compiled at
start-up.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def evaluate_from(base, after, ncores, order, length, p0, inserted, cores, wall, start, slack, pos, now,
                  keep, kept_rows, kept_start, kept_slack):
    """Re-evaluate the jobs at positions p0.. of one node's list (`base`: that node's row);
    returns how many jobs were evaluated.

    `inserted`: the job at p0 was just put there; its stored row was not seen by the job
    after it, so it may not end the evaluation early. `keep`: copy each evaluated job's
    previous row, start and slack to kept_*[0], [1], … first, so that a rejected change can
    be undone by copying them back (``restore``) instead of evaluating again."""
    tmp = np.empty(ncores)
    prev = base if p0 == 0 else after[order[p0 - 1]]
    for p in range(p0, length):
        j = order[p]
        pos[j] = p
        c = cores[j]
        a = prev
        t = a[c - 1]
        if t < now:
            t = now
        # rows are sorted: binary searches for the cores free by t and the place of `end`
        free = c + np.searchsorted(a[c:ncores], t, side="right")
        end = t + wall[j]
        q = c + np.searchsorted(a[c:ncores], end, side="right")
        # the c smallest leave; c copies of `end` are merged into the rest
        tmp[:q - c] = a[c:q]
        tmp[q - c:q] = end
        tmp[q:ncores] = a[q:ncores]
        row = after[j]
        if keep:
            n = p - p0
            kept_start[n] = start[j]
            kept_slack[n] = slack[j]
            kept_rows[n, :ncores] = row[:ncores]
        same = t == start[j] and not (inserted and p == p0) and np.array_equal(row[:ncores], tmp)
        row[:ncores] = tmp
        start[j] = t
        slack[j] = free - c
        if same:
            for r in range(p + 1, length):
                pos[order[r]] = r
            return p - p0 + 1
        prev = row
    return length - p0


@njit(cache=True)
def restore(after, ncores, order, length, p0, count, start, slack, pos, kept_rows, kept_start, kept_slack):
    """Undo an evaluation of `count` jobs from position p0 (``evaluate_from`` with keep)."""
    for n in range(count):
        j = order[p0 + n]
        start[j] = kept_start[n]
        slack[j] = kept_slack[n]
        after[j, :ncores] = kept_rows[n, :ncores]
    for r in range(p0, length):
        pos[order[r]] = r


@njit(cache=True)
def first_fit(base, after, order, length, c, w, start, slack, now, t_max):
    """Rule 1 on one node: (position, start) of the earliest start of a job of `c` cores and
    walltime `w` that delays no planned job (appending always qualifies), or (-1, inf) when
    that start would exceed `t_max`."""
    p = 0
    while p <= length:
        t = base[c - 1] if p == 0 else after[order[p - 1]][c - 1]
        if t < now:
            t = now
        if t > t_max:
            return -1, np.inf
        if p == length:
            return p, t
        if t <= start[order[p]]:
            end = t + w
            q = p
            blocked = -1
            while q < length and start[order[q]] < end:
                if slack[order[q]] < c:
                    blocked = q
                    break
                q += 1
            if blocked < 0:
                return p, t
            p = blocked + 1   # every position up to the blocking job would delay it too
        else:
            p += 1
    return -1, np.inf


@njit(cache=True)
def remove_at(order, length, p):
    for i in range(p, length - 1):
        order[i] = order[i + 1]


@njit(cache=True)
def insert_at(order, length, p, j):
    for i in range(length, p, -1):
        order[i] = order[i - 1]
    order[p] = j


@njit(cache=True)
def cons_place(base, after, lists, length, node_cores, c, w, start, slack, now):
    """Rule 1 over every node: (node, position, start) of the earliest start that delays no
    planned job; ties to the lowest node (then, on it, the earliest position)."""
    best_k, best_p, best_t = -1, -1, np.inf
    for k in range(length.shape[0]):
        if node_cores[k] < c:
            continue
        p, t = first_fit(base[k], after, lists[k], length[k], c, w, start, slack, now, best_t)
        if p >= 0 and t < best_t:
            best_k, best_p, best_t = k, p, t
    return best_k, best_p, best_t
