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

from batloc.schedulers.core import availability as av
from batloc.schedulers.core.file_outlook import CASE_NAMES, MISS, MODEL_CODES, NONE, evaluate
from batloc.schedulers.core.jit import njit
from batloc.schedulers.core.policies import CODES, needs_penalty, score
from batloc.schedulers.core.scratch import PF_COUNT, PW_COUNT, SCANNED, SCORED, allocate

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


@njit
def _has_bit(bits, k):
    return (bits[k >> 6] >> np.uint64(k & 63)) & np.uint64(1) != 0


@njit
def _score_node(A, S, k, cores, walltime, fid, size, lower, now, policy, W, saturated, model, backfilling):
    """Exact (score, case, t_k, t'_k) of the job on node k, its cores in S.pos;
    score +inf when k never has the cores."""
    if backfilling:
        t = av.t_exact_bf(S, k, cores, walltime, lower, now)
    else:
        t = av.t_exact(S, k, cores)
    if not t < INF:
        return INF, NONE, INF, INF
    S.ints[SCORED] += 1
    if fid < 0:
        return score(policy, t, 0.0, 0.0, now, saturated, W), NONE, t, t
    need = needs_penalty(policy, t, now, saturated)
    case, t_file, overhead, pen_bytes = evaluate(A, S, k, fid, size, t, now, model, need)
    pen = 0.0
    if need and pen_bytes != 0.0:
        pen = pen_bytes * size / A.mem[k] / A.bw[k]
    return score(policy, t, overhead, pen, now, saturated, W), case, t, t_file


@njit
def plan_pass(A, S, q_cores, q_wall, q_file, q_size, qlen, now, policy, W, saturation, model, backfilling):
    """Places the first ``qlen`` queued jobs; the starts are in S.d_* (returns their count)."""
    n = A.ncores.shape[0]
    words = S.known.shape[0]
    av.begin_pass(A, S, now, backfilling)
    S.ints[PW_COUNT] = 0
    S.ints[PF_COUNT] = 0
    for k in range(n):
        S.node_pw_head[k] = -1
        S.node_pw_tail[k] = -1
    if qlen == 0:
        return 0
    smallest = q_cores[qlen - 1]
    for i in range(qlen - 1, -1, -1):
        if q_cores[i] < smallest:
            smallest = q_cores[i]
        S.smallest_left[i] = smallest
    busy_count = 0
    for k in range(n):
        if S.busy[k]:
            busy_count += 1
    ndec = 0
    for i in range(qlen):
        if av.max_free_now(S) < S.smallest_left[i]:
            break
        S.ints[SCANNED] += 1
        c, w, fid, size = q_cores[i], q_wall[i], q_file[i], q_size[i]
        saturated = busy_count / n >= saturation
        if fid >= 0:
            for x in range(words):
                S.known[x] = A.file_bits[fid, x] | S.pf_bits[fid, x]

        # Lower bounds of every node's score; the first least one.
        k0, lb0 = -1, INF
        for k in range(n):
            t_lb = S.cols[c - 1, k]
            overhead = 0.0
            if fid >= 0 and not _has_bit(S.known, k):
                overhead = size / A.bw[k]
            lb = score(policy, t_lb, overhead, 0.0, now, saturated, W)
            S.lb[k] = lb
            if lb < lb0:
                k0, lb0 = k, lb
        if k0 < 0:
            continue            # no node can ever hold it (rejected on submission)

        best_score, best_k = INF, n
        best_case, best_t, best_tfile = NONE, INF, INF
        s, case, t, t_file = _score_node(A, S, k0, c, w, fid, size, S.cols[c - 1, k0], now, policy, W, saturated,
                                         model, backfilling)
        if t < INF and (s < best_score or (s == best_score and k0 < best_k)):
            best_score, best_k, best_case, best_t, best_tfile = s, k0, case, t, t_file
            S.best_pos[:c] = S.pos[:c]
        if not (best_k == k0 and best_score == lb0):
            # Every other node whose (bound, index) may still beat the best.
            nc = 0
            for k in range(n):
                if k != k0 and (S.lb[k] <= best_score if best_score < INF else S.lb[k] < INF):
                    S.cand[nc] = k
                    nc += 1
            for a in range(1, nc):            # stable: equal bounds keep index order
                k = S.cand[a]
                b = a - 1
                while b >= 0 and S.lb[S.cand[b]] > S.lb[k]:
                    S.cand[b + 1] = S.cand[b]
                    b -= 1
                S.cand[b + 1] = k
            for a in range(nc):
                k = S.cand[a]
                lb = S.lb[k]
                if not lb < INF or lb > best_score or (lb == best_score and k > best_k):
                    break
                s, case, t, t_file = _score_node(A, S, k, c, w, fid, size, S.cols[c - 1, k], now, policy,
                                                 W, saturated, model, backfilling)
                if t < INF and (s < best_score or (s == best_score and k < best_k)):
                    best_score, best_k, best_case, best_t, best_tfile = s, k, case, t, t_file
                    S.best_pos[:c] = S.pos[:c]
        if best_k == n:
            continue
        k, t = best_k, best_t
        if backfilling:
            av.reserve_bf(S, k, S.best_pos, c, t, w, now)
        else:
            av.reserve(S, k, S.best_pos, c, t, w, now)
        _plan_window(S, k, t, best_tfile, t + w, fid, size)
        if fid >= 0 and not _has_bit(S.pf_bits[fid], k):
            S.pf_bits[fid, k >> 6] |= np.uint64(1) << np.uint64(k & 63)
            x = S.ints[PF_COUNT]
            S.pf_touched_file[x] = fid
            S.pf_touched_node[x] = k
            S.ints[PF_COUNT] = x + 1
        if t == now:
            if not S.busy[k]:
                S.busy[k] = True
                busy_count += 1
            S.d_job[ndec] = i
            S.d_node[ndec] = k
            S.d_start[ndec] = t
            S.d_tfile[ndec] = best_tfile
            S.d_case[ndec] = best_case
            S.d_score[ndec] = best_score
            S.d_pos[ndec, :c] = S.best_pos[:c]
            ndec += 1
    # The planned-file bitmaps start empty at the next pass.
    for x in range(S.ints[PF_COUNT]):
        k = S.pf_touched_node[x]
        S.pf_bits[S.pf_touched_file[x], k >> 6] = np.uint64(0)
    return ndec


