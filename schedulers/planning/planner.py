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

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.schedulers.planning import availability as av
from batloc.schedulers.planning.file_outlook import CASE_NAMES, MODEL_CODES, NONE, WAIT, evaluate
from batloc.schedulers.planning.jit import inline, njit
from batloc.schedulers.planning.formulas import CODES, bound, needs_penalty, reads_overhead, score
from batloc.schedulers.planning.flat_state import AVAIL, BW, END, FILE, MEM, MIN_LOADING, N_FREE, SIZE, START
from batloc.schedulers.planning.scratch import (BUSY, C_BACKFILL, C_BW_MAX, C_INFLIGHT_FROM_NOW, C_MODEL, C_NOW,
                                            C_PASS_STOP, C_POLICY, C_W, FREE, HEAD, O_CASE,
                                            O_JOB, O_NODE, O_SCORE, O_START, O_TFILE, P_NEXT, PF_COUNT, PW_COUNT,
                                            RESUME_AT, SCANNED, SCORED, TAIL, VALID, allocate)

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

@inline
def _score_node(k, cores, walltime, fid, size, lower, saturated, cfg, node_f, held, mem, base, tails, cols, node_i,
                cand_times, pos, core_iv, iv, plan, buf, ints):
    """Exact (score, case, t_k, t'_k) of the job on node k, its cores in pos[0];
    score +inf when k never has the cores."""
    now, W, policy, model = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY]), int(cfg[C_MODEL])
    if cfg[C_BACKFILL] != 0:
        t = av.t_exact_bf(k, cores, walltime, lower, now, cols, base, tails, pos, cand_times, core_iv, iv, node_i,
                          plan)
    else:
        t = av.t_exact(k, cores, now, cols, base, pos)
    if not t < INF:
        return INF, NONE, INF, INF
    ints[SCORED] += 1
    if fid < 0:
        return score(policy, t, 0.0, 0.0, now, saturated, W), NONE, t, t
    need = needs_penalty(policy, t, now, saturated)
    case, t_file, overhead, pen_bytes = evaluate(k, fid, size, t, now, model, need, node_f, held, mem, node_i,
                                                 plan, buf)
    if case == WAIT and cfg[C_INFLIGHT_FROM_NOW] != 0:
        # the authors' simulator: what is left of the load counted from now, not from t_k
        overhead = t_file - now
        t_file = t + overhead
    pen = 0.0
    if need and pen_bytes != 0.0:
        pen = pen_bytes * size / node_f[k, MEM] / node_f[k, BW]
    return score(policy, t, overhead, pen, now, saturated, W), case, t, t_file


