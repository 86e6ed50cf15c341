"""One planning pass: list scheduling of the whole queue from the current state,
compiled, without returning to the interpreter until every job is placed.

For each queued job in order (semantics note, "The five policies"), the policy
scores every node and the job gets a reservation on the best one (ties: lowest
node index); jobs whose reservation starts now are started. Reservations of
queued jobs live only for this pass.

Scoring every node exactly would cost O(nodes) window scans per job. Instead
the pass computes, for every node, a lower bound of its score (cores'
availability, and a load overhead that is exact wherever the file is neither
in memory nor planned), scores exactly the node of least bound, and then only
the nodes whose bound does not exceed the best score found, in increasing
(bound, node) order, stopping as soon as the next bound cannot beat the best.
The choice is the one of an exhaustive scan.

The pass also stops once no node has as many cores free *now* as the smallest
job left in the queue needs: later reservations could start nothing now, and
the next pass rebuilds them anyway. With the option ``queue_depth`` it plans
only the head of the queue (a production scheduler's bound, not the paper's rule).
"""

import os
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.schedulers.planning import availability as av
from batloc.schedulers.planning.file_outlook import (CASE_NAMES, MISS, MODEL_CODES, NONE, WAIT, ended_window_bytes,
                                                     evaluate, evaluate_files, evaluate_per_file, file_case,
                                                     float32_load, put_file, unused_bytes, window_rows)
from batloc.schedulers.planning.flat_state import (AVAIL, BACKBONE, BW, END, FILE, M_FILE, M_PIN, M_SIZE, MEM,
                                                   MIN_END, MIN_LOADING, N_FREE, N_HELD, N_MEM, N_PINNED, SIZE, START)
from batloc.schedulers.planning.formulas import (CODES, EFT, FCFS, LEA, LEM, LEMG, RAMP_SCALES, SHAPES, bound, locality_weight, needs_penalty,
                                                 reads_overhead, score)
from batloc.schedulers.planning import jit
from batloc.schedulers.planning.jit import cycles, inline, inline_late, njit
from batloc.schedulers.planning.scratch import (B_SIZE, BUSY, C_BACKFILL, C_BW_MAX, C_ENDED_WINDOWS, C_INFLIGHT_FROM_NOW,
                                                C_RAMP_HIGH, C_RAMP_LOW, C_RAMP_SHAPE,
                                                C_EARLIEST_CORES, C_FLOAT32_LOADS, C_LAST_NOW, C_PER_FILE, C_TRUNCATE, C_WHOLE, C_MODEL, C_NOW, C_PASS_STOP, C_POLICY, C_W, CHANGED, FREE, HEAD,
                                                IV_COUNT, MAX_FREE, NO_NODE, O_CASE, O_JOB, O_NODE, O_SCORE, O_START,
                                                O_TFILE, P_CASE, P_FIRST, P_FIRST_AT, P_NEXT, P_FLOOR, P_K2, P_NODE, P_PREV,
                                                P_S2, P_SAT, P_SCORE, P_SEQ, P_WALL, STOP_CODES, STOP_JOB_EXCEEDS,
                                                STOP_NEVER, STOP_NO_FREE,
                                                GROUP, HIDDEN, P_X0, P_XN, REBUILT, SCANNED, DROPPED, MOVED, SCORED, TAIL,
                                                UNPLANNED, VALID, WALKED,
                                                STOP_FLAG, STOP_DEARER, STOP_CAP, COMPACTIONS, REPLAYED,
                                                FLAG_CHOSEN, FLAG_RELOADED, BOUNDED, SETTLED, CHOSEN_DEARER,
                                                C_WALK_RECHOOSE, CY_COMPACT, CY_RELOAD, CY_WALK, CY_DROP, CY_PLACE,
                                                CY_PASS, LISTED, CY_LIST, CY_CHOOSE, CY_LEFT, CY_GAPS, FROM_LIST, REKEYED,
                                                CY_RESERVE,
                                                allocate)

INF = np.inf


@dataclass
class Decision:
    job: object
    node: int
    positions: np.ndarray
    start: float          # t_k (= now for a start decision)
    t_file: float         # t'_k: computing is planned to begin
    case: str             # hit | miss | wait | none (as planned)
    staging: Optional[str]
    score: Optional[float]
    index: int = -1       # the job's position in the queue
    # Its planned start when first planned, the pass that planned it, and its
    # planned start before the pass that started it (the standing plan's predictions).
    predicted: tuple = (None, None, None)


@inline
def _has_bit(bits, row, k):
    return (bits[row, k >> 6] >> np.uint64(k & 63)) & np.uint64(1) != 0


@inline
def _bit(bits, k):
    return (bits[k >> 6] >> np.uint64(k & 63)) & np.uint64(1) != 0


@inline
def _lowest_bit(x):
    """Index of the lowest set bit of x (x != 0)."""
    i = 0
    if x & np.uint64(0xFFFFFFFF) == 0:
        x >>= np.uint64(32)
        i += 32
    if x & np.uint64(0xFFFF) == 0:
        x >>= np.uint64(16)
        i += 16
    if x & np.uint64(0xFF) == 0:
        x >>= np.uint64(8)
        i += 8
    if x & np.uint64(0xF) == 0:
        x >>= np.uint64(4)
        i += 4
    if x & np.uint64(0x3) == 0:
        x >>= np.uint64(2)
        i += 2
    if x & np.uint64(0x1) == 0:
        i += 1
    return i


# The compiled functions below take the arrays of flat_state and scratch one
# by one, always in the order of ``FlatState.arrays()`` then ``Scratch``,
# each function taking those it uses, and the pass's settings in ``cfg``:
# CPython turns a call of more than 30 arguments into ``f(*args)``, which
# numba pays for per array at every call.

@inline_late
def _score_node(k, cores, walltime, fid, size, lower, saturated, cfg, node_f, held, mem, base, tails, cols, node_i,
                cand_times, pos, core_iv, iv, plan, buf, ints):
    """Exact (score, case, t_k, t'_k) of the job on node k, its cores in pos[0];
    score +inf when k never has the cores. A job of several files (``fid``
    below ``GROUP``, ``size`` their sum) is scored by the sum of its files."""
    now, W, policy, model = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY]), int(cfg[C_MODEL])
    if cfg[C_BACKFILL] != 0:
        t = av.t_exact_bf(k, cores, walltime, lower, now, cols, base, tails, pos, cand_times, core_iv, iv, node_i,
                          plan)
    else:
        t = av.t_exact(k, cores, now, cols, base, pos)
        if cfg[C_EARLIEST_CORES] != 0 and t < INF:
            av.earliest_cores(base, k, cores, now, pos)
    if not t < INF:
        return INF, NONE, INF, INF
    if node_f[k, N_PINNED] > 0 and not (fid < 0 and fid > GROUP):
        t = _room_from(k, cores, walltime, fid, size, t, cfg, node_f, held, mem, base, tails, cols, node_i,
                       cand_times, pos, core_iv, iv, plan, buf)
        if not t < INF:
            return INF, NONE, INF, INF
    ints[SCORED] += 1
    if fid < 0 and fid > GROUP:
        return _cut(score(policy, t, 0.0, 0.0, now, saturated, W), cfg), NONE, t, t
    need = needs_penalty(policy, t, now, saturated)
    ended = cfg[C_ENDED_WINDOWS] != 0
    if fid <= GROUP:
        case, t_file, overhead, pen_bytes = evaluate_files(k, fid, t, now, model, need and not ended, node_f, held,
                                                           mem, node_i, plan, buf)
    elif cfg[C_PER_FILE] != 0:
        case, t_file, overhead = evaluate_per_file(k, fid, size, t, now, node_f, held, mem, node_i, plan)
        pen_bytes = 0.0
        if need and not ended:
            pen_bytes = unused_bytes(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf)
    else:
        case, t_file, overhead, pen_bytes = evaluate(k, fid, size, t, now, model, need and not ended, node_f, held,
                                                     mem, node_i, plan, buf)
    if need and ended:
        pen_bytes = ended_window_bytes(k, fid, t, now, node_f, held, mem, node_i, plan, buf)
    if case == WAIT and cfg[C_INFLIGHT_FROM_NOW] != 0:
        # the authors' simulator: what is left of the load counted from now, not from t_k
        overhead = t_file - now
        t_file = t + overhead
    elif case == MISS and cfg[C_FLOAT32_LOADS] != 0:
        # R6: the planned load lasts its truncated float32 time (the score keeps the exact one)
        t_file = t + float32_load(size, node_f[k, BW])
    pen = 0.0
    if need and pen_bytes != 0.0:
        pen = pen_bytes * size / node_f[k, MEM] / node_f[k, BW]
    return _cut(score(policy, t, overhead, pen, now, saturated, W), cfg), case, t, t_file


@inline
def _quick_misses(fid, saturated, cfg):
    """Whether ``_score_miss`` may stand for ``_score_node`` on the nodes that neither hold, load
    nor plan the job's file: one file, no backfilling, each file its job's window, and a score
    that never reads the eviction penalty (FCFS, EFT, LEM unsaturated)."""
    policy = int(cfg[C_POLICY])
    return (fid >= 0 and cfg[C_BACKFILL] == 0 and cfg[C_PER_FILE] == 0
            and (policy == FCFS or policy == EFT or ((policy == LEM or policy == LEMG) and saturated == 0.0)))


@inline
def _knows(k, fid, file_bits, pf_bits):
    """Whether node k holds or loads file fid (its memory) or plans it (a standing window)."""
    return _has_bit(file_bits, fid, k) or _has_bit(pf_bits, fid, k)


@inline
def _score_miss(k, cores, fid, size, saturated, cfg, node_f, base, cols, pos, ints):
    """``_score_node`` where it cannot find the file (``_quick_misses``, the node not ``_knows`` it,
    no output pinned there, no shared backbone): every held window, planned window and memory
    entry naming the file sets one of the node's bits, so ``file_case`` would scan them all for
    nothing and ``evaluate`` says a miss, its load from t_k."""
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    t = av.t_exact(k, cores, now, cols, base, pos)
    if cfg[C_EARLIEST_CORES] != 0 and t < INF:
        av.earliest_cores(base, k, cores, now, pos)
    if not t < INF:
        return INF, NONE, INF, INF
    ints[SCORED] += 1
    overhead = size / node_f[k, BW]
    t_file = t + overhead
    if cfg[C_FLOAT32_LOADS] != 0:
        t_file = t + float32_load(size, node_f[k, BW])
    return _cut(score(policy, t, overhead, 0.0, now, saturated, W), cfg), MISS, t, t_file