@njit
def _plan_window(S, k, start, avail, end, fid, size):
    j = S.ints[PW_COUNT]
    S.ints[PW_COUNT] = j + 1
    S.pw_start[j] = start
    S.pw_avail[j] = avail
    S.pw_end[j] = end
    S.pw_file[j] = fid
    S.pw_size[j] = size
    S.pw_next[j] = -1
    tail = S.node_pw_tail[k]
    if tail < 0:
        S.node_pw_head[k] = j
    else:
        S.pw_next[tail] = j
    S.node_pw_tail[k] = j


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
        self._scratch = None
        self._room = (0, 0, 0)
        self._stats_base = (0, 0)

    @property
    def stats_jobs_scanned(self):
        return self._stats_base[0] + (int(self._scratch.ints[SCANNED]) if self._scratch else 0)

    @property
    def stats_nodes_scored(self):
        return self._stats_base[1] + (int(self._scratch.ints[SCORED]) if self._scratch else 0)

    def _scratch_for(self, jobs, cores, files):
        need = (jobs, cores, files)
        if self._scratch is None or any(a > b for a, b in zip(need, self._room)):
            room = tuple(max(a, 2 * b) for a, b in zip(need, self._room))
            if self._scratch is not None:
                self._stats_base = (self.stats_jobs_scanned, self.stats_nodes_scored)
            f = self.flat
            self._scratch = allocate(f.n, f.m, f.words, max(room[0], 16), max(room[1], 16), max(room[2], 64))
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
        S = self._scratch_for(qlen, int(cores[:qlen].sum()), f.file_bits.shape[0])
        ndec = plan_pass(f.arrays(), S, cores, wall, fids, sizes, qlen, float(now), self.policy, self.W,
                         self.saturation, self.model, self.backfilling)
        jobs = queue.jobs
        out = []
        for d in range(ndec):
            job = jobs[int(S.d_job[d])]
            out.append(Decision(job, int(S.d_node[d]), S.d_pos[d, :job.cores].copy(), float(S.d_start[d]),
                                float(S.d_tfile[d]), CASE_NAMES[int(S.d_case[d])], None, float(S.d_score[d]),
                                int(S.d_job[d])))
        return out


def warm_up():
    """Compile the pass (or load it from the cache): one pass on a one-node platform."""
    from batloc.locality.platform_view import NodeInfo, PlatformView
    from batloc.schedulers.core.job_queue import JobQueue, QueuedJob
    from batloc.schedulers.core.options import SchedulerOptions
    from batloc.schedulers.core.state import ClusterState
    platform = PlatformView([NodeInfo(0, "n000", (0,), 1, 1e9, 1e8)], 2)
    state = ClusterState(platform, SchedulerOptions())
    queue = JobQueue()
    queue.append(QueuedJob("w0!1", 1, 60.0, "f", 1e6), state.file_id("f"))
    return Planner(state, "LEA").plan(0.0, queue)
