"""When cores are free in the planned schedule: t_k and the cores to use (compiled).

Two readings of the same reservations (semantics note, "Node availability"):

- without backfilling, each core is available after the end of the last
  reservation on it; t_k for c cores is the c-th smallest availability on
  node k, raised to now: ``cols[c - 1, k]``, exact for every node at once;
- with conservative backfilling, t_k is the earliest instant at which c cores
  of node k are free during the whole window [t_k, t_k + w), given every
  reservation of the pass. ``cols`` then sorts each core's earliest free
  instant, a lower bound for every node at once, and ``tcols`` each core's
  end of its last reservation: for a job longer than every gap between a
  node's reservations (``longer_than_gaps``: on a saturated cluster, nearly
  every node for nearly every job) t_k is exactly the c-th of those, so the
  trees order nodes by ``tcols`` and only the few nodes with a long enough
  gap are scanned (``planner``): over the candidate instants now, the actual
  jobs' ends and the ends of reservations on the node.

Chosen cores: the lowest positions free for the window. A job running at or
past its planned end (its completion not yet received) never offers its cores
at now. Arrays are those of ``flat_state`` and ``scratch``, passed one by one.
"""

import numpy as np

from batloc.schedulers.planning.flat_state import END
from batloc.schedulers.planning.jit import inline, njit
from batloc.schedulers.planning.scratch import BUSY, CHANGED, FREE, FRONT, HEAD, IV_COUNT, IV_END, IV_NEXT, IV_START, MAX_FREE, P_NEXT, TAIL

INF = np.inf


@inline
def at(x, now):
    """A time read from the availability rows: free cores hold -inf."""
    return x if x > now else now


@inline
def _sorted_into(rows, k, m, buf):
    """The first m values of node k's row of ``rows``, sorted, into buf[:m] (insertion sort: m is a few tens)."""
    for i in range(m):
        x = rows[k, i]
        j = i - 1
        while j >= 0 and buf[j] > x:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x


@inline
def first_cores(rows, k, t, cores, pos):
    """The first ``cores`` cores of node k (index order) whose value in ``rows`` is <= t, into pos[0]."""
    c = 0
    for p in range(pos.shape[1]):
        if rows[k, p] <= t:
            pos[0, c] = p
            c += 1
            if c == cores:
                break


@inline
def _sort_row(rows, k, cols, buf):
    """Node k's row of ``rows`` changed: its sorted copy into ``cols[:, k]``."""
    m = rows.shape[1]
    _sorted_into(rows, k, m, buf)
    for i in range(m):
        cols[i, k] = buf[i]


@inline
def _resort(rows, k, cols, tree, buf):
    """As _sort_row, and the trees of the columns whose value changed."""
    m = rows.shape[1]
    _sorted_into(rows, k, m, buf)
    for c in range(m):
        if cols[c, k] != buf[c]:
            cols[c, k] = buf[c]
            tree_fix(tree, cols, c, k)


@inline
def _count_free(rows, k, now):
    free = 0
    for p in range(rows.shape[1]):
        if rows[k, p] <= now:
            free += 1
    return free


# ---- nodes in increasing t_k: one tournament tree per core count ---------------
# tree[c, i] holds (key, node) of the least (cols[c, node], node) under tree
# node i, the key kept beside the node so that a comparison reads two
# neighbours instead of two random columns; the leaves are i = L + k (L a
# power of two >= n), unused or set-aside leaves hold (+inf, n), the root is i = 1.
#
# The trees are lazy: a node whose column changed is only noted in tree c's
# plane of pending nodes (tree[M + c], M the core count = cols.shape[0]: its count at [0, 0],
# the nodes at [1.., 1], a flag per node at [L + k, 0]) and put in place when
# tree c is next read (``flush``, by ``planner._choose``). A reservation moves
# every column of its node, and a node reloaded replays its whole chain of
# reservations, while a job reads one tree: most of those updates used to be
# overwritten before any read.
TK, TN = 0, 1


@inline
def _win(tree, c, a, b):
    ka, kb = tree[c, a, TK], tree[c, b, TK]
    if ka < kb or (ka == kb and tree[c, a, TN] < tree[c, b, TN]):
        return a
    return b


