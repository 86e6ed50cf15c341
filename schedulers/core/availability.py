"""When cores are free in the planned schedule: t_k and the cores to use (compiled).

Two readings of the same reservations (semantics note, "Node availability"):

- without backfilling, each core is available after the end of the last
  reservation on it; t_k for c cores is the c-th smallest availability on
  node k, raised to now: ``cols[c - 1, k]``, exact for every node at once;
- with conservative backfilling, t_k is the earliest instant at which c cores
  of node k are free during the whole window [t_k, t_k + w), given every
  reservation of the pass. ``cols`` then sorts each core's earliest free
  instant, a lower bound for every node at once; the exact t_k is searched
  only on the nodes the planner looks at, over the candidate instants now, the
  actual jobs' ends and the ends of reservations on the node.

Chosen cores: the lowest positions free for the window. A job running at or
past its planned end (its completion not yet received) never offers its cores
at now.
"""

import numpy as np

from batloc.schedulers.core.jit import njit
from batloc.schedulers.core.scratch import IV_COUNT, MAX_FREE

INF = np.inf


@njit
def _sort_row(S, k, row):
    """Row ``row`` of node k changed: its sorted copy into ``cols[:, k]``; cores free now."""
    m = row.shape[0]
    buf = S.cand_times
    for i in range(m):
        x = row[i]
        j = i - 1
        while j >= 0 and buf[j] > x:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x
    for i in range(m):
        S.cols[i, k] = buf[i]


@njit
def _count_free(row, now):
    free = 0
    for x in row:
        if x <= now:
            free += 1
    return free


@njit
def _refresh(S, k, row, now):
    """After a reservation on k: its sorted column and cores free now; the
    largest count free now is recomputed lazily when k held it and lost cores."""
    _sort_row(S, k, row)
    old = S.free_now[k]
    new = _count_free(row, now)
    S.free_now[k] = new
    best = S.ints[MAX_FREE]
    if best >= 0:
        if new > best:
            S.ints[MAX_FREE] = new
        elif new < old and old == best:
            S.ints[MAX_FREE] = -1


@njit
def max_free_now(S):
    if S.ints[MAX_FREE] < 0:
        S.ints[MAX_FREE] = S.free_now.max()
    return S.ints[MAX_FREE]


@njit
def begin_pass(A, S, now, backfilling):
    n, m = A.core_end.shape
    soon = np.nextafter(now, INF)
    best = 0
    for k in range(n):
        busy = False
        for p in range(m):
            e = A.core_end[k, p]
            if A.core_held[k, p]:
                busy = True
                v = soon if e <= now else e
            else:
                v = e if e > now else now
            S.base[k, p] = v
            if backfilling:
                S.first_free[k, p] = v
                S.core_iv[k, p] = -1
        S.busy[k] = busy
        _sort_row(S, k, S.base[k])
        free = _count_free(S.base[k], now)
        S.free_now[k] = free
        if free > best:
            best = free
    S.ints[MAX_FREE] = best
    S.ints[IV_COUNT] = 0


# ---- without backfilling ------------------------------------------------------

@njit
def t_exact(S, k, cores):
    """t_k on node k and its cores in ``S.pos`` (count ``cores``); +inf if it never has them."""
    t = S.cols[cores - 1, k]
    if not t < INF:
        return INF
    row = S.base[k]
    c = 0
    for p in range(row.shape[0]):
        if row[p] <= t:
            S.pos[c] = p
            c += 1
            if c == cores:
                break
    return t


@njit
def reserve(S, k, pos, cores, start, walltime, now):
    row = S.base[k]
    for i in range(cores):
        row[pos[i]] = start + walltime
    _refresh(S, k, row, now)


# ---- conservative backfilling ---------------------------------------------------

@njit
def _free_over(S, k, p, x, x_end):
    """Is core p of node k free over [x, x_end) (actual jobs and reservations)?"""
    if S.base[k, p] > x:
        return False
    j = S.core_iv[k, p]
    while j >= 0 and S.iv_end[j] <= x:       # intervals on a core are disjoint and sorted
        j = S.iv_next[j]
    return not (j >= 0 and S.iv_start[j] < x_end)


@njit
def _candidates(S, k, now, lower):
    """Sorted distinct candidate instants >= lower for node k: now, the actual
    jobs' ends and the ends of the pass's reservations on k; their count."""
    buf = S.cand_times
    c = 0
    if now >= lower:
        buf[c] = now
        c += 1
    m = S.base.shape[1]
    for p in range(m):
        x = S.base[k, p]
        if now < x < INF and x >= lower:
            buf[c] = x
            c += 1
    j = S.node_pw_head[k]
    while j >= 0:
        x = S.pw_end[j]
        if now < x < INF and x >= lower:
            buf[c] = x
            c += 1
        j = S.pw_next[j]
    buf[:c].sort()
    u = 0
    for i in range(c):
        if u == 0 or buf[i] != buf[u - 1]:
            buf[u] = buf[i]
            u += 1
    return u


@njit
def t_exact_bf(S, k, cores, walltime, lower, now):
    """Backfilling t_k >= ``lower`` on node k and its cores in ``S.pos``; +inf if none."""
    m = S.base.shape[1]
    if S.node_pw_head[k] < 0:
        # Nothing reserved on k yet in this pass: a core is free from its base
        # availability on, so t_k is the c-th smallest one.
        t = S.cols[cores - 1, k]
        if lower <= t:
            if not t < INF:
                return INF
            c = 0
            for p in range(m):
                if S.base[k, p] <= t:
                    S.pos[c] = p
                    c += 1
                    if c == cores:
                        break
            return t
    count = _candidates(S, k, now, lower)
    for i in range(count):
        x = S.cand_times[i]
        x_end = x + walltime
        c = 0
        for p in range(m):
            if _free_over(S, k, p, x, x_end):
                S.pos[c] = p
                c += 1
                if c == cores:
                    return x
    return INF


@njit
def reserve_bf(S, k, pos, cores, start, walltime, now):
    end = start + walltime
    row = S.first_free[k]
    for i in range(cores):
        p = pos[i]
        # Insert [start, end) before the first interval starting at or after start.
        new = S.ints[IV_COUNT]
        S.ints[IV_COUNT] = new + 1
        S.iv_start[new] = start
        S.iv_end[new] = end
        prev, j = -1, S.core_iv[k, p]
        while j >= 0 and S.iv_start[j] < start:
            prev, j = j, S.iv_next[j]
        S.iv_next[new] = j
        if prev < 0:
            S.core_iv[k, p] = new
        else:
            S.iv_next[prev] = new
        # The core's earliest free instant was in no interval; if the new one
        # covers it, it moves to the end of the run of back-to-back intervals.
        ff = row[p]
        if start <= ff < end:
            ff = end
            j = S.core_iv[k, p]
            while j >= 0:
                if S.iv_start[j] == ff:
                    ff = S.iv_end[j]
                elif S.iv_start[j] > ff:
                    break
                j = S.iv_next[j]
            row[p] = ff
    _refresh(S, k, row, now)