@njit
def _choose(c, w, fid, size, saturated, cfg, node_f, held, mem, file_bits, base, tails, cols, tree, node_i,
            cand_times,
            pos, core_iv, iv, plan, lb, cand, stack, known, pf_bits, buf, ints):
    """The node of least (score, index) for the job, its cores in pos[1]:
    (score, node, case, t_k, t'_k); node n when no node can ever hold it.

    Exact scores are computed in increasing order of a lower bound, until the
    bound exceeds the best score: first the nodes whose memory holds, loads
    or is planned to load the file (load overhead 0 at best: a list), then the
    others (overhead size/BW_k) as the tournament tree yields them by t_k.
    Once the tree's next node has the best score as bound and a larger index,
    nodes further along can only matter if their bound rounds to the same
    value and their index is smaller: a depth-first search of the tree for
    those ends its part."""
    n = node_f.shape[0]
    tc = c - 1
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
    # Nodes that know the file, by (bound, index); none when the score ignores
    # the file (every node then has the same bound form).
    nf = 0
    if fid >= 0 and reads_overhead(policy):
        for x in range(known.shape[0]):
            bits = file_bits[fid, x] | pf_bits[fid, x]
            known[x] = bits
            while bits != 0:
                k = x * 64 + _lowest_bit(bits)
                bits &= bits - np.uint64(1)
                t_lb = av.at(cols[tc, k], now)
                if t_lb < INF:
                    b = bound(policy, t_lb, 0.0, now, saturated, W)
                    a = nf
                    while a > 0 and lb[a - 1] > b:
                        lb[a] = lb[a - 1]
                        cand[0, a] = cand[0, a - 1]
                        a -= 1
                    lb[a] = b
                    cand[0, a] = k
                    nf += 1
    # The others yield their overhead size/BW_k: at least size over the largest bandwidth.
    sorts_files = fid >= 0 and reads_overhead(policy)
    ov_least = size / cfg[C_BW_MAX] if sorts_files else 0.0
    best_score, best_k, best_case, best_t, best_tfile = INF, n, NONE, INF, INF
    fi, nset, tree_done = 0, 0, False
    while True:
        kn, b_tree = n, INF
        if not tree_done:
            # Least node of the tree that does not know the file.
            kn, key = av.least(tree, tc)
            while kn < n and sorts_files and _bit(known, kn):
                av.set_aside(tree, cols, tc, kn)
                cand[1, nset] = kn
                nset += 1
                kn, key = av.least(tree, tc)
            if kn < n and key < INF:
                b_tree = bound(policy, av.at(key, now), ov_least, now, saturated, W)
        b_list = lb[fi] if fi < nf else INF
        if b_list <= b_tree:
            if not b_list < INF or b_list > best_score:
                break
            k, b = cand[0, fi], b_list
            fi += 1
        else:
            if b_tree > best_score:
                break
            if b_tree == best_score and kn > best_k:
                best_score, best_k, best_case, best_t, best_tfile = _search_below(
                    tc, ov_least, c, w, fid, size, sorts_files, saturated, best_score, best_k, best_case, best_t, best_tfile,
                    cfg, node_f, held, mem, base, tails, cols, tree, node_i, cand_times, pos, core_iv, iv, plan,
                    stack, known, buf, ints)
                tree_done = True
                continue
            k = kn
            av.set_aside(tree, cols, tc, kn)
            cand[1, nset] = kn
            nset += 1
            overhead = size / node_f[k, BW] if sorts_files else 0.0
            b = bound(policy, av.at(cols[tc, k], now), overhead, now, saturated, W)
        if b > best_score or (b == best_score and k > best_k):
            continue
        s, case, t, t_file = _score_node(k, c, w, fid, size, av.at(cols[tc, k], now), saturated, cfg, node_f, held,
                                         mem, base, tails, cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
        if t < INF and (s < best_score or (s == best_score and k < best_k)):
            best_score, best_k, best_case, best_t, best_tfile = s, k, case, t, t_file
            for p in range(c):
                pos[1, p] = pos[0, p]
    for a in range(nset - 1, -1, -1):
        av.put_back(tree, cols, tc, cand[1, a])
    return best_score, best_k, best_case, best_t, best_tfile


@njit
def _search_below(tc, ov_least, c, w, fid, size, sorts_files, saturated, best_score, best_k, best_case, best_t,
                  best_tfile, cfg, node_f, held, mem, base, tails, cols, tree, node_i, cand_times, pos, core_iv, iv,
                  plan, stack, known, buf, ints):
    """Depth-first over tree tc: every node of index below ``best_k`` whose
    bound does not exceed the best score is scored; returns the best found,
    starting from (best_score, best_k, ...) (pos[1] updated)."""
    n = node_f.shape[0]
    now, W, policy = cfg[C_NOW], cfg[C_W], int(cfg[C_POLICY])
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
        if bound(policy, av.at(key, now), ov_least, now, saturated, W) > best_score:
            continue
        if i < leaves:
            stack[top] = 2 * i + 1
            stack[top + 1] = 2 * i
            top += 2
            continue
        k = kmin
        if sorts_files and _bit(known, k):
            continue
        overhead = size / node_f[k, BW] if sorts_files else 0.0
        b = bound(policy, av.at(cols[tc, k], now), overhead, now, saturated, W)
        if b > best_score or (b == best_score and k > best_k):
            continue
        s, case, t, t_file = _score_node(k, c, w, fid, size, av.at(cols[tc, k], now), saturated, cfg, node_f, held,
                                         mem, base, tails, cols, node_i, cand_times, pos, core_iv, iv, plan, buf, ints)
        if t < INF and (s < best_score or (s == best_score and k < best_k)):
            best_score, best_k, best_case, best_t, best_tfile = s, k, case, t, t_file
            for p in range(c):
                pos[1, p] = pos[0, p]
    return best_score, best_k, best_case, best_t, best_tfile


@njit
def plan_pass(node_f, core_end, core_held, held, mem, file_bits,
              base, first_free, tails, cols, tree, node_i, touched, cand_times, pos, core_iv, iv, plan, lb, cand,
              stack, known, pf_bits, pf_set, buf, out_f, out_i, out_pos, smallest_left, ints, cfg,
              dirty, q_cores, q_wall, q_file, q_size, qlen, saturation, appended_only):
    """Places the first ``qlen`` queued jobs; the starts are in out_* (returns their count).

    Resuming: when the last pass started nothing, nothing but submissions
    happened since (no node changed, the queue only grew), no job is past its
    planned end and no load past its estimate, this pass would redo the last
    one's placements exactly: they all begin after now, and what a node could
    offer now only got later and dearer, unless the job's file is loading on
    a node with cores free now (waiting there gets shorter: ``_wait_shrinks``).
    So it keeps them and goes on from where the last one stopped (not when
    waits are counted from now: they shrink as time passes).

    ``pass_stop`` (cfg): the pass ends at the first job needing more cores
    than are free now, less those the pass's placements took (the authors'
    score schedulers); the jobs after it get no reservation."""
    n = node_f.shape[0]
    now, backfilling = cfg[C_NOW], cfg[C_BACKFILL] != 0
    first = 0
    if (appended_only and dirty.shape[0] == 0 and ints[RESUME_AT] >= 0 and cfg[C_INFLIGHT_FROM_NOW] == 0
            and not av.overrun_at(node_f, now)
            and node_f[:, MIN_LOADING].min() > now and not _wait_shrinks(node_f, file_bits, known, q_file,
                                                                        ints[RESUME_AT])):
        first = ints[RESUME_AT]
    else:
        for x in range(ints[PF_COUNT]):
            k = pf_set[x, 1]
            pf_bits[pf_set[x, 0], k >> 6] = np.uint64(0)
        ints[PF_COUNT] = 0
        ints[PW_COUNT] = 0
        av.begin_pass(node_f, core_end, core_held, base, first_free, tails, core_iv, cols, tree, node_i, touched,
                      cand_times, ints, dirty, now, backfilling)
    ints[RESUME_AT] = -1
    if qlen == 0:
        return 0
    smallest = q_cores[qlen - 1]
    for i in range(qlen - 1, first - 1, -1):
        if q_cores[i] < smallest:
            smallest = q_cores[i]
        smallest_left[i] = smallest
    busy_count = 0
    for k in range(n):
        if node_i[k, BUSY]:
            busy_count += 1
    pass_stop = cfg[C_PASS_STOP] != 0
    free_now = node_i[:, FREE].sum() if pass_stop else 0
    ndec = 0
    stop = qlen
    for i in range(first, qlen):
        if av.max_free_now(node_i, ints) < smallest_left[i] or (pass_stop and q_cores[i] > free_now):
            stop = i
            break
        ints[SCANNED] += 1
        c, w, fid, size = q_cores[i], q_wall[i], q_file[i], q_size[i]
        saturated = busy_count / n >= saturation
        best_score, best_k, best_case, best_t, best_tfile = _choose(
            c, w, fid, size, saturated, cfg, node_f, held, mem, file_bits, base, tails, cols, tree, node_i,
            cand_times, pos, core_iv, iv, plan, lb, cand, stack, known, pf_bits, buf, ints)
        if best_k == n:
            continue
        k, t = best_k, best_t
        free_k = node_i[k, FREE]
        if backfilling:
            av.reserve_bf(k, c, t, w, now, base, first_free, tails, cols, tree, node_i, touched, cand_times, pos,
                          core_iv, iv, ints)
        else:
            av.reserve(k, c, t, w, now, base, cols, tree, node_i, touched, cand_times, pos, ints)
        free_now -= free_k - node_i[k, FREE]
        _plan_window(k, t, best_tfile, t + w, fid, size, node_i, plan, ints)
        if fid >= 0 and not _has_bit(pf_bits, fid, k):
            pf_bits[fid, k >> 6] |= np.uint64(1) << np.uint64(k & 63)
            x = ints[PF_COUNT]
            pf_set[x, 0] = fid
            pf_set[x, 1] = k
            ints[PF_COUNT] = x + 1
        if t == now:
            if not node_i[k, BUSY]:
                node_i[k, BUSY] = 1
                busy_count += 1
            out_i[ndec, O_JOB] = i
            out_i[ndec, O_CASE] = best_case
            out_i[ndec, O_NODE] = k
            out_f[ndec, O_START] = t
            out_f[ndec, O_TFILE] = best_tfile
            out_f[ndec, O_SCORE] = best_score
            for p in range(c):
                out_pos[ndec, p] = pos[1, p]
            ndec += 1
    if ndec == 0 and ints[VALID] == 1:
        ints[RESUME_AT] = stop
    return ndec


@njit
def _wait_shrinks(node_f, file_bits, nodes, q_file, count):
    """Might one of the first ``count`` queued jobs wait for its file on a node
    with cores free now? (Its score there falls as time passes.) Files held or
    loading on nodes with free cores and a load in flight: a safe superset."""
    found = False
    for x in range(nodes.shape[0]):
        nodes[x] = np.uint64(0)
    for k in range(node_f.shape[0]):
        if node_f[k, N_FREE] > 0 and node_f[k, MIN_LOADING] < INF:
            nodes[k >> 6] |= np.uint64(1) << np.uint64(k & 63)
            found = True
    if not found:
        return False
    for i in range(count):
        fid = q_file[i]
        if fid >= 0:
            for x in range(nodes.shape[0]):
                if file_bits[fid, x] & nodes[x] != 0:
                    return True
    return False


@inline
def _plan_window(k, start, avail, end, fid, size, node_i, plan, ints):
    j = ints[PW_COUNT]
    ints[PW_COUNT] = j + 1
    plan[j, START] = start
    plan[j, AVAIL] = avail
    plan[j, END] = end
    plan[j, SIZE] = size
    plan[j, FILE] = fid
    plan[j, P_NEXT] = -1
    tail = node_i[k, TAIL]
    if tail < 0:
        node_i[k, HEAD] = j
    else:
        plan[tail, P_NEXT] = j
    node_i[k, TAIL] = j


class Planner:
    """The pass as the scheduler calls it: ``plan(now, queue)`` -> [Decision]."""

    def __init__(self, state, policy_name):
        self.state = state
        self.flat = state.flat
        opts = state.options
        self.policy = CODES[policy_name]
        self.model = MODEL_CODES[opts.cache]
        self.backfilling = bool(opts.backfilling)
        self.W = float(opts.W)
        self.saturation = float(opts.saturation)
        self.depth = int(opts.queue_depth)
        self.inflight_from_now = opts.inflight_overhead == "from_now"
        self.pass_stop = opts.pass_stop_for(policy_name) == "job_exceeds_free_cores"
        self._scratch = None
        self._room = (0, 0, 0, 0)
        self._removals, self._qlen = -1, 0
        self._stats_base = (0, 0)

    @property
    def stats_jobs_scanned(self):
        return self._stats_base[0] + (int(self._scratch.ints[SCANNED]) if self._scratch else 0)

    @property
    def stats_nodes_scored(self):
        return self._stats_base[1] + (int(self._scratch.ints[SCORED]) if self._scratch else 0)

    def _scratch_for(self, jobs, cores, files, memory_files):
        need = (jobs, cores, files, memory_files)
        if self._scratch is None or any(a > b for a, b in zip(need, self._room)):
            room = tuple(max(a, 2 * b) for a, b in zip(need, self._room))
            if self._scratch is not None:
                self._stats_base = (self.stats_jobs_scanned, self.stats_nodes_scored)
            f = self.flat
            self._scratch = allocate(f.n, f.m, f.words, max(room[0], 16), max(room[1], 16), max(room[2], 64),
                                     room[3])
            self._room = room
        return self._scratch

    def plan(self, now, queue):
        qlen = len(queue)
        if self.depth:
            qlen = min(qlen, self.depth)
        if qlen == 0:
            return []
        cores, wall, fids, sizes = queue.arrays()
        f = self.flat
        f.ensure_files(len(f.files))
        before = self._scratch
        S = self._scratch_for(qlen, int(cores[:qlen].sum()), f.file_bits.shape[0], f.mem_cap)
        appended_only = S is before and queue.removals == self._removals and qlen >= self._qlen
        S.cfg[:] = (now, self.W, f.bw_max, self.policy, self.model, self.backfilling, self.inflight_from_now,
                    self.pass_stop)
        ndec = plan_pass(*f.arrays(), *S, f.take_dirty(), cores, wall, fids, sizes, qlen, self.saturation,
                         appended_only)
        self._removals, self._qlen = queue.removals, qlen
        jobs, out_f, out_i = queue.jobs, S.out_f, S.out_i
        out = []
        for d in range(ndec):
            index = int(out_i[d, O_JOB])
            job = jobs[index]
            out.append(Decision(job, int(out_i[d, O_NODE]), S.out_pos[d, :job.cores].copy(),
                                float(out_f[d, O_START]), float(out_f[d, O_TFILE]), CASE_NAMES[int(out_i[d, O_CASE])],
                                None, float(out_f[d, O_SCORE]), index))
        return out


def warm_up():
    """Compile the pass (or load it from the cache): one pass on a one-node platform."""
    from batloc.locality.platform_view import NodeInfo, PlatformView
    from batloc.schedulers.planning.job_queue import JobQueue, QueuedJob
    from batloc.schedulers.planning.options import SchedulerOptions
    from batloc.schedulers.planning.state import ClusterState
    platform = PlatformView([NodeInfo(0, "n000", (0,), 1, 1e9, 1e8)], 2)
    state = ClusterState(platform, SchedulerOptions())
    queue = JobQueue()
    queue.append(QueuedJob("w0!1", 1, 60.0, "f", 1e6), state.file_id("f"))
    return Planner(state, "LEA").plan(0.0, queue)