@inline
def _tree_set(tree, c, k, key, node):
    """Leaf k of tree c becomes (key, node): recompute its ancestors, up to the
    first that stays the same (nothing above it can change then)."""
    i = tree.shape[1] // 2 + k
    tree[c, i, TK] = key
    tree[c, i, TN] = node
    i >>= 1
    while i >= 1:
        w = _win(tree, c, 2 * i, 2 * i + 1)
        key, node = tree[c, w, TK], tree[c, w, TN]
        if key == tree[c, i, TK] and node == tree[c, i, TN]:
            break
        tree[c, i, TK] = key
        tree[c, i, TN] = node
        i >>= 1


@inline
def tree_fix(tree, cols, c, k):
    """Node k's value in column c changed: noted, put in place at tree c's next ``flush``."""
    q = cols.shape[0] + c
    leaf = tree.shape[1] // 2 + k
    if tree[q, leaf, 0] == 0.0:
        tree[q, leaf, 0] = 1.0
        count = int(tree[q, 0, 0])
        tree[q, 1 + count, 1] = k
        tree[q, 0, 0] = count + 1


# A tree with more nodes noted than this share of its leaves is rebuilt whole at its
# next read: one pass over its 2L entries costs less than that many climbs from a leaf
# (a rarely read tree, of a core count few jobs ask for, collects most of the nodes).
REBUILD_SHARE = 4


@inline
def flush(tree, cols, c):
    """Tree c brought up to date with column c: the nodes noted since its last read put in
    place, or the whole tree rebuilt when they are many (the same tree: each entry is the
    least (key, node) under it, whichever way it was reached)."""
    q = cols.shape[0] + c
    leaves = tree.shape[1] // 2
    count = int(tree[q, 0, 0])
    if count > leaves // REBUILD_SHARE:
        for j in range(count):
            tree[q, leaves + int(tree[q, 1 + j, 1]), 0] = 0.0
        _tree_build_one(tree, cols, c, cols.shape[1] - 1)
    else:
        for j in range(count):
            k = int(tree[q, 1 + j, 1])
            tree[q, leaves + k, 0] = 0.0
            _tree_set(tree, c, k, cols[c, k], k)
    tree[q, 0, 0] = 0.0


@njit
def _tree_build_one(tree, cols, c, n):
    """Tree c built from column c over nodes 0..n-1 (the other leaves +inf, node n)."""
    leaves = tree.shape[1] // 2
    for k in range(leaves):
        tree[c, leaves + k, TK] = cols[c, k] if k < n else INF
        tree[c, leaves + k, TN] = k if k < n else n
    for i in range(leaves - 1, 0, -1):
        w = _win(tree, c, 2 * i, 2 * i + 1)
        tree[c, i, TK] = tree[c, w, TK]
        tree[c, i, TN] = tree[c, w, TN]


@njit
def _tree_build(tree, cols, n):
    m = cols.shape[0]
    tree[m:2 * m] = 0.0           # nothing pending
    for c in range(m):
        _tree_build_one(tree, cols, c, n)


@inline
def least(tree, c):
    """The node of least (t_k, index) for ``c + 1`` cores among those left (n: none), and its key."""
    return int(tree[c, 1, TN]), tree[c, 1, TK]


@inline
def set_aside(tree, cols, c, k):
    """Take node k out of tree c for the current job (``put_back`` restores it)."""
    _tree_set(tree, c, k, INF, cols.shape[1] - 1)


@inline
def put_back(tree, cols, c, k):
    _tree_set(tree, c, k, cols[c, k], k)


# ---- a walk's changed nodes by bound: one segment tree per core count ------------
# The standing plan's walk (``planner._walk``) asks, for each job, which changed
# nodes could beat its score: tree[2M + c] holds, under tree node i (leaves
# i = L + k), the least ``tcols[c]`` (with backfilling; ``cols[c]`` without)
# and the least ``cols[c]`` over the changed nodes below it (+inf: none), and
# tree[3M + c, i, 0] their longest gap between reservations (``tails[k, 2M]``;
# -inf: none, or no backfilling). A job longer than every gap of a subtree has
# t_k >= its least tcols on each of its nodes, else >= its least cols: a
# subtree whose bound cannot beat the job's best holds no node that can.
# Lazy as the trees above: a node that joins or leaves the changed nodes, or
# whose columns move while it is one, is noted in tree[4M + c] (same layout as
# the pending planes above) and put in place when tree c is next read. Between
# passes every leaf not pending is (+inf, +inf, -inf).
CHANGED_TREES = 3     # the planes past the 2M of the trees above


