"""Conservative backfilling improved by Tabu search, with user fairness (Klusáček & Rudová;
seed-schedulers.md §3).

Resource = node; the plan is one ordered list of planned jobs per node (schedulers/tabu/).
1. Submission (CONS): a job goes to the (node, position) where it starts
   earliest without delaying any planned job (appending always qualifies);
   ties: lowest node, earliest position.
2. Every event: lists of nodes whose running jobs changed are re-evaluated
   (compression after early ends); jobs whose start is now start, on the
   node's lowest free core ids.
3. Tabu search (schedulers/tabu/search_kernel.py) runs at every multiple of
   ``tabu_period`` seconds (300) and right after a job ends before its
   walltime: ``iterations_per_job`` × |plan| iterations (4 = Alea's 2·|plan|
   × multiplicator 2), seeded by ``seed``, no wall-clock cap (deterministic).
   Objective weights: ``fairness_weight`` w_F = 10 on NUWT fairness.
Accepted moves are logged in ``<export_prefix>_tabu.csv``. ``tabu: false``
gives plain CONS. Jobs never use their input files (no staging).
"""

import math
import sys

from batloc.outputs import text
from batloc.schedulers.plain.base import PlainScheduler, Rejected, planned_end
from batloc.schedulers.plain.options import boolean, number
from batloc.schedulers.tabu.plan import Plan
from batloc.schedulers.tabu.search import optimise, seed_state

LOG_HEADER = "time,job_id,from_node,to_node,gain\n"


class Cons_tabu(PlainScheduler):
    policy = "cons_tabu"
    options_spec = {
        "tabu": (True, boolean),
        "tabu_period": (300.0, number(above=0)),
        "iterations_per_job": (4, number(minimum=0, integer=True)),
        "fairness_weight": (10.0, number(minimum=0)),
        "seed": (0, number(minimum=0, integer=True)),
    }

    def setup(self):
        by_node = {}
        for cid in self.core_ids:
            by_node.setdefault(self.node_of[cid], []).append(cid)
        self.node_names = sorted(by_node)
        self.node_core_ids = [sorted(by_node[n]) for n in self.node_names]
        self.node_index = {cid: k for k, ids in enumerate(self.node_core_ids) for cid in ids}
        self.plan = Plan([len(ids) for ids in self.node_core_ids])
        for k, ids in enumerate(self.node_core_ids):
            self.plan.set_available(k, [0.0] * len(ids), 0.0)
        self.users = {}
        self.fixed_wait = []       # per user: waits of started jobs
        self.fixed_den = []        # per user: cores × (actual run time, or walltime while running)
        self.fresh = []            # submitted, not yet planned
        self.changed_nodes = set()
        self.tabu_due = False
        self.next_tabu = self.opts.tabu_period
        self.rng = seed_state(self.opts.seed)
        self.rounds = 0
        self.moves = []            # (time, job id, from node, to node, gain)
        self.log = None
        if self.opts.export_prefix:
            self.log = open(f"{self.opts.export_prefix}_tabu.csv", "w")
            self.log.write(LOG_HEADER)

    # ---- events -------------------------------------------------------------
    def admit(self, item):
        widest = max(len(ids) for ids in self.node_core_ids)
        if item.cores > widest:
            raise Rejected(f"job {item.id} requests {item.cores} cores but a job must fit on one node "
                           f"(largest: {widest} cores)")
        if item.user not in self.users:
            self.users[item.user] = len(self.users)
            self.fixed_wait.append(0.0)
            self.fixed_den.append(0.0)
        item.uidx = self.users[item.user]
        self.fresh.append(item)

    def completed(self, running, now):
        item = running.item
        self.fixed_den[item.uidx] += item.cores * ((now - running.start) - item.walltime)
        self.changed_nodes.add(self.node_index[running.core_ids[0]])
        if now < running.end:
            self.tabu_due = True   # an early end: compress, then optimise

    def onSimulationEnds(self):
        super().onSimulationEnds()
        if self.log is not None:
            self.log.close()

    # ---- planning -------------------------------------------------------------
    def schedule(self, now):
        plan = self.plan
        # A job still running at its walltime's end (its kill on its way: behind the staging proxy, which
        # kills at the window's end, its completion comes in a later message) keeps its cores: the plan
        # must not start the next job there now.
        for r in self.running.values():
            if r.end <= now:
                self.changed_nodes.add(self.node_index[r.core_ids[0]])
        for k in sorted(self.changed_nodes):
            plan.set_available(k, self._availability(k, now), now)
        self.changed_nodes.clear()
        for item in self.fresh:
            if plan.place(item, item.uidx, now) is None:  # cannot happen: admit checked the width
                print(f"batloc {self.policy}: job {item.id} fits on no node", file=sys.stderr)
        self.fresh = []
        if self.opts.tabu and len(plan) and (self.tabu_due or now >= self.next_tabu):
            self._tabu(now)
        if now >= self.next_tabu:
            self.next_tabu = (math.floor(now / self.opts.tabu_period) + 1) * self.opts.tabu_period
        self.tabu_due = False
        for k, item in plan.pop_due(now):
            self.start(item, self._free_on(k)[:item.cores], now)
            self.fixed_wait[item.uidx] += now - item.subtime
            self.fixed_den[item.uidx] += item.cores * item.walltime
            self.changed_nodes.add(k)
        for k in sorted(self.changed_nodes):
            plan.set_available(k, self._availability(k, now), now)
        self.changed_nodes.clear()
        self.queue = [plan.items[s] for s in plan.planned_slots()]
        if len(plan):
            self._call_at(plan.next_start(), now)
            if self.opts.tabu:
                self._call_at(self.next_tabu, now)

    def _free_on(self, k):
        return [cid for cid in self.node_core_ids[k] if cid in self.free]

    def _availability(self, k, now):
        avail = [now] * len(self.node_core_ids[k])
        ids = self.node_core_ids[k]
        for r in self.running.values():
            if self.node_index[r.core_ids[0]] == k:
                end = planned_end(r, now)
                for cid in r.core_ids:
                    avail[ids.index(cid)] = end
        return avail

    def _call_at(self, t, now):
        if t > now:
            self.call_at(t)

    def _tabu(self, now):
        moves = optimise(self.plan, self.fixed_wait, self.fixed_den, now, self.rng,
                         self.opts.iterations_per_job, self.opts.fairness_weight)
        self.rounds += 1
        for item, src, dst, gain in moves:
            row = (now, item.id, self.node_names[src], self.node_names[dst], gain)
            self.moves.append(row)
            if self.log is not None:
                self.log.write(f"{now:.6f},{text(item.id)},{row[2]},{row[3]},{gain:.6f}\n")