@njit
def _room_from(k, cores, walltime, fid, size, t, cfg, node_f, held, mem, base, tails, cols, node_i, cand_times, pos,
               core_iv, iv, plan, buf):
    """The first t_k from t (its cores in pos[0]) at which the job's missing
    files fit in node k's memory beside the files of the windows over t_k and
    the outputs still pinned then (semantics note, "Shared storage", 3): t
    moves to the first such window's or pin's end (+inf: never)."""
    now, model = cfg[C_NOW], int(cfg[C_MODEL])
    soon = np.nextafter(now, INF)
    several = fid <= GROUP
    x0, x1 = 0, 1
    if several:
        slot = int(GROUP - fid)
        x0 = int(plan[slot, P_X0])
        x1 = x0 + int(plan[slot, P_XN])
    while True:
        need = 0.0
        for x in range(x0, x1):
            f = plan[x, FILE] if several else float(fid)
            present, loading, _ = file_case(k, f, t, now, model, node_f, held, mem, node_i, plan, buf)
            if not present and not loading:
                need += plan[x, SIZE] if several else size
        if need <= 0.0:
            return t
        # the files of the windows over t and the pins past t, each once, and the first of their ends
        count = 0
        lower = INF
        for i in range(int(node_f[k, N_HELD])):
            if held[k, i, FILE] >= 0 and held[k, i, START] <= t and t < held[k, i, END]:
                count = put_file(buf, count, held[k, i, FILE], held[k, i, SIZE])
                lower = min(lower, held[k, i, END])
        j = node_i[k, HEAD]
        while j >= 0:
            if plan[j, START] <= t and t < plan[j, END]:
                r0, r1 = window_rows(j, plan)
                for r in range(r0, r1):
                    if plan[r, FILE] >= 0:
                        count = put_file(buf, count, plan[r, FILE], plan[r, SIZE])
                        lower = min(lower, plan[r, END])
            j = int(plan[j, P_NEXT])
        for i in range(int(node_f[k, N_MEM])):
            until = mem[k, i, M_PIN]
            if until > -INF:
                until = max(until, soon)
                if until > t:
                    count = put_file(buf, count, mem[k, i, M_FILE], mem[k, i, M_SIZE])
                    lower = min(lower, until)
        used = 0.0
        for i in range(count):
            used += buf[i, B_SIZE]
        if used + need <= node_f[k, MEM]:
            return t
        if not lower < INF:
            return INF
        if cfg[C_BACKFILL] != 0:
            t = av.t_exact_bf(k, cores, walltime, lower, now, cols, base, tails, pos, cand_times, core_iv, iv, node_i,
                              plan)
            if not t < INF:
                return INF
        else:
            # cores available by t stay available later: the lowest positions available by then
            t = max(t, lower)
            av.first_cores(base, k, t, cores, pos)


@inline
def _cut(x, cfg):
    """A score or bound as the pass compares it: truncated to whole seconds
    with ``score_rounding: "truncate"`` (R7: the authors' simulator keeps
    scores as integers, so nodes less than a second apart tie, the lowest
    index winning); truncation keeps every bound below its scores."""
    if cfg[C_TRUNCATE] != 0 and x < INF:
        return np.floor(x)
    return x


@inline
def _saturation(policy, busy_count, n, saturation, cfg):
    """LEM's flag (1.0: enough nodes busy now, else 0.0), or the gradual LEM's weight of locality."""
    share = busy_count / n
    if policy == LEMG:
        return locality_weight(share, cfg[C_RAMP_LOW], cfg[C_RAMP_HIGH], int(cfg[C_RAMP_SHAPE]), cfg[C_W])
    return 1.0 if share >= saturation else 0.0


@inline
def _t_lower(k, tc, w, backfilling, now, cols, tcols, tails, buf):
    """A lower bound of t_k for tc + 1 cores on node k (exact without
    backfilling, and with it for a job longer than every gap on the node;
    else its cores' earliest gaps as long as the job, ``buf`` scratch)."""
    if backfilling and not av.longer_than_gaps(w, k, tails):
        return max(av.at(cols[tc, k], now), av.gap_bound(k, tc + 1, w, now, tails, buf))
    return av.at((tcols if backfilling else cols)[tc, k], now)


@inline
def _list_insert(lb, cand, nf, b, k):
    """Node k with bound b into the list sorted by (bound, insertion): its new length."""
    a = nf
    while a > 0 and lb[a - 1] > b:
        lb[a] = lb[a - 1]
        cand[0, a] = cand[0, a - 1]
        a -= 1
    lb[a] = b
    cand[0, a] = k
    return nf + 1


# ``_choose``'s listed nodes: a binary heap over lb[:nh] by (bound, key), the key (listing order) x 2n
# + the node (+ n once listed again under its gaps' bound): taken in the order a list sorted by
# (bound, insertion) gives, while most listed nodes are never taken.
@inline
def _heap_less(lb, cand, a, b):
    return lb[a] < lb[b] or (lb[a] == lb[b] and cand[0, a] < cand[0, b])


@inline
def _heap_swap(lb, cand, a, b):
    lb[a], lb[b] = lb[b], lb[a]
    cand[0, a], cand[0, b] = cand[0, b], cand[0, a]


@inline
def _heap_down(lb, cand, i, nh):
    while True:
        s = 2 * i + 1
        if s >= nh:
            return
        if s + 1 < nh and _heap_less(lb, cand, s + 1, s):
            s += 1
        if not _heap_less(lb, cand, s, i):
            return
        _heap_swap(lb, cand, i, s)
        i = s