@inline
def changed_note(tree, m, k):
    """Node k joined or left the changed nodes, or its columns moved while it is one."""
    leaf = tree.shape[1] // 2 + k
    for c in range(m):
        q = 4 * m + c
        if tree[q, leaf, 0] == 0.0:
            tree[q, leaf, 0] = 1.0
            count = int(tree[q, 0, 0])
            tree[q, 1 + count, 1] = k
            tree[q, 0, 0] = count + 1


@inline
def _changed_set(tree, m, c, k, t, f, g):
    a, b = 2 * m + c, 3 * m + c
    i = tree.shape[1] // 2 + k
    tree[a, i, 0] = t
    tree[a, i, 1] = f
    tree[b, i, 0] = g
    i >>= 1
    while i >= 1:
        t = min(tree[a, 2 * i, 0], tree[a, 2 * i + 1, 0])
        f = min(tree[a, 2 * i, 1], tree[a, 2 * i + 1, 1])
        g = max(tree[b, 2 * i, 0], tree[b, 2 * i + 1, 0])
        if t == tree[a, i, 0] and f == tree[a, i, 1] and g == tree[b, i, 0]:
            break
        tree[a, i, 0] = t
        tree[a, i, 1] = f
        tree[b, i, 0] = g
        i >>= 1


@inline
def changed_flush(tree, backfilling, cols, tcols, tails, node_i, c):
    """The changed nodes' tree c brought up to date: the nodes noted since its last read put in place."""
    m = cols.shape[0]
    q = 4 * m + c
    leaves = tree.shape[1] // 2
    for j in range(int(tree[q, 0, 0])):
        k = int(tree[q, 1 + j, 1])
        tree[q, leaves + k, 0] = 0.0
        if node_i[k, CHANGED] == 0:
            _changed_set(tree, m, c, k, INF, INF, -INF)
        elif backfilling:
            _changed_set(tree, m, c, k, tcols[c, k], cols[c, k], tails[k, 2 * m])
        else:
            _changed_set(tree, m, c, k, cols[c, k], cols[c, k], -INF)
    tree[q, 0, 0] = 0.0


@inline
def fits_gap(walltime, gap):
    """Might a job of this walltime fit a gap this long (``longer_than_gaps``'s converse)?"""
    return not walltime > 1.000001 * gap + 1e-6


# Per core, with backfilling, the gaps a job could start in (``tails[k]`` past its first 2m + 1
# columns): the gaps between its reservations in start order (the first from its actual job's
# end, the last its end of reservations, endless) reduced to those longer than every earlier one,
# at most FRONT of them, as (start, length), empty ones left out. The earliest gap of length >= w is the first of
# those as long: every earlier gap is shorter than w, so longer than none before it. A core's
# earliest start for the job is at least that gap's start (the last kept, where none kept is as
# long): ``gap_bound``. (FRONT lives in ``scratch``, which sizes the rows.)


@inline
def tails_cores(tails):
    """The node's core count, from the width of ``tails``."""
    return (tails.shape[1] - 1) // (3 + 2 * FRONT)


@inline
def _front(m, p):
    """Column of core p's first gap in ``tails`` (m cores); its longest gap between reservations
    follows its FRONT gaps, at ``_front(m, p) + 2 * FRONT``."""
    return 2 * m + 1 + (2 * FRONT + 1) * p


@inline
def _core_gap_start(k, p, m, walltime, tails):
    """The earliest instant core p of node k might be free for walltime (a lower bound)."""
    col = _front(m, p)
    x = tails[k, col]
    for g in range(FRONT):
        x = tails[k, col + 2 * g]
        if fits_gap(walltime, tails[k, col + 2 * g + 1]):
            break
    return x


@inline
def gap_bound(k, cores, walltime, now, tails, buf):
    """A lower bound of the backfilling t_k of a job of ``cores`` cores and this walltime on node k:
    the cores-th smallest of its cores' earliest gap at least that long (``FRONT``), raised to now.
    It holds as time passes: the first gap only shortens (its kept start and length stay bounds).
    ``buf`` holds m doubles of scratch."""
    if fits_gap(walltime, 0.0):
        return now          # back-to-back reservations leave empty gaps, which are not kept
    m = tails_cores(tails)
    for p in range(m):
        x = _core_gap_start(k, p, m, walltime, tails)
        j = p - 1
        while j >= 0 and buf[j] > x:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x
    return at(buf[cores - 1], now)


