"""The planning pass's working memory, allocated once and reused by every pass.

Everything a pass plans lives here and is forgotten by the next pass (semantics
note: reservations of queued jobs last one pass):

- core availability during the pass: ``base`` (cores held by actual jobs: the
  availability itself without backfilling, where reservations raise it), and
  with backfilling ``first_free`` (earliest instant each core is free, a lower
  bound of t_k) and per-core reservation intervals (``iv_*``: linked lists
  sorted by start, headed by ``core_iv``); ``cols[c - 1, k]``: node k's c-th
  smallest availability, i.e. t_k (or its bound) for c cores on every node;
  ``free_now`` per node;
- the windows planned on each node (``pw_*``, a linked list per node in the
  order they were planned, headed by ``node_pw``), and ``pf_bits``: the nodes
  each file is planned on;
- the decisions to start a job now (``d_*``), and counters (``ints``).
"""

from collections import namedtuple

import numpy as np

Scratch = namedtuple("Scratch", [
    "base", "first_free", "cols", "free_now", "busy", "lb", "cand", "smallest_left",
    "pos", "best_pos", "cand_times",
    "pw_start", "pw_avail", "pw_end", "pw_size", "pw_file", "pw_next", "node_pw_head", "node_pw_tail",
    "iv_start", "iv_end", "iv_next", "core_iv",
    "pf_bits", "pf_touched_file", "pf_touched_node", "known",
    "d_job", "d_node", "d_start", "d_tfile", "d_case", "d_score", "d_pos",
    "ints"])

# Slots of ``ints``.
MAX_FREE, PW_COUNT, IV_COUNT, PF_COUNT, SCANNED, SCORED = range(6)


def allocate(n, m, words, jobs, cores, files):
    """Room for a pass over ``jobs`` queued jobs holding ``cores`` cores in all, ``files`` file ids."""
    f = np.zeros
    return Scratch(
        base=f((n, m)), first_free=f((n, m)), cols=f((m, n)), free_now=f(n, dtype=np.int64),
        busy=f(n, dtype=np.bool_), lb=f(n), cand=f(n, dtype=np.int64), smallest_left=f(jobs, dtype=np.int64),
        pos=f(m, dtype=np.int64), best_pos=f(m, dtype=np.int64), cand_times=f(m + jobs + 1),
        pw_start=f(jobs), pw_avail=f(jobs), pw_end=f(jobs), pw_size=f(jobs),
        pw_file=f(jobs, dtype=np.int64), pw_next=f(jobs, dtype=np.int64),
        node_pw_head=np.full(n, -1, dtype=np.int64), node_pw_tail=np.full(n, -1, dtype=np.int64),
        iv_start=f(cores), iv_end=f(cores), iv_next=f(cores, dtype=np.int64),
        core_iv=np.full((n, m), -1, dtype=np.int64),
        pf_bits=f((files, words), dtype=np.uint64), pf_touched_file=f(jobs, dtype=np.int64),
        pf_touched_node=f(jobs, dtype=np.int64), known=f(words, dtype=np.uint64),
        d_job=f(jobs, dtype=np.int64), d_node=f(jobs, dtype=np.int64), d_start=f(jobs), d_tfile=f(jobs),
        d_case=f(jobs, dtype=np.int64), d_score=f(jobs), d_pos=f((jobs, m), dtype=np.int64),
        ints=f(8, dtype=np.int64))
