"""The CONS plan: one ordered list of planned jobs per node, kept evaluated (plan_kernels.py).

Planned jobs live in slots of flat arrays (cores, walltime, submission,
user index, start, slack, position) so that the compiled Tabu search works on
them in place; ``items[slot]`` is the scheduler's own record of the job.
"""

import math

import numpy as np

from .plan_kernels import cons_place, evaluate_from, insert_at, remove_at

_INITIAL = 64
_NO_ROWS, _NO_TIMES, _NO_SLACK = np.zeros((1, 1)), np.zeros(1), np.zeros(1, dtype=np.int64)


class Plan:
    def __init__(self, node_cores):
        self.node_cores = np.asarray(node_cores, dtype=np.int64)
        n, self.widest = len(self.node_cores), int(self.node_cores.max())
        self.base = np.zeros((n, self.widest))
        self.length = np.zeros(len(self.node_cores), dtype=np.int64)
        self.size = 0
        self.items = []
        self.free_slots = []
        self._alloc(_INITIAL)

    def _alloc(self, cap):
        old = len(self.items)
        after = np.zeros((cap, self.widest))
        lists = np.zeros((len(self.node_cores), cap + 1), dtype=np.int64)
        if old:
            after[:old] = self.after
            lists[:, :old + 1] = self.lists
        self.after, self.lists = after, lists
        self.items.extend([None] * (cap - old))
        self.free_slots.extend(range(cap - 1, old - 1, -1))
        for name, dtype in (("cores", np.int64), ("wall", float), ("sub", float), ("user", np.int64),
                            ("start", float), ("slack", np.int64), ("pos", np.int64), ("node", np.int64)):
            grown = np.zeros(cap, dtype=dtype)
            if old:
                grown[:old] = getattr(self, name)
            setattr(self, name, grown)

    def __len__(self):
        return self.size

    # ---- nodes ------------------------------------------------------------
    def set_available(self, k, availability, now):
        """Node k's cores are free from these times on (running jobs' ends; `now` when idle)."""
        self.base[k, :self.node_cores[k]] = np.sort(np.asarray(availability, dtype=float))
        self.evaluate(k, 0, now)

    def evaluate(self, k, p0, now, inserted=False):
        evaluate_from(self.base[k], self.after, self.node_cores[k], self.lists[k], self.length[k], p0, inserted,
                      self.cores, self.wall, self.start, self.slack, self.pos, float(now), False, _NO_ROWS, _NO_TIMES,
                      _NO_SLACK)

    def order(self, k):
        return self.lists[k][:self.length[k]]

    # ---- jobs -------------------------------------------------------------
    def place(self, item, user_index, now):
        """CONS (rule 1): plan `item` where it starts earliest without delaying anyone.
        Returns its slot, or None if it fits on no node."""
        if not self.free_slots:
            self._alloc(2 * len(self.items))
        slot = self.free_slots.pop()
        self.cores[slot], self.wall[slot], self.sub[slot] = item.cores, item.walltime, item.subtime
        self.user[slot] = user_index
        k, p, t = cons_place(self.base, self.after, self.lists, self.length, self.node_cores, int(item.cores),
                             float(item.walltime), self.start, self.slack, float(now))
        if k < 0 or not math.isfinite(t):
            self.free_slots.append(slot)
            return None
        insert_at(self.lists[k], self.length[k], p, slot)
        self.length[k] += 1
        self.node[slot] = k
        self.evaluate(k, p, now, inserted=True)
        self.items[slot] = item
        self.size += 1
        return slot

    def pop_due(self, now):
        """Remove and return (node, item) of every planned job starting at `now`, node by node,
        list heads first. Those nodes' rows are stale until their availability is set again."""
        due = []
        for k in np.flatnonzero(self.length):
            order = self.lists[k]
            while self.length[k] and self.start[order[0]] <= now:
                slot = int(order[0])
                remove_at(order, self.length[k], 0)
                self.length[k] -= 1
                due.append((int(k), self.items[slot]))
                self.items[slot] = None
                self.free_slots.append(slot)
                self.size -= 1
        return due

    def sync_nodes(self):
        """After a Tabu round moved jobs: each slot's node from the lists."""
        for k in range(len(self.length)):
            self.node[self.order(k)] = k

    def planned_slots(self):
        return np.concatenate([self.order(k) for k in range(len(self.length))]) if self.size else \
            np.zeros(0, dtype=np.int64)

    def next_start(self):
        slots = self.planned_slots()
        return float(self.start[slots].min()) if slots.size else math.inf