@njit
def _refresh(rows, k, now, cols, tree, node_i, cand_times, ints):
    """After a reservation on k: its sorted column, its place in the trees and
    cores free now."""
    _resort(rows, k, cols, tree, cand_times)
    _free_now(rows, k, now, node_i, ints)


@inline
def _free_now(rows, k, now, node_i, ints):
    """Node k's cores free now; the largest count free now is recomputed
    lazily when k held it and lost cores."""
    old = node_i[k, FREE]
    new = _count_free(rows, k, now)
    node_i[k, FREE] = new
    best = ints[MAX_FREE]
    if best >= 0:
        if new > best:
            ints[MAX_FREE] = new
        elif new < old and old == best:
            ints[MAX_FREE] = -1


@njit
def max_free_now(node_i, ints):
    if ints[MAX_FREE] < 0:
        ints[MAX_FREE] = node_i[:, FREE].max()
    return ints[MAX_FREE]


# ---- the pass's starting point ----------------------------------------------------

@inline
def _tail_column(k, tails, tcols, tree, fix_trees):
    """With backfilling the trees order nodes by ``tcols``: node k's c-th
    smallest end of its cores' last reservations (when c cores are free for
    good), copied from its row of ``tails``."""
    m = tcols.shape[0]
    for c in range(m):
        x = tails[k, m + c]
        if tcols[c, k] != x:
            tcols[c, k] = x
            if fix_trees:
                tree_fix(tree, tcols, c, k)


@njit
def _load_node(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
               cand_times, fix_trees):
    """Node k's rows as the actual state has them, its sorted column, its count
    free now and whether it is busy. Free cores hold -inf (read as now); a job
    at or past its planned end (its completion not yet received) keeps its
    cores until just after now."""
    m = core_end.shape[1]
    soon = np.nextafter(now, INF)
    busy = 0
    for p in range(m):
        e = core_end[k, p]
        if core_held[k, p]:
            busy = 1
            if e <= now:
                e = soon
        base[k, p] = e
        if backfilling:
            first_free[k, p] = e
            tails[k, p] = e
            core_iv[k, p] = -1
            col = _front(m, p)
            tails[k, col] = e          # free for good from its actual job's end: one endless gap
            tails[k, col + 1] = INF
            tails[k, col + 2 * FRONT] = 0.0
    node_i[k, BUSY] = busy
    node_i[k, FREE] = _count_free(base, k, now)
    node_i[k, HEAD] = -1
    node_i[k, TAIL] = -1
    if backfilling:
        _sort_row(base, k, cols, cand_times)
        for c in range(m):
            tails[k, m + c] = cols[c, k]
        tails[k, 2 * m] = 0.0
        _tail_column(k, tails, tcols, tree, fix_trees)
    elif fix_trees:
        _resort(base, k, cols, tree, cand_times)
    else:
        _sort_row(base, k, cols, cand_times)


@njit
def load(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
         cand_times):
    """Node k's rows back to the actual state (its reservations dropped), trees included."""
    _load_node(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
               cand_times, True)


@njit
def load_all(backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
             cand_times, ints):
    """Every node's rows as the actual state has them, no reservation; the trees rebuilt."""
    n = core_end.shape[0]
    for k in range(n):
        _load_node(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree,
                   node_i, cand_times, False)
    _tree_build(tree, tcols if backfilling else cols, n)
    ints[MAX_FREE] = -1
    ints[IV_COUNT] = 0


# ---- without backfilling ------------------------------------------------------

@inline
def t_exact(k, cores, now, cols, base, pos):
    """t_k on node k and its cores in ``pos[0]`` (count ``cores``); +inf if it never has them."""
    t = cols[cores - 1, k]
    if not t < INF:
        return INF
    t = at(t, now)
    first_cores(base, k, t, cores, pos)
    return t


@inline
def earliest_cores(rows, k, cores, now, pos):
    """The ``cores`` cores of node k available first in ``rows`` (read from
    now on: ties, the cores free now among them, go to the lowest position),
    into pos[0] in position order. The authors' simulator keeps a node's cores
    sorted by availability and gives a job the first ones (R7): a job reserved
    in the future takes the cores free now before those freed later, where
    the lowest positions available by t_k might leave some free now."""
    m = rows.shape[1]
    c = 0
    for p in range(m):
        x = at(rows[k, p], now)
        if c == cores and not at(rows[k, pos[0, c - 1]], now) > x:
            continue
        i = c if c < cores else cores - 1
        while i > 0 and at(rows[k, pos[0, i - 1]], now) > x:
            pos[0, i] = pos[0, i - 1]
            i -= 1
        pos[0, i] = p
        if c < cores:
            c += 1
    pos[0, :cores].sort()