@inline
def _heap_make(lb, cand, nh):
    for i in range(nh // 2 - 1, -1, -1):
        _heap_down(lb, cand, i, nh)


@inline
def _heap_push(lb, cand, nh, b, key):
    """(b, key) into the heap: its new size."""
    i = nh
    lb[i] = b
    cand[0, i] = key
    while i > 0:
        up = (i - 1) // 2
        if not _heap_less(lb, cand, i, up):
            break
        _heap_swap(lb, cand, i, up)
        i = up
    return nh + 1


@inline
def _heap_pop(lb, cand, nh):
    """The heap's least entry removed: its new size."""
    nh -= 1
    lb[0] = lb[nh]
    cand[0, 0] = cand[0, nh]
    _heap_down(lb, cand, 0, nh)
    return nh


@inline
def _rank(s, k, case, t, t_file, c, n, pos, best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor):
    """Node k scored exactly (s, its cores in pos[0]) into the best so far
    (pos[1]), the runner-up and the floor under every other node: returns
    the eight of them. Ties go to the lower index."""
    if s < best_s or (s == best_s and k < best_k):
        if sec_k < n:
            floor = min(floor, sec_s)
        if best_k < n:
            sec_s, sec_k = best_s, best_k
        best_s, best_k, best_case, best_t, best_tf = s, k, case, t, t_file
        for p in range(c):
            pos[1, p] = pos[0, p]
    elif s < sec_s or (s == sec_s and k < sec_k):
        if sec_k < n:
            floor = min(floor, sec_s)
        sec_s, sec_k = s, k
    else:
        floor = min(floor, s)
    return best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor


@inline
def _decide(i, k, c, t, t_file, score_, case, node_i, pos, out_f, out_i, out_pos, ndec, busy_count):
    """Queued job i starts now on node k (its cores in pos[1]): decision ndec;
    returns the count of busy nodes (LEM's saturation)."""
    if not node_i[k, BUSY]:
        node_i[k, BUSY] = 1
        busy_count += 1
    out_i[ndec, O_JOB] = i
    out_i[ndec, O_CASE] = case
    out_i[ndec, O_NODE] = k
    out_f[ndec, O_START] = t
    out_f[ndec, O_TFILE] = t_file
    out_f[ndec, O_SCORE] = score_
    for p in range(c):
        out_pos[ndec, p] = pos[1, p]
    return busy_count


@njit
def _choose(c, w, fid, size, saturated, cfg, node_f, held, mem, file_bits, base, tails, cols, tcols, tree, node_i,
            cand_times,
            pos, core_iv, iv, plan, lb, cand, stack, known, pf_bits, buf, ints):
    """The node of least (score, index) for the job, its cores in pos[1]:
    (score, node, case, t_k, t'_k, and the runner-up: its score, its node
    (n: none), and a floor under every other node's score); node n when no
    node can ever hold it.

    Exact scores are computed in increasing order of a lower bound, until the
    bound exceeds the best score: first the nodes whose memory holds, loads
    or is planned to load the file (load overhead 0 at best: a list), then the
    others (overhead size/BW_k) as the tournament tree yields them by t_k.
    Once the tree's next node has the best score as bound and a larger index,
    nodes further along can only matter if their bound rounds to the same
    value and their index is smaller: a depth-first search of the tree for
    those ends its part."""
    t_choose = cycles()
    n = node_f.shape[0]
    tc = c - 1
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    backfilling = cfg[C_BACKFILL] != 0
    tkey = tcols if backfilling else cols
    av.flush(tree, tkey, tc)
    t_list = cycles()
    # Listed nodes, by (bound, index), set aside from the tree: those that know
    # the file (none when the score ignores it: every node then has the same
    # bound form), and with backfilling those with a gap the job fits in (the
    # tree's t_k, their cores' last ends, is only an upper bound there).
    nf, two_n = 0, 2 * n
    several = fid <= GROUP
    sorts_files = (fid >= 0 or several) and reads_overhead(policy)
    for x in range(known.shape[0]):
        known[x] = np.uint64(0)
    if sorts_files:
        for x in range(known.shape[0]):
            if several:
                # the nodes knowing any of its files (bound: no load), the others loading them all
                slot = int(GROUP - fid)
                x0 = int(plan[slot, P_X0])
                bits = np.uint64(0)
                for r in range(x0, x0 + int(plan[slot, P_XN])):
                    f = int(plan[r, FILE])
                    bits |= file_bits[f, x] | pf_bits[f, x]
            else:
                bits = file_bits[fid, x] | pf_bits[fid, x]
            known[x] = bits
            while bits != 0:
                k = x * 64 + _lowest_bit(bits)
                bits &= bits - np.uint64(1)
                t_lb = _t_lower(k, tc, w, backfilling, now, cols, tcols, tails, cand_times)
                if t_lb < INF:
                    lb[nf] = _cut(bound(policy, t_lb, 0.0, now, saturated, W), cfg)
                    cand[0, nf] = nf * two_n + k
                    nf += 1
    if backfilling:
        for k in range(n):
            if not av.longer_than_gaps(w, k, tails) and not _bit(known, k):
                known[k >> 6] |= np.uint64(1) << np.uint64(k & 63)
                t_lb = av.at(cols[tc, k], now)
                if t_lb < INF:
                    ov = size / node_f[k, BW] if sorts_files else 0.0
                    lb[nf] = _cut(bound(policy, t_lb, ov, now, saturated, W), cfg)
                    cand[0, nf] = nf * two_n + k
                    nf += 1
    _heap_make(lb, cand, nf)
    ints[LISTED] += nf
    ints[CY_LIST] += cycles() - t_list
    # The others yield their overhead size/BW_k: at least size over the largest bandwidth.
    ov_least = size / cfg[C_BW_MAX] if sorts_files else 0.0
    best_score, best_k, best_case, best_t, best_tfile = INF, n, NONE, INF, INF
    # The runner-up (an exactly scored node) and a floor under every other node's score.
    sec_s, sec_k, floor = INF, n, INF
    quick = _quick_misses(fid, saturated, cfg)
    nh, nseq, nset, tree_done = nf, nf, 0, False
    while True:
        kn, b_tree = n, INF
        if not tree_done:
            # Least node of the tree that does not know the file.
            kn, key = av.least(tree, tc)
            while kn < n and _bit(known, kn):
                av.set_aside(tree, tkey, tc, kn)
                cand[1, nset] = kn
                nset += 1
                kn, key = av.least(tree, tc)
            if kn < n and key < INF:
                b_tree = _cut(bound(policy, av.at(key, now), ov_least, now, saturated, W), cfg)
        b_list = lb[0] if nh > 0 else INF
        if b_list <= b_tree:
            if not b_list < INF or b_list > best_score:
                floor = min(floor, b_list, b_tree)
                break
            k, b = cand[0, 0] % two_n, b_list
            nh = _heap_pop(lb, cand, nh)
            from_list = True
            rekeyed = k >= n           # listed again under its gaps' bound (below)
            if rekeyed:
                k -= n
        else:
            if b_tree > best_score:
                floor = min(floor, b_list, b_tree)
                break
            if b_tree == best_score and kn > best_k:
                floor = min(floor, best_score)     # ties the search below may leave unscored
                best_score, best_k, best_case, best_t, best_tfile = _search_below(
                    tc, ov_least, c, w, fid, size, sorts_files, saturated, best_score, best_k, best_case, best_t, best_tfile,
                    cfg, node_f, held, mem, base, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan,
                    stack, known, buf, ints)
                tree_done = True
                continue
            k = kn
            from_list, rekeyed = False, False
            av.set_aside(tree, tkey, tc, kn)
            cand[1, nset] = kn
            nset += 1
            overhead = size / node_f[k, BW] if sorts_files else 0.0
            b = _cut(bound(policy, av.at(tkey[tc, k], now), overhead, now, saturated, W), cfg)
        if b > best_score or (b == best_score and k > best_k):
            floor = min(floor, b)
            continue
        if (quick and node_f[k, N_PINNED] == 0 and not node_f[k, BACKBONE] < INF
                and not _knows(k, fid, file_bits, pf_bits)):
            s, case, t, t_file = _score_miss(k, c, fid, size, saturated, cfg, node_f, base, cols, pos, ints)
        else:
            lower = av.at(cols[tc, k], now)
            if from_list and backfilling and not av.longer_than_gaps(w, k, tails):
                # Listed by the earliest instant c of its cores are free, however short the gaps
                # there: the earliest start of gaps as long as the job on c of its cores bounds
                # t_k better. Where that bound is dearer, the node goes back into the list under it.
                g = av.gap_bound(k, c, w, now, tails, cand_times)
                if g > lower:
                    lower = g
                    if not rekeyed:
                        ov_g = (size / node_f[k, BW] if sorts_files and fid >= 0
                                and not _knows(k, fid, file_bits, pf_bits) else 0.0)
                        b_g = _cut(bound(policy, g, ov_g, now, saturated, W), cfg)
                        if b_g > b:
                            nh = _heap_push(lb, cand, nh, b_g, nseq * two_n + k + n)
                            nseq += 1
                            ints[REKEYED] += 1
                            continue
            if from_list and backfilling and sorts_files and node_f[k, N_PINNED] == 0:
                # A listed node's bound read the earliest instant c of its cores are free, however short the
                # gap there: its exact t_k first, and its file case only if the bound from that t_k can win.
                t0 = av.t_exact_bf(k, c, w, lower, now, cols, base, tails, pos, cand_times, core_iv, iv, node_i, plan)
                if not t0 < INF:
                    continue
                ov0 = size / node_f[k, BW] if fid >= 0 and not _knows(k, fid, file_bits, pf_bits) else 0.0
                b0 = _cut(bound(policy, t0, ov0, now, saturated, W), cfg)
                if b0 > best_score or (b0 == best_score and k > best_k):
                    floor = min(floor, b0)
                    continue
                lower = t0      # t0 is the first of its candidates from there: t_k is found again at once
            s, case, t, t_file = _score_node(k, c, w, fid, size, lower, saturated, cfg, node_f,
                                             held, mem, base, tails, cols, node_i, cand_times, pos, core_iv, iv, plan,
                                             buf, ints)
            if from_list:
                ints[FROM_LIST] += 1
        if not t < INF:
            continue
        best_score, best_k, best_case, best_t, best_tfile, sec_s, sec_k, floor = _rank(
            s, k, case, t, t_file, c, n, pos, best_score, best_k, best_case, best_t, best_tfile, sec_s, sec_k, floor)
    for a in range(nset - 1, -1, -1):
        av.put_back(tree, tkey, tc, cand[1, a])
    ints[CY_CHOOSE] += cycles() - t_choose
    return best_score, best_k, best_case, best_t, best_tfile, sec_s, sec_k, floor


@inline
def _push_children(stack, top, j):
    """A depth-first visit of a tree's node j goes on to its children, the left (lower indices) first:
    the stack's new top."""
    stack[top] = 2 * j + 1
    stack[top + 1] = 2 * j
    return top + 2


@njit
def _search_below(tc, ov_least, c, w, fid, size, sorts_files, saturated, best_score, best_k, best_case, best_t,
                  best_tfile, cfg, node_f, held, mem, base, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv,
                  plan, stack, known, buf, ints):
    """Depth-first over tree tc: every node of index below ``best_k`` whose
    bound does not exceed the best score is scored; returns the best found,
    starting from (best_score, best_k, ...) (pos[1] updated)."""
    n = node_f.shape[0]
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    tkey = tcols if cfg[C_BACKFILL] != 0 else cols
    leaves = tree.shape[1] // 2
    stack[0] = 1
    top = 1
    while top > 0:
        top -= 1
        i = stack[top]
        # Leaves under tree node i: [lo, lo + span).
        level = 0
        x = i
        while x > 1:
            x >>= 1
            level += 1
        span = leaves >> level
        lo = (i - (1 << level)) * span
        if lo >= best_k:
            continue
        kmin, key = int(tree[tc, i, 1]), tree[tc, i, 0]
        if kmin >= n or not key < INF:
            continue
        if _cut(bound(policy, av.at(key, now), ov_least, now, saturated, W), cfg) > best_score:
            continue
        if i < leaves:
            top = _push_children(stack, top, i)
            continue
        k = kmin
        if _bit(known, k):
            continue
        overhead = size / node_f[k, BW] if sorts_files else 0.0
        b = _cut(bound(policy, av.at(tkey[tc, k], now), overhead, now, saturated, W), cfg)
        if b > best_score or (b == best_score and k > best_k):
            continue
        s, case, t, t_file = _score_node(k, c, w, fid, size, av.at(cols[tc, k], now), saturated, cfg, node_f, held,
                                         mem, base, tails, cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
        if t < INF and (s < best_score or (s == best_score and k < best_k)):
            best_score, best_k, best_case, best_t, best_tfile = s, k, case, t, t_file
            for p in range(c):
                pos[1, p] = pos[0, p]
    return best_score, best_k, best_case, best_t, best_tfile


# ---- the standing plan ---------------------------------------------------------

@inline
def _reserve(k, c, t, w, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv,
             ints):
    """Cores ``pos[1, :c]`` of node k taken over [t, t + w)."""
    if backfilling:
        av.reserve_bf(k, c, t, w, now, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv,
                      ints)
    else:
        av.reserve(k, c, t, w, now, base, cols, tree, node_i, cand_times, pos, ints)


@inline
def _plan_file(fid, k, pf_bits, pf_count):
    if fid >= 0:
        pf_count[fid, k] += 1
        pf_bits[fid, k >> 6] |= np.uint64(1) << np.uint64(k & 63)


@inline
def _link(k, slot, node_i, plan, pf_bits, pf_count):
    """The job in ``slot`` becomes node k's last planned window (and k plans its files)."""
    plan[slot, P_NEXT] = -1
    tail = node_i[k, TAIL]
    if tail < 0:
        node_i[k, HEAD] = slot
    else:
        plan[tail, P_NEXT] = slot
    node_i[k, TAIL] = slot
    fid = int(plan[slot, FILE])
    if fid <= GROUP:
        x0 = int(plan[slot, P_X0])
        for r in range(x0, x0 + int(plan[slot, P_XN])):
            _plan_file(int(plan[r, FILE]), k, pf_bits, pf_count)
    else:
        _plan_file(fid, k, pf_bits, pf_count)


@inline
def _unplan_file(fid, k, pf_bits, pf_count):
    if fid >= 0:
        pf_count[fid, k] -= 1
        if pf_count[fid, k] == 0:
            pf_bits[fid, k >> 6] &= ~(np.uint64(1) << np.uint64(k & 63))


@inline
def _unplan_row(j, k, plan, pf_bits, pf_count):
    """Node k no longer plans the files of the job planned in row j."""
    fid = int(plan[j, FILE])
    if fid <= GROUP:
        x0 = int(plan[j, P_X0])
        for r in range(x0, x0 + int(plan[j, P_XN])):
            _unplan_file(int(plan[r, FILE]), k, pf_bits, pf_count)
    else:
        _unplan_file(fid, k, pf_bits, pf_count)


@njit
def _unlink_all(k, node_i, plan, pf_bits, pf_count):
    """Node k's chain of planned windows emptied (its rows are the caller's)."""
    j = node_i[k, HEAD]
    while j >= 0:
        _unplan_row(j, k, plan, pf_bits, pf_count)
        j = int(plan[j, P_NEXT])
    node_i[k, HEAD] = -1
    node_i[k, TAIL] = -1


@njit
def unlink_chains(node_i, plan, pf_bits, pf_count, ints):
    """Every node's chain emptied and the standing plan dropped (the next
    pass plans from scratch): before file rows are written again."""
    for k in range(node_i.shape[0]):
        _unlink_all(k, node_i, plan, pf_bits, pf_count)
    ints[VALID] = 0


@njit
def _place_files(slot, k, t, w, fid, cfg, node_f, held, mem, node_i, plan, buf):
    """The file rows of the job of several files in ``slot``, placed on k at t:
    each file's window [t, when it is there, t + w). Its rows hold what its
    last scoring found; scored last on another node or instant, k is scored again."""
    x0 = int(plan[slot, P_X0])
    if plan[x0, P_NODE] != k or plan[x0, START] != t:
        evaluate_files(k, fid, t, cfg[C_NOW], int(cfg[C_MODEL]), False, node_f, held, mem, node_i, plan, buf)
    for r in range(x0, x0 + int(plan[slot, P_XN])):
        plan[r, END] = t + w


@njit
def _replay(k, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan,
            pos_plan, pf_bits, pf_count, ints, before_seq):
    """Node k's standing windows of jobs submitted before ``before_seq`` (its
    chain's head: the chain is in queue order) reserved again on its actual
    rows; the rest of its chain is dropped."""
    j = node_i[k, HEAD]
    _unlink_all(k, node_i, plan, pf_bits, pf_count)
    while j >= 0 and plan[j, P_SEQ] < before_seq:
        nxt = int(plan[j, P_NEXT])
        c = 0
        for p in range(pos_plan.shape[1]):
            if pos_plan[j, p] < 0:
                break
            pos[1, p] = pos_plan[j, p]
            c += 1
        _reserve(k, c, plan[j, START], plan[j, P_WALL], now, backfilling, base, first_free, tails, cols, tcols,
                 tree, node_i, cand_times, pos, core_iv, iv, ints)
        _link(k, j, node_i, plan, pf_bits, pf_count)
        ints[REPLAYED] += 1
        j = nxt


@njit
def _compact(backfilling, now, core_end, core_held, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos,
             core_iv, iv, plan, pos_plan, pf_bits, pf_count, ints):
    """Every node reloaded and its standing windows reserved again: the
    backfilling intervals of nodes rebuilt since the last compaction are freed."""
    n = core_end.shape[0]
    heads = np.empty(n, dtype=np.int64)
    for k in range(n):
        heads[k] = node_i[k, HEAD]
    av.load_all(backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
                cand_times, ints)
    for k in range(n):
        node_i[k, HEAD] = heads[k]
        _replay(k, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan,
                pos_plan, pf_bits, pf_count, ints, INF)


@njit
def _changed_nodes(node_f, node_i, dset, dirty, now, last_now, policy):
    """Nodes whose rows a pass cannot reuse: those an event changed, those
    where a job runs past its planned end or a load past its estimate (their
    instants are "just after now", which moves), and, when time moved on, for
    the policies whose score falls as a wait for a load in flight shortens
    (LEA's and LEM's W x overhead), the nodes with free cores and a load in
    flight. Returns their count; each is marked CHANGED."""
    nd = 0
    for x in range(dirty.shape[0]):
        k = dirty[x]
        if node_i[k, CHANGED] == 0:
            node_i[k, CHANGED] = 1
            dset[nd] = k
            nd += 1
    shrinking = now > last_now and (policy == LEA or policy == LEM or policy == LEMG)
    for k in range(node_f.shape[0]):
        if node_i[k, CHANGED] != 0:
            continue
        if (node_f[k, MIN_END] <= now or node_f[k, MIN_LOADING] <= now
                or (shrinking and node_f[k, N_FREE] > 0 and node_f[k, MIN_LOADING] < INF)):
            node_i[k, CHANGED] = 1
            dset[nd] = k
            nd += 1
    return nd


# A walk that has moved this many jobs' reservations re-plans the rest from
# scratch: each move makes its old node one more to score for every later job
# that the changed nodes' least bound does not settle.
MAX_CHANGED = 256


@inline
def _reload_before(k, i, nd, now, backfilling, core_end, core_held, base, first_free, tails, cols, tcols, tree, node_i,
                   dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits, pf_count, ints, q_seq, known):
    """Unchanged node k becomes a changed one for queued job i: its rows
    reloaded with the reservations of the jobs before i only (pos[1] kept);
    returns the new count of changed nodes."""
    c_all = pos.shape[1]
    for p in range(c_all):
        pos[2, p] = pos[1, p]
    head = node_i[k, HEAD]
    av.load(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
            cand_times)
    node_i[k, HEAD] = head
    _replay(k, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan,
            pos_plan, pf_bits, pf_count, ints, float(q_seq[i]))
    _mark_changed(k, node_i, dset, nd, tree, cols, known)
    for p in range(c_all):
        pos[1, p] = pos[2, p]
    return nd + 1


@inline
def _mark_changed(k, node_i, dset, nd, tree, cols, known):
    """Node k is the walk's changed node nd: flagged, in its bit set (``known`` during a walk) and
    noted for the changed nodes' trees."""
    node_i[k, CHANGED] = 1
    dset[nd] = k
    known[k >> 6] |= np.uint64(1) << np.uint64(k & 63)
    av.changed_note(tree, cols.shape[0], k)


@inline_late
def _score_nodes(skip, c, w, fid, size, saturated, best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k,
                 floor, cfg, node_f, held, mem, file_bits, base, tails, cols, tcols, tree, node_i, cand_times, pos,
                 core_iv, iv, plan, pf_bits, stack, known, buf, ints):
    """The changed nodes but ``skip`` that could beat the best so far ranked for the job into it, its
    runner-up and floor (``_rank``), each scored exactly unless its bound cannot beat the best: their
    rows show what the job sees (the actual state and the reservations walked so far).

    Those that know the job's file (``known`` holds the changed nodes' bits during a walk) are taken
    one by one (no load overhead at best); the others come from the changed nodes' tree for its core
    count (``availability.changed_note``), depth first, each subtree left out whose bound (its least
    t_k bound, the least overhead size / the largest bandwidth) cannot beat the best: so a job that no
    changed node can take costs one bound, and one that some can, the nodes below its score."""
    n = node_f.shape[0]
    m = cols.shape[0]
    tc = c - 1
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    backfilling = cfg[C_BACKFILL] != 0
    sorts_files = fid >= 0 and reads_overhead(policy)
    av.changed_flush(tree, backfilling, cols, tcols, tails, node_i, tc)
    ov_least = size / cfg[C_BW_MAX] if sorts_files else 0.0
    a, g = 2 * m + tc, 3 * m + tc
    leaves = tree.shape[1] // 2
    words = known.shape[0]
    x, xw, bits = 0, 0, np.uint64(0)
    listing = sorts_files          # first the changed nodes that know the file, then the tree
    stack[0] = 1
    top = 1
    while True:
        if listing:
            while bits == 0 and x < words:
                bits = (file_bits[fid, x] | pf_bits[fid, x]) & known[x]
                xw = x
                x += 1
            if bits == 0:
                listing = False
                continue
            k = xw * 64 + _lowest_bit(bits)
            bits &= bits - np.uint64(1)
            if k == skip:
                continue
        else:
            if top == 0:
                break
            top -= 1
            j = stack[top]
            key = tree[a, j, 1] if backfilling and av.fits_gap(w, tree[g, j, 0]) else tree[a, j, 0]
            if not key < INF:
                continue
            lb_j = _cut(bound(policy, av.at(key, now), ov_least, now, saturated, W), cfg)
            if lb_j > best_s:
                floor = min(floor, lb_j)
                continue
            if j < leaves:
                top = _push_children(stack, top, j)
                continue
            k = j - leaves
            if k == skip or (sorts_files and (_has_bit(file_bits, fid, k) or _has_bit(pf_bits, fid, k))):
                continue
        ints[BOUNDED] += 1
        t_lb = _t_lower(k, tc, w, backfilling, now, cols, tcols, tails, cand_times)
        if not t_lb < INF:
            continue
        bk = _bound_from(k, t_lb, fid, size, sorts_files, policy, now, saturated, W, cfg, node_f, file_bits, pf_bits)
        if bk > best_s or (bk == best_s and k > best_k):
            floor = min(floor, bk)
            continue
        sk, case, t, t_file = _score_node(k, c, w, fid, size, t_lb, saturated, cfg, node_f, held, mem, base, tails,
                                          cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
        if not t < INF:
            continue
        best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor = _rank(
            sk, k, case, t, t_file, c, n, pos, best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor)
    return best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor


@inline
def _root_settles(s_i, c, w, fid, size, saturated, floor, cfg, file_bits, pf_bits, cols, tcols, tails, tree, node_i,
                  known):
    """Whether the root of the changed nodes' tree for c cores alone settles a job that scored s_i on an
    unchanged node (every changed node's bound above s_i), and the floor ``_score_nodes`` would leave
    then: (True, floor) exactly when its full visit would leave out the root and every changed node
    that knows the job's file without scoring any; else (False, floor) and the walk makes that visit.
    The bound with no load overhead (the least over every changed node) spares reading the file's bits
    while the floor is already at most it (those nodes' bounds, at least it, cannot lower the floor)."""
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    backfilling = cfg[C_BACKFILL] != 0
    tc = c - 1
    m = cols.shape[0]
    av.changed_flush(tree, backfilling, cols, tcols, tails, node_i, tc)
    a = 2 * m + tc
    key = tree[a, 1, 1] if backfilling and av.fits_gap(w, tree[3 * m + tc, 1, 0]) else tree[a, 1, 0]
    if not key < INF:
        return True, floor                # no changed node has c cores ever (their t_k bounds are all INF)
    t = av.at(key, now)
    if not (fid >= 0 and reads_overhead(policy)):
        lb = _cut(bound(policy, t, 0.0, now, saturated, W), cfg)
        return lb > s_i, min(floor, lb)
    lb_ov = _cut(bound(policy, t, size / cfg[C_BW_MAX], now, saturated, W), cfg)
    if not lb_ov > s_i:
        return False, floor
    lb0 = _cut(bound(policy, t, 0.0, now, saturated, W), cfg)
    if lb0 > s_i and not floor > lb0:
        return True, floor                # min(floor, lb_ov, the file's nodes' bounds) = floor
    for x in range(known.shape[0]):
        if (file_bits[fid, x] | pf_bits[fid, x]) & known[x] != 0:
            return False, floor           # a changed node knows the file: scored one by one
    return True, min(floor, lb_ov)


@inline
def _bound_from(k, t_lb, fid, size, sorts_files, policy, now, saturated, W, cfg, node_f, file_bits, pf_bits):
    """The least score the job could have on node k if its cores were free at t_lb: the load's overhead
    counted unless the node holds, loads or plans the file, no penalty."""
    ov = 0.0
    if sorts_files and not (_has_bit(file_bits, fid, k) or _has_bit(pf_bits, fid, k)):
        ov = size / node_f[k, BW]
    return _cut(bound(policy, t_lb, ov, now, saturated, W), cfg)


@njit
def _choose_again(i, b, nd, saturated, cfg, node_f, core_end, core_held, held, mem, file_bits, core_sorted, base,
                  first_free, tails, cols, tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan,
                  pf_bits, pf_count, buf, ints, q_cores, q_wall, q_file, q_size, q_seq, lb, cand, stack, known):
    """Queued job i, placed under LEM's other flag (or another weight of the
    gradual LEM), chosen a node again under this one, exactly as a full pass
    would: (score, node, case, t_k, t'_k, runner-up score and node, floor,
    changed nodes); node -1 when the walk must stop (too many changed nodes).

    LEM's score is t_k + overhead + f x ((W - 1) x overhead + penalty): a flip
    of f changes the job's score on every node where the file is not there
    at t_k or something would be evicted, so what the job scored under the
    old flag bounds nothing under the new one. What does bound every node's
    score under either flag, whatever is reserved there: its cores' c-th
    free instant in the actual state (``core_sorted``), the load's overhead (0
    where the node holds, loads or plans the file, else size/BW_k) and no
    penalty. So the job is scored exactly on the changed nodes (their rows
    are its view: the actual state and the walked reservations), and every
    unchanged node whose bound could beat the best so far, in increasing
    (bound, index) order, is first made a changed node (reloaded with the
    reservations of the jobs before i, as when a job leaves it) and scored;
    the others cannot take it. Its own node b is made a changed one first:
    its rows hold the job's old reservation."""
    n, m = core_sorted.shape
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    backfilling = cfg[C_BACKFILL] != 0
    c, w, fid, size = q_cores[i], q_wall[i], q_file[i], q_size[i]
    sorts_files = fid >= 0 and reads_overhead(policy)
    if node_i[b, CHANGED] == 0:
        if nd == MAX_CHANGED:
            return INF, -1, NONE, INF, INF, INF, n, INF, nd
        nd = _reload_before(b, i, nd, now, backfilling, core_end, core_held, base, first_free, tails, cols, tcols, tree,
                            node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits, pf_count, ints, q_seq,
                            known)
        ints[FLAG_RELOADED] += 1
    best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor = _score_nodes(
        -1, c, w, fid, size, saturated, INF, n, NONE, INF, INF, INF, n, INF, cfg, node_f, held, mem,
        file_bits, base, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan, pf_bits, stack, known,
        buf, ints)
    # The unchanged nodes that might beat the best, by (bound, index).
    nl = 0
    for k in range(n):
        if node_i[k, CHANGED] != 0:
            continue
        # every reservation only takes cores later, and a core held past its planned end is free just after
        # now, no earlier: raising the c-th smallest end to now is the c-th smallest of the ends raised to now
        t_lb = av.at(core_sorted[k, c - 1], now) if c <= m else INF
        if not t_lb < INF:
            continue
        bk = _bound_from(k, t_lb, fid, size, sorts_files, policy, now, saturated, W, cfg, node_f, file_bits, pf_bits)
        if bk > best_s or (bk == best_s and k > best_k):
            floor = min(floor, bk)
            continue
        nl = _list_insert(lb, cand, nl, bk, k)
    for a in range(nl):
        bk, k = lb[a], cand[0, a]
        if bk > best_s or (bk == best_s and k > best_k):
            floor = min(floor, bk)
            continue
        if nd == MAX_CHANGED:
            return INF, -1, NONE, INF, INF, INF, n, INF, nd
        nd = _reload_before(k, i, nd, now, backfilling, core_end, core_held, base, first_free, tails, cols, tcols, tree,
                            node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits, pf_count, ints, q_seq,
                            known)
        ints[FLAG_RELOADED] += 1
        t_lb = av.at(cols[c - 1, k], now)
        sk, case, t, t_file = _score_node(k, c, w, fid, size, t_lb, saturated, cfg, node_f, held, mem, base, tails,
                                          cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
        if not t < INF:
            continue
        best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor = _rank(
            sk, k, case, t, t_file, c, n, pos, best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor)
    return best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor, nd


@njit
def _walk(P, nd, now, saturation, busy_count, cfg, node_f, core_end, core_held, held, mem, file_bits, core_sorted,
          base, first_free, tails, cols, tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits,
          pf_count, buf, out_f, out_i, out_pos, ints, q_cores, q_wall, q_file, q_size, q_slot, q_seq, lb, cand, stack,
          known):
    """Walks the standing plan's jobs in queue order, giving each the
    reservation a full pass would give it; returns (r, starts, busy count,
    changed nodes): r is the first job the walk cannot settle (P if none),
    from which the pass places every job again.

    A full pass places job i seeing the actual state and the reservations of
    jobs 0..i-1. On every node but the changed ones (``dset``) that view is
    the one job i had when it was placed: same actual state, same earlier
    reservations, and nodes with cores free now only got dearer as time
    passed (t_k = now; the waits that shrink are on changed nodes). There,
    job i scored (its score, its node b) or more. The changed nodes' rows
    hold the actual state and the reservations the walk gave so far, so
    they show exactly what job i sees: scored there, the least (score,
    index) m decides.
    - b unchanged: the job stays unless m beats (its score, b); then it moves
      to m, and b, which it leaves, becomes a changed node (its rows
      reloaded with the reservations of earlier jobs only).
    - b changed: if m is at most (its old score, b), no unchanged node can
      beat it, so the job goes to m (its old reservation again when nothing
      about it differs); otherwise an unchanged node might now win, which the
      walk cannot see: it stops there.
    LEM: a job placed under the other saturation flag is chosen a node again
    (``_choose_again``), as a full pass would, making the unchanged nodes
    that could take it changed ones; the walk goes on from there.

    A job on an unchanged node whose score is below every changed node's bound
    for its core count (the root of the changed nodes' tree, ``_score_nodes``:
    a policy's score bound grows with t_k and the load's overhead) stays
    without scoring any: no changed node can take it; otherwise only the
    changed nodes whose bound could beat its score are looked at."""
    n = node_f.shape[0]
    W, policy = cfg[C_W], int(cfg[C_POLICY])
    backfilling = cfg[C_BACKFILL] != 0
    ndec = 0
    for x in range(known.shape[0]):
        known[x] = np.uint64(0)
    for x in range(nd):
        _mark_changed(dset[x], node_i, dset, x, tree, cols, known)
    for i in range(P):
        slot = q_slot[i]
        b = int(plan[slot, P_NODE])
        if b < 0:
            continue                      # no node can ever hold it (as when it was placed)
        ints[WALKED] += 1
        c, w, fid, size = q_cores[i], q_wall[i], q_file[i], q_size[i]
        saturated = _saturation(policy, busy_count, n, saturation, cfg)
        again = 0                         # 1: chosen a node again under LEM's other flag; 2: where b got dearer
        if (policy == LEM or policy == LEMG) and saturated != plan[slot, P_SAT]:
            if node_i[b, CHANGED] == 0 and plan[slot, START] <= now:
                ints[STOP_FLAG] += 1
                return i, ndec, busy_count, nd    # cannot happen (an event comes first); never trust it
            again = 1
        else:
            s_i, t_i = plan[slot, P_SCORE], plan[slot, START]
            on_changed = node_i[b, CHANGED] != 0
            if not on_changed:
                if t_i <= now:
                    return i, ndec, busy_count, nd    # cannot happen (an event comes first); never trust it
                settles, floor = _root_settles(s_i, c, w, fid, size, saturated, plan[slot, P_FLOOR], cfg, file_bits,
                                               pf_bits, cols, tcols, tails, tree, node_i, known)
                if settles:
                    # What the full visit below would leave in its row (a changed runner-up dropped, the floor),
                    # written only where it differs: most rows are left clean.
                    ints[SETTLED] += 1
                    sec_k = int(plan[slot, P_K2])
                    if sec_k >= 0 and node_i[sec_k, CHANGED] != 0:
                        plan[slot, P_S2] = INF
                        plan[slot, P_K2] = -1
                    elif sec_k < 0 and plan[slot, P_S2] != INF:
                        plan[slot, P_S2] = INF
                    if floor < plan[slot, P_FLOOR]:
                        plan[slot, P_FLOOR] = floor
                    continue
            # The runner-up kept from before: exact while its node is unchanged.
            sec_s, sec_k, floor = plan[slot, P_S2], int(plan[slot, P_K2]), plan[slot, P_FLOOR]
            sec_changed = sec_k >= 0 and node_i[sec_k, CHANGED] != 0
            if sec_k < 0 or sec_changed:
                sec_s, sec_k = INF, n            # a changed runner-up is scored again below
            # The best so far (m): the old reservation on an unchanged b, else b scored again.
            if on_changed:
                best_s, best_case, best_t, best_tf = _score_node(
                    b, c, w, fid, size, av.at(cols[c - 1, b], now), saturated, cfg, node_f, held, mem, base, tails,
                    cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
                best_k = b if best_t < INF else n
                for p in range(c):
                    pos[1, p] = pos[0, p]
            else:
                best_s, best_k, best_case, best_t, best_tf = s_i, b, int(plan[slot, P_CASE]), t_i, plan[slot, AVAIL]
            bounded = ints[BOUNDED]
            best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor = _score_nodes(
                b, c, w, fid, size, saturated, best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor,
                cfg, node_f, held, mem, file_bits, base, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv,
                plan, pf_bits, stack, known, buf, ints)
            if not on_changed and best_k == b:
                if ints[BOUNDED] == bounded:
                    ints[SETTLED] += 1                # no changed node could take it
                _runner_up(slot, sec_s, sec_k, floor, n, plan)
                continue                      # stays, its reservation already in b's rows
            if on_changed and (best_s > s_i or (best_s == s_i and best_k > b)):
                # b got dearer: every unchanged node but the runner-up scores at
                # least the floor; the runner-up, if unchanged, exactly its score.
                to_runner_up = (sec_k < n and node_i[sec_k, CHANGED] == 0
                                and (sec_s < best_s or (sec_s == best_s and sec_k < best_k)))
                top = sec_s if to_runner_up else best_s
                if not top < floor:
                    # An unchanged node may win: with ``walk_rechoose``, the job is chosen a node again
                    # exactly, as under LEM's other flag (``_choose_again``), and the walk goes on.
                    if cfg[C_WALK_RECHOOSE] == 0:
                        ints[STOP_DEARER] += 1
                        return i, ndec, busy_count, nd
                    again = 2
                elif to_runner_up:
                    if nd == MAX_CHANGED:
                        ints[STOP_CAP] += 1
                        return i, ndec, busy_count, nd
                    k2 = sec_k
                    nd = _reload_before(k2, i, nd, now, backfilling, core_end, core_held, base, first_free, tails, cols,
                                        tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits,
                                        pf_count, ints, q_seq, known)
                    s2, case2, t2, tf2 = _score_node(
                        k2, c, w, fid, size, av.at(cols[c - 1, k2], now), saturated, cfg, node_f, held, mem, base, tails,
                        cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
                    if s2 != sec_s or not t2 < INF:
                        return i, ndec, busy_count, nd    # never trust a runner-up that moved
                    if best_k < n:
                        floor = min(floor, best_s)
                    sec_s, sec_k = INF, n
                    best_s, best_k, best_case, best_t, best_tf = s2, k2, case2, t2, tf2
                    for p in range(c):
                        pos[1, p] = pos[0, p]
                if again == 0:
                    ints[MOVED] += 1
            elif not on_changed:
                # It leaves b: b's rows and windows keep only the earlier jobs'.
                if nd == MAX_CHANGED:
                    ints[STOP_CAP] += 1
                    return i, ndec, busy_count, nd
                nd = _reload_before(b, i, nd, now, backfilling, core_end, core_held, base, first_free, tails, cols, tcols,
                                    tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, pf_bits, pf_count,
                                    ints, q_seq, known)
                ints[MOVED] += 1
            elif not (best_k == b and best_t == t_i and best_s == s_i and best_tf == plan[slot, AVAIL]
                      and best_case == plan[slot, P_CASE] and _same_cores(pos, pos_plan, slot, c)):
                ints[MOVED] += 1
        if again != 0:
            best_s, best_k, best_case, best_t, best_tf, sec_s, sec_k, floor, nd = _choose_again(
                i, b, nd, saturated, cfg, node_f, core_end, core_held, held, mem, file_bits, core_sorted, base,
                first_free, tails, cols, tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan,
                pf_bits, pf_count, buf, ints, q_cores, q_wall, q_file, q_size, q_seq, lb, cand, stack, known)
            if best_k < 0:
                ints[STOP_FLAG if again == 1 else STOP_DEARER] += 1
                return i, ndec, busy_count, nd    # too many changed nodes: the rest is placed again
            if best_k == n:
                return i, ndec, busy_count, nd    # no node holds it now (a full pass says so)
            if again == 1:
                ints[FLAG_CHOSEN] += 1
                if not (best_k == b and best_t == plan[slot, START] and _same_cores(pos, pos_plan, slot, c)):
                    ints[MOVED] += 1
            else:
                ints[CHOSEN_DEARER] += 1
                ints[MOVED] += 1
        k = best_k
        _reserve(k, c, best_t, w, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos,
                 core_iv, iv, ints)
        av.changed_note(tree, cols.shape[0], k)
        _record(slot, k, best_t, best_tf, best_s, best_case, saturated, w, fid, size, q_seq[i], c, now, pos, plan,
                pos_plan)
        _runner_up(slot, sec_s, sec_k, floor, n, plan)
        _link(k, slot, node_i, plan, pf_bits, pf_count)
        if best_t == now:
            busy_count = _decide(i, k, c, best_t, best_tf, best_s, best_case, node_i, pos, out_f, out_i, out_pos, ndec,
                                 busy_count)
            ndec += 1
    return P, ndec, busy_count, nd


@inline
def _runner_up(slot, sec_s, sec_k, floor, n, plan):
    """What the walk needs when the job's node gets dearer: the exactly scored
    runner-up (score, node; -1 none) and a floor under every other node."""
    plan[slot, P_S2] = sec_s
    plan[slot, P_K2] = sec_k if sec_k < n else -1
    plan[slot, P_FLOOR] = floor


@inline
def _same_cores(pos, pos_plan, slot, c):
    for p in range(c):
        if pos[1, p] != pos_plan[slot, p]:
            return False
    return True


@inline
def _record(slot, k, t, t_file, score_, case, saturated, w, fid, size, seq, c, now, pos, plan, pos_plan):
    """The job in ``slot`` reserved on node k (its cores in pos[1]): its standing-plan row."""
    if plan[slot, P_FIRST] != plan[slot, P_FIRST]:       # NaN: its first placement, its prediction
        plan[slot, P_FIRST] = t
        plan[slot, P_FIRST_AT] = now
        plan[slot, P_PREV] = t
    else:
        plan[slot, P_PREV] = plan[slot, START]
    plan[slot, START] = t
    plan[slot, AVAIL] = t_file
    plan[slot, END] = t + w
    plan[slot, SIZE] = size
    plan[slot, FILE] = fid
    plan[slot, P_SEQ] = seq
    plan[slot, P_SCORE] = score_
    plan[slot, P_NODE] = k
    plan[slot, P_CASE] = case
    plan[slot, P_SAT] = saturated
    plan[slot, P_WALL] = w
    for p in range(pos_plan.shape[1]):
        pos_plan[slot, p] = pos[1, p] if p < c else -1


@njit
def _drop_from(r, P, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, dset, nd, cand_times, pos,
               core_iv, iv, plan, pos_plan, pf_bits, pf_count, core_end, core_held, ints, q_slot, q_seq):
    """Jobs r..P-1 lose their standing reservations: the unchanged nodes
    holding any of them are reloaded with only the reservations of jobs
    before r (the changed nodes hold none of them)."""
    if r >= P:
        return
    m = 0
    for i in range(r, P):
        slot = q_slot[i]
        b = int(plan[slot, P_NODE])
        plan[slot, P_NODE] = UNPLANNED
        if b >= 0 and node_i[b, CHANGED] == 0 and node_i[b, REBUILT] == 0:
            node_i[b, REBUILT] = 1
            dset[nd + m] = b
            m += 1
    before = float(q_seq[r])
    for x in range(nd, nd + m):
        k = dset[x]
        node_i[k, REBUILT] = 0
        head = node_i[k, HEAD]
        av.load(k, backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
                cand_times)
        node_i[k, HEAD] = head
        _replay(k, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan,
                pos_plan, pf_bits, pf_count, ints, before)


@njit
def plan_pass(node_f, core_end, core_held, held, mem, file_bits, core_sorted,
              base, first_free, tails, cols, tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan, pos_plan, lb,
              cand, stack, known, pf_bits, pf_count, buf, out_f, out_i, out_pos, smallest_left, now_gaps,
              ints, cfg,
              dirty, q_cores, q_wall, q_file, q_size, q_slot, q_seq, qlen, saturation, standing):
    """Plans the first ``qlen`` queued jobs on the standing plan; the starts are
    in out_* (returns their count).

    With ``standing`` (and a valid plan), the jobs already planned are walked
    (``_walk``): each keeps its reservation unless the exact test says a full
    pass might place it differently; from the first that might (r), every
    later reservation is dropped and the jobs are placed again, as a full
    pass does. Without it, every reservation is dropped and the whole queue
    placed: the first pass, and the authors' rules that read now in every
    score (waits counted from now) or stop at a job (``pass_stop``).

    The pass ends once no node has as many cores free *now* as the smallest
    job left needs, or with backfilling once no job left fits in a gap from
    now (no later job could start now; they stay unplanned); with
    ``pass_stop`` (cfg), at the first job needing more cores than are free
    now, less those the pass's placements took (the authors' score
    schedulers), the jobs after it getting no reservation."""
    n = node_f.shape[0]
    now, backfilling = cfg[C_NOW], cfg[C_BACKFILL] != 0
    policy = int(cfg[C_POLICY])
    ints[MAX_FREE] = -1
    ndec = 0
    busy_count = 0
    P = 0
    t_pass = cycles()
    if standing and ints[VALID] != 0:
        while P < qlen and plan[q_slot[P], P_NODE] != UNPLANNED:
            P += 1
        total = 0
        if backfilling:
            for i in range(qlen):
                total += q_cores[i]
        if backfilling and ints[IV_COUNT] + total > iv.shape[0]:
            ints[COMPACTIONS] += 1
            t = cycles()
            _compact(backfilling, now, core_end, core_held, base, first_free, tails, cols, tcols, tree, node_i, cand_times,
                     pos, core_iv, iv, plan, pos_plan, pf_bits, pf_count, ints)
            ints[CY_COMPACT] += cycles() - t
        t = cycles()
        nd = _changed_nodes(node_f, node_i, dset, dirty, now, cfg[C_LAST_NOW], policy)
        for x in range(nd):
            _unlink_all(dset[x], node_i, plan, pf_bits, pf_count)
            av.load(dset[x], backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree,
                    node_i, cand_times)
        ints[CY_RELOAD] += cycles() - t
        for k in range(n):
            if node_i[k, BUSY]:
                busy_count += 1
        # Nothing changed (submissions only): every reservation stands, and
        # LEM's busy count is the one each job was placed with.
        first = P
        t = cycles()
        if nd > 0:
            first, ndec, busy_count, nd = _walk(P, nd, now, saturation, busy_count, cfg, node_f, core_end, core_held,
                                                held, mem, file_bits, core_sorted, base, first_free, tails, cols,
                                                tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan,
                                                pos_plan, pf_bits, pf_count, buf, out_f, out_i, out_pos, ints,
                                                q_cores, q_wall, q_file, q_size, q_slot, q_seq, lb, cand, stack,
                                                known)
        ints[CY_WALK] += cycles() - t
        ints[DROPPED] += P - first
        t = cycles()
        _drop_from(first, P, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, dset, nd, cand_times, pos,
                   core_iv, iv, plan, pos_plan, pf_bits, pf_count, core_end, core_held, ints, q_slot, q_seq)
        for x in range(nd):
            node_i[dset[x], CHANGED] = 0
            av.changed_note(tree, cols.shape[0], dset[x])     # out of the changed nodes' trees at their next read
        ints[MAX_FREE] = -1
        ints[CY_DROP] += cycles() - t
    else:
        t = cycles()
        for k in range(n):
            _unlink_all(k, node_i, plan, pf_bits, pf_count)
        av.load_all(backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree, node_i,
                    cand_times, ints)
        ints[CY_RELOAD] += cycles() - t
        for i in range(qlen):
            plan[q_slot[i], P_NODE] = UNPLANNED
        for k in range(n):
            if node_i[k, BUSY]:
                busy_count += 1
        ints[VALID] = 1
        first = 0
    t = cycles()
    ndec = _place(first, qlen, ndec, busy_count, saturation, cfg, node_f, held, mem, file_bits, base, first_free,
                  tails, cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan, pos_plan, lb, cand, stack, known,
                  pf_bits, pf_count, buf, out_f, out_i, out_pos, smallest_left, now_gaps, ints, q_cores,
                  q_wall, q_file, q_size, q_slot, q_seq)
    t_end = cycles()
    ints[CY_PLACE] += t_end - t
    ints[CY_PASS] += t_end - t_pass
    return ndec


@njit
def _place(first, qlen, ndec, busy_count, saturation, cfg, node_f, held, mem, file_bits, base, first_free, tails, cols,
           tcols, tree, node_i, cand_times, pos, core_iv, iv, plan, pos_plan, lb, cand, stack, known, pf_bits, pf_count, buf,
           out_f, out_i, out_pos, smallest_left, now_gaps, ints, q_cores, q_wall, q_file, q_size, q_slot,
           q_seq):
    """Queued jobs first..qlen-1 placed in order on the rows (starts appended
    to out_* from ``ndec`` on); returns the count of starts."""
    n = node_f.shape[0]
    now, backfilling = cfg[C_NOW], cfg[C_BACKFILL] != 0
    if first >= qlen:
        return ndec
    stop = int(cfg[C_PASS_STOP])
    whole = cfg[C_WHOLE] != 0
    # With backfilling a job can start now only in a gap from now as long as
    # its walltime: the pass also stops once no job left fits one (placing
    # them only shortens the gaps). The gaps are read again after a
    # reservation on a node with cores free now (no other changes them).
    bf_stop = backfilling and not whole and stop == STOP_NEVER
    t_left = cycles()
    smallest = q_cores[qlen - 1]
    for i in range(qlen - 1, first - 1, -1):
        if q_cores[i] < smallest:
            smallest = q_cores[i]
        smallest_left[i] = smallest
    gaps_stale = True
    last_fit = qlen - 1         # with bf_stop: no job after it fits a gap from now
    free_now = node_i[:, FREE].sum() if stop != STOP_NEVER else 0
    ints[CY_LEFT] += cycles() - t_left
    for i in range(first, qlen):
        if ((not whole and av.max_free_now(node_i, ints) < smallest_left[i])
                or (stop == STOP_JOB_EXCEEDS and q_cores[i] > free_now) or (stop == STOP_NO_FREE and free_now <= 0)):
            break
        if bf_stop:
            if gaps_stale:
                t_gaps = cycles()
                av.now_gaps(now, first_free, core_iv, iv, node_i, now_gaps, cand_times)
                gaps_stale = False
                last_fit = av.last_fitting(now_gaps, q_cores, q_wall, i, last_fit)
                ints[CY_GAPS] += cycles() - t_gaps
            if last_fit < i:
                break
        ints[SCANNED] += 1
        slot = q_slot[i]
        c, w, fid, size = q_cores[i], q_wall[i], q_file[i], q_size[i]
        saturated = _saturation(int(cfg[C_POLICY]), busy_count, n, saturation, cfg)
        best_score, best_k, best_case, best_t, best_tfile, sec_s, sec_k, floor = _choose(
            c, w, fid, size, saturated, cfg, node_f, held, mem, file_bits, base, tails, cols, tcols, tree, node_i,
            cand_times, pos, core_iv, iv, plan, lb, cand, stack, known, pf_bits, buf, ints)
        if best_k == n:
            plan[slot, P_NODE] = NO_NODE
            continue
        k, t = best_k, best_t
        if fid <= GROUP:
            _place_files(slot, k, t, w, fid, cfg, node_f, held, mem, node_i, plan, buf)
        free_k = node_i[k, FREE]
        t_res = cycles()
        _reserve(k, c, t, w, now, backfilling, base, first_free, tails, cols, tcols, tree, node_i, cand_times, pos, core_iv,
                 iv, ints)
        ints[CY_RESERVE] += cycles() - t_res
        free_now -= free_k - node_i[k, FREE]
        if free_k > 0:
            gaps_stale = True
        _record(slot, k, t, best_tfile, best_score, best_case, saturated, w, fid, size, q_seq[i], c, now, pos, plan,
                pos_plan)
        _runner_up(slot, sec_s, sec_k, floor, n, plan)
        _link(k, slot, node_i, plan, pf_bits, pf_count)
        if t == now:
            busy_count = _decide(i, k, c, t, best_tfile, best_score, best_case, node_i, pos, out_f, out_i, out_pos, ndec,
                                 busy_count)
            ndec += 1
    return ndec


@njit
def place_new_jobs(node_f, core_end, core_held, held, mem, file_bits, core_sorted,
                   base, first_free, tails, cols, tcols, tree, node_i, dset, cand_times, pos, core_iv, iv, plan,
                   pos_plan, lb, cand, stack, known, pf_bits, pf_count, buf, out_f, out_i, out_pos, smallest_left,
                   now_gaps, ints, cfg, q_cores, q_wall, q_file, q_size, q_slot, q_seq, first, qlen, saturation):
    """The authors' submission pass (R2b): queued jobs first..qlen-1 placed on
    the rows as the passes since the last full one left them (no node
    reloaded: cores freed early stay reserved until their planned end);
    the standing windows keep their cores but their files are hidden. Starts
    in out_* (returns their count)."""
    n = node_f.shape[0]
    now, backfilling = cfg[C_NOW], cfg[C_BACKFILL] != 0
    if ints[VALID] == 0:
        # no full pass yet: the rows start from the actual state
        for k in range(n):
            _unlink_all(k, node_i, plan, pf_bits, pf_count)
        av.load_all(backfilling, now, core_end, core_held, base, first_free, tails, core_iv, cols, tcols, tree,
                    node_i, cand_times, ints)
        ints[VALID] = 1
    rows = first_free if backfilling else base
    busy_count = 0
    for k in range(n):
        j = node_i[k, HEAD]
        while j >= 0:
            _unplan_row(j, k, plan, pf_bits, pf_count)
            plan[j, FILE] = HIDDEN
            j = int(plan[j, P_NEXT])
        free = 0
        busy = 0
        for p in range(core_end.shape[1]):
            if rows[k, p] <= now:
                free += 1
            if core_held[k, p]:
                busy = 1
        node_i[k, FREE] = free
        node_i[k, BUSY] = busy
        busy_count += busy
    ints[MAX_FREE] = -1
    return _place(first, qlen, 0, busy_count, saturation, cfg, node_f, held, mem, file_bits, base, first_free, tails,
                  cols, tcols, tree, node_i, cand_times, pos, core_iv, iv, plan, pos_plan, lb, cand, stack, known, pf_bits,
                  pf_count, buf, out_f, out_i, out_pos, smallest_left, now_gaps, ints, q_cores, q_wall, q_file,
                  q_size, q_slot, q_seq)


class Planner:
    """The pass as the scheduler calls it: ``plan(now, queue)`` -> [Decision]."""

    def __init__(self, state, policy_name):
        self.state = state
        self.flat = state.flat
        opts = state.options
        self.policy = CODES[policy_name]
        # LEM with a ramp: the gradual LEM
        self.ramp = (0.0, 0.0, 0) if opts.ramp is None else (float(opts.ramp[0]), float(opts.ramp[1]),
                                                             SHAPES[opts.ramp_shape] + RAMP_SCALES[opts.ramp_scale])
        if policy_name == "LEM" and opts.ramp is not None:
            self.policy = LEMG
        self.model = MODEL_CODES[opts.cache]
        self.backfilling = bool(opts.backfilling)
        self.W = float(opts.W)
        self.saturation = float(opts.saturation)
        self.depth = int(opts.queue_depth)
        # The authors' clock (ticks.py): a full pass plans from scratch, a
        # submission pass places new jobs on the rows as they stand, and
        # every queued job gets a reservation (they start on their own).
        self.ticks = opts.ticks
        self.whole_queue = bool(opts.predictions) or self.ticks
        self.inflight_from_now = opts.inflight_overhead == "from_now"
        self.ended_windows = opts.eviction_penalty == "ended_windows"
        self.truncate = opts.score_rounding == "truncate"
        self.earliest_cores = opts.core_choice == "earliest"
        self.float32_loads = opts.load_time_rounding == "float32_floor"
        self.per_file = opts.file_window == "per_file"
        # A walked job whose node got dearer past its floor is chosen a node again (the walk goes on)
        # rather than the rest of the queue placed again: the same decisions either way; measured
        # faster for LEM (its walks then nearly never stop), slower for FCFS-BF (docs/performance.md,
        # issue 40). BATLOC_WALK_RECHOOSE=0 or 1 forces it off or on (benchmarks), not an option.
        force = os.environ.get("BATLOC_WALK_RECHOOSE")
        self.walk_rechoose = self.policy in (LEM, LEMG) if force is None else force != "0"
        self.pass_stop = STOP_CODES[opts.pass_stop_for(policy_name)]
        # Those rules read now in scores the walk assumes time-free (waits
        # counted from now, files whose last user ended now) or end a pass at
        # a job: every pass plans from scratch.
        # load_model "shared": a load that ends early changes every later miss's duration on every node
        # (semantics note, "Shared storage"): every pass plans from scratch too.
        # A queue holding a job of several files, or outputs pinned by their write-back, is planned
        # from scratch too (the walk does not score such a job, nor see a pin outlive its estimate:
        # semantics note, "Shared storage", 2 and 3).
        self.standing = not (self.inflight_from_now or self.ended_windows or self.pass_stop != STOP_NEVER
                             or self.ticks or opts.load_model == "shared")
        self._scratch = None
        self._room = (0, 0, 0, 0, 0)
        self._slot_rows = 0        # plan's rows of queue slots; the file rows follow them
        self._rows_used = 0        # file rows handed out since they were last written anew
        self._last_now = -np.inf
        self._stats_base = (0, 0, 0, 0, 0)
        self._walk_base = np.zeros(CY_RESERVE - STOP_FLAG + 1, dtype=np.int64)   # stats_walk's counts of earlier working memories

    def _stat(self, slot, i):
        return self._stats_base[i] + (int(self._scratch.ints[slot]) if self._scratch else 0)

    @property
    def stats_jobs_scanned(self):
        return self._stat(SCANNED, 0)

    @property
    def stats_nodes_scored(self):
        return self._stat(SCORED, 1)

    @property
    def stats_jobs_walked(self):
        return self._stat(WALKED, 2)

    @property
    def stats_jobs_dropped(self):
        return self._stat(DROPPED, 3)

    @property
    def stats_jobs_moved(self):
        return self._stat(MOVED, 4)

    def stats_walk(self):
        """Where walks stopped (LEM's flag: too many nodes to reload for a job placed under the
        other flag; a job's node got dearer past its floor; the cap on moves), compactions of the
        backfilling intervals, reservations replayed on reloaded nodes, the jobs walks chose a
        node for again under LEM's other flag with the unchanged nodes reloaded for them, and the
        cycles spent in each part of the passes (``cycles_*``: compactions, the changed nodes' reload,
        walks, drops, placements, whole passes; wall-clock cycles, so a pass preempted counts its wait)."""
        counts = self._walk_base.copy()
        if self._scratch is not None:
            counts += self._scratch.ints[STOP_FLAG:CY_RESERVE + 1]
        (flag, dearer, cap, compactions, replayed, chosen, reloaded, bounded, settled, redone,
         *cycles, listed, cy_list, cy_choose, cy_left, cy_gaps, from_list, rekeyed, cy_reserve) = counts.tolist()
        return {"walk_stops_flag": flag, "walk_stops_dearer": dearer, "walk_stops_cap": cap,
                "compactions": compactions, "replayed": replayed, "flag_chosen": chosen, "flag_reloaded": reloaded,
                "walk_bounded": bounded, "walk_settled": settled, "chosen_dearer": redone,
                **{f"cycles_{part}": c for part, c in zip(("compact", "reload", "walk", "drop", "place", "pass"), cycles)},
                "listed": listed, "cycles_list": cy_list, "cycles_choose": cy_choose,
                "cycles_left": cy_left, "cycles_gaps": cy_gaps, "scored_from_list": from_list,
                "listed_again": rekeyed, "cycles_reserve": cy_reserve}

    def _scratch_for(self, slots, cores, files, memory_files, file_rows=0):
        """The working memory, grown when the queue, its cores, the files or
        the file rows of its jobs of several files outgrow it (the standing
        plan is then dropped: a full pass follows; under the authors' clock
        it is kept, rows and all)."""
        need = (slots, cores, files, memory_files, file_rows)
        if self._scratch is None or any(a > b for a, b in zip(need, self._room)):
            # Only what outgrew its room doubles: the file tables are files x
            # nodes, and doubling them with the queue ran a week out of memory.
            room = tuple(max(a, 2 * b) if a > b else b for a, b in zip(need, self._room))
            if self._scratch is not None and self.ticks:
                f = self.flat
                # (no file rows: the authors' clock refuses jobs of several files)
                self._scratch = _kept_in(self._scratch, allocate(
                    f.n, f.m, f.words, max(room[0], 16), max(room[1], 16), max(room[2], 64), room[3]))
                self._room = room
                self._slot_rows = max(room[0], 16)
                return self._scratch
            if self._scratch is not None:
                self._stats_base = (self.stats_jobs_scanned, self.stats_nodes_scored, self.stats_jobs_walked,
                                    self.stats_jobs_dropped, self.stats_jobs_moved)
                self._walk_base += self._scratch.ints[STOP_FLAG:CY_RESERVE + 1]
            f = self.flat
            old = self._scratch
            self._scratch = allocate(f.n, f.m, f.words, max(room[0], 16), max(room[1], 16), max(room[2], 64),
                                     room[3], room[4])
            # The new rows start empty (the next pass plans from scratch), but
            # the queued jobs keep their predictions.
            self._scratch.plan[:, P_FIRST] = np.nan
            if old is not None:
                rows = self._slot_rows
                for col in (START, P_FIRST, P_FIRST_AT, P_PREV):
                    self._scratch.plan[:rows, col] = old.plan[:rows, col]
            self._room = room
            self._slot_rows = max(room[0], 16)
            self._rows_used = -1        # the file rows are written anew
        return self._scratch

    def _configure(self, S, f, now):
        """The pass's settings (``cfg``)."""
        S.cfg[:] = (now, self.W, f.bw_max, self.policy, self.model, self.backfilling, self.inflight_from_now,
                    self.pass_stop, self._last_now, self.whole_queue, self.ended_windows,
                    self.truncate, *self.ramp, self.earliest_cores, self.float32_loads,
                    self.per_file, self.walk_rechoose)

    def plan(self, now, queue):
        qlen = len(queue)
        if self.depth:
            qlen = min(qlen, self.depth)
        if qlen == 0:
            return []
        S, f = self._prepare(queue)
        self._configure(S, f, now)
        ndec = plan_pass(*f.arrays(), *S, f.take_dirty(), *queue.arrays(), qlen, self.saturation,
                         self.standing and not queue.several and not self.state.writebacks)
        self._last_now = now
        if self.ticks:
            queue.release_parked()      # the pass unlinked every chain
        return self._decisions(S, queue, ndec)

    def plan_new(self, now, queue, first):
        """The authors' submission pass: only the jobs at queue positions
        ``first`` on are placed, on the standing plan as it is (no node
        reloaded) -> [Decision]."""
        if first >= len(queue):
            return []
        S, f = self._prepare(queue)
        self._configure(S, f, now)
        f.take_dirty()                  # what changed since stays unseen until the next full pass
        ndec = place_new_jobs(*f.arrays(), *S, *queue.arrays(), first, len(queue), self.saturation)
        self._last_now = now
        return self._decisions(S, queue, ndec)

    def reservation(self, queue, index):
        """The standing reservation of the job at queue position ``index``, as
        the Decision that starts it at its planned second; None if unplanned."""
        S = self._scratch
        slot = int(queue.slots[index])
        if S is None or slot >= S.plan.shape[0]:
            return None
        row = S.plan[slot]
        node = int(row[P_NODE])
        if node < 0:
            return None
        job = queue.jobs[index]
        return Decision(job, node, S.pos_plan[slot, :job.cores].copy(), float(row[START]), float(row[AVAIL]),
                        CASE_NAMES[int(row[P_CASE])], None, float(row[P_SCORE]), index,
                        (float(row[P_FIRST]), float(row[P_FIRST_AT]), float(row[P_PREV])))

    def planned_starts(self, queue, first=0):
        """(planned start, job id) of the queued jobs from position ``first`` on that hold a reservation."""
        S = self._scratch
        if S is None or first >= len(queue):
            return []
        rows = S.plan[queue.slots[first:len(queue)]]
        planned = np.flatnonzero(rows[:, P_NODE] >= 0)
        jobs = queue.jobs
        return list(zip(rows[planned, START].tolist(), (jobs[first + i].id for i in planned.tolist())))

    def _prepare(self, queue):
        cores = queue.arrays()[0]
        f = self.flat
        f.ensure_files(len(f.files))
        in_use = int(self._scratch.ints[IV_COUNT]) if self.ticks and self._scratch is not None else 0
        several = queue.take_fresh_several()
        for _, job in several:
            for name, _ in job.files:
                f.files.id_of(name)
        f.ensure_files(len(f.files))
        # a node's memory files and held rows past one per core (jobs of several files) share ``buf``
        S = self._scratch_for(queue.slot_count, int(cores[:len(queue)].sum()) + in_use, f.file_bits.shape[0],
                              f.mem_cap + f.held.shape[1] - f.m, queue.several_rows)
        fresh = queue.take_fresh()
        S.plan[fresh, P_NODE] = UNPLANNED     # slots handed out since: none planned yet
        S.plan[fresh, P_FIRST] = np.nan
        if several or self._rows_used < 0:
            self._write_file_rows(S, queue, several)
        return S, f

    def _write_file_rows(self, S, queue, several):
        """The file rows of the jobs of several files queued since the last pass
        ((slot, job) pairs), past those handed out before; every queued one's
        anew when they do not fit or the working memory is new. No chain may
        hold a row written over: every chain is emptied first (the pass plans
        from scratch while such a job is queued)."""
        unlink_chains(S.node_i, S.plan, S.pf_bits, S.pf_count, S.ints)
        room = S.plan.shape[0] - self._slot_rows
        need = sum(len(job.files) for _, job in several)
        if self._rows_used < 0 or self._rows_used + need > room:
            self._rows_used = 0
            several = [(int(queue.slots[i]), job) for i, job in enumerate(queue.jobs) if job.files]
        ids = self.flat.files.id_of
        plan = S.plan
        for slot, job in several:
            x0 = self._slot_rows + self._rows_used
            plan[slot, P_X0] = x0
            plan[slot, P_XN] = len(job.files)
            for r, (name, size) in enumerate(job.files):
                plan[x0 + r, FILE] = ids(name)
                plan[x0 + r, SIZE] = size
                plan[x0 + r, P_NODE] = -1
            self._rows_used += len(job.files)

    def _decisions(self, S, queue, ndec):
        jobs, slots, out_f, out_i = queue.jobs, queue.slots, S.out_f, S.out_i
        out = []
        for d in range(ndec):
            index = int(out_i[d, O_JOB])
            job = jobs[index]
            row = S.plan[slots[index]]
            out.append(Decision(job, int(out_i[d, O_NODE]), S.out_pos[d, :job.cores].copy(),
                                float(out_f[d, O_START]), float(out_f[d, O_TFILE]), CASE_NAMES[int(out_i[d, O_CASE])],
                                None, float(out_f[d, O_SCORE]), index,
                                (float(row[P_FIRST]), float(row[P_FIRST_AT]), float(row[P_PREV]))))
        return out


def _kept_in(old, new):
    """``new`` (a larger Scratch) holding everything ``old`` held: each array's
    old extent copied, the new rows empty (plan rows with no prediction)."""
    new.plan[:, P_FIRST] = np.nan
    for a, b in zip(old, new):
        b[tuple(slice(0, d) for d in a.shape)] = a
    return new


def warm_up(say=None):
    """Compile the planning core (or load it from the cache): a pass and a
    submission pass (its two entry points) on a one-node platform. With
    `say` (a function of one line), a real compile is said as it goes."""
    from batloc.locality.platform_view import NodeInfo, PlatformView
    from batloc.schedulers.planning.job_queue import JobQueue, QueuedJob
    from batloc.schedulers.planning.options import SchedulerOptions
    from batloc.schedulers.planning.state import ClusterState
    platform = PlatformView([NodeInfo(0, "n000", (0,), 1, 1e9, 1e8)], 2)
    state = ClusterState(platform, SchedulerOptions())
    queue = JobQueue()
    queue.append(QueuedJob("w0!1", 1, 60.0, "f", 1e6), state.file_id("f"))
    planner = Planner(state, "LEA")
    with jit.reporting(say) if say is not None else nullcontext(lambda: None) as took:
        planner.plan(0.0, queue)
        planner.plan_new(0.0, queue, 0)
    seconds = took()
    if say is not None and seconds is not None:
        say(f"planning core compiled in {seconds:.0f} s (cached in {jit.cache_dir()})")


_kernel = threading.Lock()
_kernel_ready = False


def load_kernel(say):
    """The planning core compiled, or loaded from the cache, once in this
    process, whichever thread asks first; the others wait for it."""
    global _kernel_ready
    with _kernel:
        if not _kernel_ready:
            warm_up(say)
            _kernel_ready = True
