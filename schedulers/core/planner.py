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
now, and the next pass rebuilds them anyway.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.schedulers.core.file_outlook import FileOutlook, Window
from batloc.schedulers.core.staging import staging_job_id


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


class Planner:
    def __init__(self, state, policy):
        self.state = state
        self.policy = policy
        self.platform = state.platform
        self.bandwidth = self.platform.bandwidth
        self.memory = self.platform.memory
        self.stats_jobs_scanned = 0
        self.stats_nodes_scored = 0

    def plan(self, now, queue):
        st = self.state
        avail = st.availability
        avail.begin_pass(now)
        n = len(self.platform)
        busy = avail.busy_nodes().copy()
        planned = {}               # node -> [Window] placed in this pass
        planned_nodes = {}         # file -> set(node) planned in this pass
        outlooks = {}
        decisions = []
        if not queue:
            return decisions
        cores = np.fromiter((j.cores for j in queue), dtype=np.int64, count=len(queue))
        smallest_left = np.minimum.accumulate(cores[::-1])[::-1]
        uses_penalty = getattr(self.policy, "uses_penalty", True)

        def outlook(k):
            o = outlooks.get(k)
            if o is None:
                o = outlooks[k] = FileOutlook(st.caches[k], list(st.windows[k].values()),
                                              planned.get(k, []), now)
            return o

        for i, job in enumerate(queue):
            if avail.max_free_now() < smallest_left[i]:
                break
            self.stats_jobs_scanned += 1
            ctx = PassContext(now, st.options, float(busy.sum()) / n)
            c, w = job.cores, job.walltime
            t_lb = avail.t_lower(c, w)
            if job.file is not None:
                ov_lb = job.size / self.bandwidth
                known = st.file_nodes.get(job.file, ())
                more = planned_nodes.get(job.file, ())
                if known or more:
                    ov_lb = ov_lb.copy()
                    ov_lb[list(known)] = 0.0
                    ov_lb[list(more)] = 0.0
            else:
                ov_lb = np.zeros(n)
            lb = self.policy.lower_bound(ctx, t_lb, ov_lb, 0.0)
            order = np.argsort(lb, kind="stable")
            best = (np.inf, n, None, None, None, None)
            for k in order:
                k = int(k)
                if not lb[k] < np.inf or (lb[k], k) > (best[0], best[1]):
                    break
                t, positions = avail.t_exact(k, c, w, lower=t_lb[k])
                if positions is None:
                    continue
                self.stats_nodes_scored += 1
                o = outlook(k)
                if job.file is None:
                    ov, case, t_file, stg, pen_bytes = 0.0, "none", t, None, None
                    if uses_penalty:
                        pen_bytes = 0.0
                else:
                    res = o.evaluate(job.file, job.size, t, self.bandwidth[k])
                    ov, case, t_file, stg = res.overhead, res.case, res.t_file, res.staging
                    pen_bytes = res.penalty_bytes
                pen = 0.0
                if uses_penalty and job.file is not None and pen_bytes:
                    pen = pen_bytes * job.size / self.memory[k] / self.bandwidth[k]
                score = float(self.policy.score(ctx, t, ov, pen))
                if (score, k) < (best[0], best[1]):
                    best = (score, k, t, positions, (case, t_file, stg), None)
            score, k, t, positions, info, _ = best
            if positions is None:
                continue            # no node can ever hold it (rejected on submission)
            case, t_file, stg = info
            avail.reserve(k, positions, t, w)
            if t == now and case == "miss":
                stg = staging_job_id(job.id, self.platform.nodes[k].name)
            planned.setdefault(k, []).append(Window(t, t_file, t + w, job.file, job.size, stg))
            outlooks.pop(k, None)
            if job.file is not None:
                planned_nodes.setdefault(job.file, set()).add(k)
            if t == now:
                busy[k] = True
                decisions.append(Decision(job, k, positions, t, t_file, case, stg,
                                          score))
        return decisions