@njit
def reserve(k, cores, start, walltime, now, base, cols, tree, node_i, cand_times, pos, ints):
    """Cores ``pos[1, :cores]`` of node k taken from start for walltime."""
    for i in range(cores):
        base[k, pos[1, i]] = start + walltime
    _refresh(base, k, now, cols, tree, node_i, cand_times, ints)


# ---- conservative backfilling ---------------------------------------------------

@njit
def _candidates(k, now, lower, base, cand_times, node_i, plan):
    """Sorted distinct candidate instants >= lower for node k: now, the actual
    jobs' ends and the ends of the pass's reservations on k; their count."""
    buf = cand_times
    c = 0
    if now >= lower:
        buf[c] = now
        c += 1
    for p in range(base.shape[1]):
        x = base[k, p]
        if now < x < INF and x >= lower:
            buf[c] = x
            c += 1
    j = node_i[k, HEAD]
    while j >= 0:
        x = plan[j, END]
        if now < x < INF and x >= lower:
            buf[c] = x
            c += 1
        j = int(plan[j, P_NEXT])
    if c > 32:
        buf[:c].sort()
    else:
        for i in range(1, c):
            x = buf[i]
            j = i - 1
            while j >= 0 and buf[j] > x:
                buf[j + 1] = buf[j]
                j -= 1
            buf[j + 1] = x
    u = 0
    for i in range(c):
        if u == 0 or buf[i] != buf[u - 1]:
            buf[u] = buf[i]
            u += 1
    return u


@inline
def longer_than_gaps(walltime, k, tails):
    """Is the job longer than every gap left between reservations on node k
    (with room for rounding)? Then its backfilling t_k there is exactly
    ``tails[k, m + c - 1]`` (raised to now), the c-th smallest end of its
    cores' last reservations; the gap kept is an upper bound (time passing
    only shortens the first one), so the answer is never wrong, only cautious."""
    return not fits_gap(walltime, tails[k, 2 * tails_cores(tails)])


@inline
def t_exact_bf(k, cores, walltime, lower, now, cols, base, tails, pos, cand_times, core_iv, iv, node_i, plan):
    """Backfilling t_k >= ``lower`` on node k and its cores in ``pos[0]``; +inf if none."""
    m = base.shape[1]
    # Longer than every gap between reservations: a core can host the job
    # only once free for good, so the scan below would stop at the c-th
    # smallest end of the cores' last reservations.
    if longer_than_gaps(walltime, k, tails):
        t = at(tails[k, m + cores - 1], now)
        if lower <= t:
            if not t < INF:
                return INF
            first_cores(tails, k, t, cores, pos)
            return t
    if node_i[k, HEAD] < 0:
        # Nothing reserved on k yet in this pass: a core is free from its base
        # availability on, so t_k is the c-th smallest one.
        t = at(cols[cores - 1, k], now)
        if lower <= t:
            if not t < INF:
                return INF
            first_cores(base, k, t, cores, pos)
            return t
    count = _candidates(k, now, lower, base, cand_times, node_i, plan)
    # pos[2, p]: core p's first interval ending after the candidate; the
    # candidates increase, so it only moves forward.
    for p in range(m):
        pos[2, p] = core_iv[k, p]
    for i in range(count):
        x = cand_times[i]
        x_end = x + walltime
        c = 0
        for p in range(m):
            # Core p free over [x, x_end): not held by an actual job at x, and
            # the first of its intervals ending after x (they are disjoint and
            # sorted) starts at or after x_end.
            if base[k, p] > x:
                continue
            j = pos[2, p]
            while j >= 0 and iv[j, IV_END] <= x:
                j = int(iv[j, IV_NEXT])
            pos[2, p] = j
            if j >= 0 and iv[j, IV_START] < x_end:
                continue
            pos[0, c] = p
            c += 1
            if c == cores:
                return x
    return INF


