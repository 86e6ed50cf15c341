"""One planning pass: list scheduling of the whole queue from the current state.

For each queued job in order (semantics note, "The five policies"), the policy
scores every node and the job gets a reservation on the best one (ties: lowest
node index); jobs whose reservation starts now are started. Reservations of
queued jobs live only for this pass.

Scoring all nodes exactly for every queued job would cost O(nodes) Python work
per job. Instead the pass computes, vectorised over nodes, a lower bound of each
node's score (cores' availability, and a load overhead that is exact wherever
the file is neither in memory nor planned), then computes exact scores node by
node in increasing bound order, and stops as soon as the next bound cannot beat
the best exact score. The choice is the same as an exhaustive scan.

The pass also stops early once no node has as many cores free *now* as the
smallest job left in the queue needs: later reservations cannot start anything
now, and the next pass rebuilds them anyway. With the option ``queue_depth``
it plans only the head of the queue (a production scheduler's bound, not the
paper's rule).

Issue 39 (semantics note, "Shared storage"): a job of several files is
scored, planned (one window per file) and held by all of them; with
``load_model`` "shared" a miss lasts as long as its share of the backbone
gives it (``batloc.locality.backbone``) beside the loads in flight and the
loads planned earlier in the pass.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from oracle_planner.file_outlook import FileOutlook, Window
from batloc.locality.backbone import load_end
from batloc.locality.staging import staging_job_id
from batloc.schedulers.planning.file_outlook import float32_load


@dataclass
class PassContext:
    now: float
    options: object
    busy_share: float     # share of nodes running or holding at least one job (LEM)


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
    index: int = -1
    predicted: tuple = (None, None, None)   # set by the scheduler's wrapper (scheduler.py)
    t_load: Optional[float] = None          # the end of its own load (several files: of its misses)


class Planner:
    def __init__(self, state, policy):
        self.state = state
        self.policy = policy
        self.platform = state.platform
        self.bandwidth = self.platform.bandwidth
        self.memory = self.platform.memory
        self.stats_jobs_scanned = 0
        self.stats_nodes_scored = 0
        # Python floats (same values) for the per-node arithmetic on one node.
        self._bw = self.bandwidth.tolist()
        self._mem = self.memory.tolist()
        self._ov_by_size = {}      # size -> size / bandwidth over nodes (read-only)
        # The authors' clock (batloc.schedulers.planning.ticks): job id -> its
        # reservation (node, t_k, positions, case, t'_k, score), the standing plan.
        self.reservations = {}
        self._rows = False         # whether a pass left rows to resume

    def _load_overheads(self, size):
        """size / BW_k for every node; many jobs share a file, hence a size."""
        ov = self._ov_by_size.get(size)
        if ov is None:
            if len(self._ov_by_size) >= 4096:
                self._ov_by_size.clear()
            ov = self._ov_by_size[size] = size / self.bandwidth
            ov.flags.writeable = False
        return ov

    def _room(self, k, files, t, positions, c, w, o, pins):
        """The first (t, positions) from t at which the job's missing files fit in node k's memory
        beside the files of the windows over t and the outputs still pinned then (semantics note,
        "Shared storage", 3); (inf, None) if never."""
        avail = self.state.availability
        while True:
            need = 0.0
            for f, size in files:
                present, load_end, _ = o._case(f, t)
                if not present and load_end is None:
                    need += size
            if need <= 0:
                return t, positions
            held = {x.file: x.size for x in o.windows if x.file is not None and x.start <= t < x.end}
            held.update({f: size for f, size, until in pins if until > t})
            if sum(held.values()) + need <= self.memory[k]:
                return t, positions
            later = [x.end for x in o.windows if x.file is not None and x.start <= t < x.end]
            later += [until for _, _, until in pins if until > t]
            if not later:
                return math.inf, None
            lower = min(later)
            if avail.backfilling:
                t, positions = avail.t_exact(k, c, w, lower)
            else:       # cores free at their availability stay free: the lowest ids free by then
                t = max(t, lower)
                positions = (avail.avail[k] <= t).nonzero()[0][:c]
            if positions is None:
                return math.inf, None

    def plan(self, now, queue, first=0, resume=False):
        """A pass: the whole queue from the actual state; with ``resume`` (the
        authors' submission pass), only the jobs from position ``first`` on,
        on the rows the passes since the last full one left."""
        st = self.state
        avail = st.availability
        ticks = st.options.ticks
        if resume and self._rows:
            avail.resume_pass(now)
        else:
            avail.begin_pass(now)
            self._rows = True
        if not resume:
            self.reservations = {}
        n = len(self.platform)
        busy = avail.busy_nodes().copy()
        planned = {}               # node -> [Window] placed in this pass
        planned_nodes = {}         # file -> set(node) planned in this pass
        outlooks = {}              # node -> FileOutlook, kept up to date by add()
        decisions = []
        if st.options.queue_depth:
            queue = queue[:st.options.queue_depth]
        if not queue:
            return decisions
        cores = np.fromiter((j.cores for j in queue), dtype=np.int64, count=len(queue))
        smallest_left = np.minimum.accumulate(cores[::-1])[::-1].tolist()
        policy = self.policy
        uses_penalty = getattr(policy, "uses_penalty", True)
        penalty_counts = getattr(policy, "penalty_counts", None)
        score_of, lower_bound = policy.score, policy.lower_bound
        caches = st.caches
        file_nodes = st.file_nodes
        bw, mem = self._bw, self._mem
        no_overhead = np.zeros(n)
        no_overhead.flags.writeable = False
        busy_count = int(busy.sum())
        # One context for the pass, updated when a start makes a node busy.
        ctx = PassContext(now, st.options, float(busy_count) / n)
        t_exact, max_free_now = avail.t_exact, avail.max_free_now
        inf = np.inf
        from_now = st.options.inflight_overhead == "from_now"
        ended_windows = st.options.eviction_penalty == "ended_windows"
        stop = st.options.pass_stop_for(policy.name)
        earliest_cores = st.options.core_choice == "earliest" and not avail.backfilling
        float32_loads = st.options.load_time_rounding == "float32_floor"
        per_file = st.options.file_window == "per_file"
        free_total = int(avail.free_now.sum())
        shared = st.load_model == "shared"
        backbone = self.platform.backbone
        # the loads that share the backbone: in flight (replayed) and planned in this pass
        projected = st.projected if shared else {}
        loads = st.carried_loads(now) if shared else None
        # outputs pinned by their write-back: node -> [(file, size, until)] (item 3, planning part)
        pinned = {}
        for sid, wb in st.writebacks.items():
            until = projected.get(sid, wb.est_end)
            for f in wb.files:
                r = caches[wb.node].files.get(f)
                if r is not None and r.pins:
                    pinned.setdefault(wb.node, []).append((f, r.size, max(until, math.nextafter(now, math.inf))))

        for i, job in enumerate(queue):
            if i < first:
                continue
            if not ticks and not st.options.predictions and max_free_now() < smallest_left[i]:
                break
            if (stop == "job_exceeds_free_cores" and job.cores > free_total) or (
                    stop == "no_free_core" and free_total <= 0):
                break
            self.stats_jobs_scanned += 1
            c, w, file, size = job.cores, job.walltime, job.file, job.size
            files = getattr(job, "files", ())
            t_lb = avail.t_lower(c, w)
            if files:
                # a bound: the files known nowhere near a node are certainly loaded there
                ov_lb = np.zeros(n)
                for f, s in files:
                    ov_f = self._load_overheads(s).copy()
                    for nodes in (file_nodes.get(f, ()), planned_nodes.get(f, ())):
                        if nodes:
                            ov_f[list(nodes)] = 0.0
                    ov_lb += ov_f
            elif file is not None:
                ov_lb = self._load_overheads(size)
                known = file_nodes.get(file, ())
                more = planned_nodes.get(file, ())
                if known or more:
                    ov_lb = ov_lb.copy()
                    if known:
                        ov_lb[list(known)] = 0.0
                    if more:
                        ov_lb[list(more)] = 0.0
            else:
                ov_lb = no_overhead
            lb = lower_bound(ctx, t_lb, ov_lb, 0.0)

            # Exact scores in increasing (bound, node) order, stopping once the
            # next bound cannot beat the best: the first node is the argmin; the
            # others worth a look are those whose bound does not exceed the best
            # score found, usually none, so no full sort.
            best_score, best_k, best = inf, n, None
            k0 = k = int(lb.argmin())
            if lb[k] < inf:
                order = (k,)
                first = True
                while order:
                    for k in order:
                        lbk = lb[k]
                        if not lbk < inf or (lbk, k) > (best_score, best_k):
                            break
                        t, positions = t_exact(k, c, w, t_lb[k])
                        if positions is None:
                            continue
                        if earliest_cores:      # R7: the cores available first (ties: lowest position)
                            positions = np.sort(np.argsort(avail.avail[k], kind="stable")[:c])
                        pins = pinned.get(k)
                        if pins and (file is not None or files):
                            o = outlooks.get(k)
                            if o is None:
                                o = outlooks[k] = FileOutlook(caches[k], st.actual_windows(k),
                                                              planned.get(k, ()), now, ended_windows, per_file,
                                                              projected)
                            t, positions = self._room(k, files or ((file, size),), t, positions, c, w, o, pins)
                            if positions is None:
                                continue
                        self.stats_nodes_scored += 1
                        per_files, t_load = (), None
                        load_time = (lambda nb, t0, k=k: load_end(t0, nb, bw[k], loads, backbone)) if shared \
                            else (lambda nb, t0, k=k: t0 + nb / bw[k])
                        if file is None and not files:
                            ov, case, t_file, stg, pen = 0.0, "none", t, None, 0.0
                        else:
                            o = outlooks.get(k)
                            if o is None:
                                o = outlooks[k] = FileOutlook(caches[k], st.actual_windows(k),
                                                              planned.get(k, ()), now, ended_windows, per_file,
                                                              projected)
                            # The eviction penalty is the costly part; skip it where the
                            # policy's score at this t_k ignores it (LEO, LEM).
                            need_pen = uses_penalty and (penalty_counts is None or penalty_counts(ctx, t))
                            if files:
                                res = o.evaluate_files(files, t, need_pen, load_time, None if shared else bw[k])
                                per_files = res.files
                                t_load = next((a for _, cs, a in per_files if cs == "miss"), None)
                                pen_size = sum(s for _, s in files)
                            else:
                                res = o.evaluate(file, size, t, bw[k], need_pen, load_time if shared else None)
                                pen_size = size
                                if res.case == "miss":
                                    t_load = res.t_file
                            ov, case, t_file, stg = res.overhead, res.case, res.t_file, res.staging
                            if case == "wait" and from_now:
                                ov = t_file - now
                                t_file = t + ov
                            elif case == "miss" and float32_loads:
                                t_file = t + float32_load(size, bw[k])     # R6
                            pen_bytes = res.penalty_bytes
                            pen = 0.0
                            if need_pen and pen_bytes:
                                pen = pen_bytes * pen_size / mem[k] / bw[k]
                        score = float(score_of(ctx, t, ov, pen))
                        if (score, k) < (best_score, best_k):
                            best_score, best_k = score, k
                            best = (t, positions, case, t_file, stg, per_files, t_load)
                    if not first:
                        break
                    first = False
                    if best_k == k0 and best_score == lb[k0]:
                        break       # the bound was exact: no other node can beat it
                    # Every other node whose (bound, index) may still beat the best.
                    cand = np.flatnonzero(lb <= best_score) if best_score < inf \
                        else np.flatnonzero(lb < inf)
                    lbl = lb[cand].tolist()
                    order = [j for _, j in sorted(zip(lbl, cand.tolist())) if j != k0]
            if best is None:
                continue            # no node can ever hold it (rejected on submission)
            score, k = best_score, best_k
            t, positions, case, t_file, stg, per_files, t_load = best
            free_k = int(avail.free_now[k])
            avail.reserve(k, positions, t, w)
            free_total -= free_k - int(avail.free_now[k])
            if t == now and case == "miss":
                stg = staging_job_id(job.id, self.platform.nodes[k].name)
            if files:       # one window per file, each there when its case says
                reads = frozenset(f for f, _ in files)
                wins = [Window(t, a, t + w, f, s, stg, reads) for (f, s), (_, _, a) in zip(files, per_files)]
            else:
                wins = [Window(t, t_file, t + w, file, size, stg)]
            o = outlooks.get(k)
            for win in wins:
                planned.setdefault(k, []).append(win)
                if o is not None:
                    o.add(win)
                if win.file is not None:
                    nodes = planned_nodes.get(win.file)
                    if nodes is None:
                        nodes = planned_nodes[win.file] = set()
                    nodes.add(k)
            if shared and t_load is not None:
                loads.append((t, t_load, bw[k]))     # its load shares the backbone with the next ones
            self.reservations[job.id] = (k, t, positions, case, t_file, score)
            if t == now:
                if not busy[k]:
                    busy[k] = True
                    busy_count += 1
                    ctx.busy_share = float(busy_count) / n
                decisions.append(Decision(job, k, positions, t, t_file, case, stg,
                                          score, t_load=t_load))
        return decisions