@njit
def reserve_bf(k, cores, start, walltime, now, base, first_free, tails, cols, tcols, tree, node_i, cand_times,
               pos, core_iv, iv, ints):
    """Cores ``pos[1, :cores]`` of node k reserved over [start, start + walltime)."""
    end = start + walltime
    m = first_free.shape[1]
    for i in range(cores):
        p = pos[1, i]
        if start >= at(tails[k, p], now):
            tails[k, p] = end
        # Insert [start, end) before the first interval starting at or after start.
        new = ints[IV_COUNT]
        ints[IV_COUNT] = new + 1
        iv[new, IV_START] = start
        iv[new, IV_END] = end
        prev, j = -1, core_iv[k, p]
        while j >= 0 and iv[j, IV_START] < start:
            prev, j = j, int(iv[j, IV_NEXT])
        iv[new, IV_NEXT] = j
        if prev < 0:
            core_iv[k, p] = new
        else:
            iv[prev, IV_NEXT] = new
        # The core's earliest free instant was in no interval; if the new one
        # covers it, it moves to the end of the run of back-to-back intervals.
        ff = at(first_free[k, p], now)
        if start <= ff < end:
            ff = end
            j = core_iv[k, p]
            while j >= 0:
                if iv[j, IV_START] == ff:
                    ff = iv[j, IV_END]
                elif iv[j, IV_START] > ff:
                    break
                j = int(iv[j, IV_NEXT])
            first_free[k, p] = ff
    _sorted_into(tails, k, m, cand_times)
    for i in range(m):
        tails[k, m + i] = cand_times[i]
    # The reserved cores' gaps longer than every earlier one (``FRONT``) and longest gap, recomputed
    # (backfilled jobs fill gaps), and the node's longest gap over its cores. The other cores keep
    # theirs from an earlier instant: the first gap only shortens as time passes, so they stay bounds.
    for i in range(cores):
        p = pos[1, i]
        prev = at(base[k, p], now)
        col = _front(m, p)
        kept, longest = 0, 0.0        # (a job that fits no gap at all: gap_bound says now)
        j = core_iv[k, p]
        while j >= 0:
            d = iv[j, IV_START] - prev
            if d > longest:
                longest = d
                if kept < FRONT:
                    tails[k, col + 2 * kept] = prev
                    tails[k, col + 2 * kept + 1] = d
                    kept += 1
            prev = iv[j, IV_END]
            j = int(iv[j, IV_NEXT])
        if kept < FRONT:
            tails[k, col + 2 * kept] = prev
            tails[k, col + 2 * kept + 1] = INF
        tails[k, col + 2 * FRONT] = longest
    gap = 0.0
    for p in range(m):
        gap = max(gap, tails[k, _front(m, p) + 2 * FRONT])
    tails[k, 2 * m] = gap
    _sort_row(first_free, k, cols, cand_times)
    _tail_column(k, tails, tcols, tree, True)
    _free_now(first_free, k, now, node_i, ints)


@njit
def now_gaps(now, first_free, core_iv, iv, node_i, gaps, buf):
    """With backfilling: gaps[c - 1] becomes the longest time from now during
    which some node has c cores free (-inf where none has): a job of c cores
    and walltime w can start now only if w <= gaps[c - 1]."""
    n, m = first_free.shape[0], first_free.shape[1]
    for c in range(m):
        gaps[c] = -INF
    for k in range(n):
        if node_i[k, FREE] == 0:
            continue
        f = 0
        for p in range(m):
            if first_free[k, p] > now:
                continue
            # Free now until its first reservation not over by now.
            d = INF
            j = core_iv[k, p]
            while j >= 0 and iv[j, IV_END] <= now:
                j = int(iv[j, IV_NEXT])
            if j >= 0:
                d = max(iv[j, IV_START] - now, 0.0)
            # Sorted decreasing into buf[:f].
            i = f
            while i > 0 and buf[i - 1] < d:
                buf[i] = buf[i - 1]
                i -= 1
            buf[i] = d
            f += 1
        for c in range(f):
            if buf[c] > gaps[c]:
                gaps[c] = buf[c]


@inline
def last_fitting(gaps, q_cores, q_wall, i, j):
    """The last of the queued jobs i..j that might start now, given the gaps
    from now (``now_gaps``); i - 1 if none. A job of c cores fits if some
    node has c cores free now for its walltime: ``gaps`` never increases with
    c, so its own count's gap is the one to read. Cautious by a rounding
    margin: never no when the pass could say yes. The gaps only shrink as a
    pass reserves cores, so a later call may start at the last answer."""
    m = gaps.shape[0]
    while j >= i:
        c = q_cores[j]
        if c <= m and gaps[c - 1] * 1.000001 + 1e-6 >= q_wall[j]:
            return j
        j -= 1
    return j
