"""The planning pass's working memory, allocated once and reused by every pass.

Everything a pass plans lives here and is forgotten by the next pass (semantics
note: reservations of queued jobs last one pass):

- core availability: ``base`` (cores held by actual jobs: the availability
  itself without backfilling, where reservations raise it), with backfilling
  ``first_free`` (earliest instant each core is free, a lower bound of t_k),
  ``tails[k]``: each core's end of its last reservation (free for good from
  then), the same sorted, and the longest gap left between reservations on
  the node (an upper bound once now moves on) (a job longer than every gap can only start once
  its cores are free for good: its t_k is the c-th smallest end, no scan);
  ``cols[c - 1, k]``: node k's c-th smallest availability, i.e. t_k (or its
  bound) for c cores on every node (column n is +inf: a sentinel node);
  ``tree[c - 1]``: a tournament tree over the nodes by (cols[c - 1, k], k), so
  that nodes come out in increasing t_k without scanning them all (each tree
  node holds its winner's key and index, see ``availability``);
- per node, ``node_i[k]``: cores free now, busy, reserved on in this pass, first
  and last planned window (``FREE, BUSY, TOUCHED_FLAG, HEAD, TAIL``), and the
  list of nodes reserved on (``touched``);
- with backfilling, reservation intervals per core: ``core_iv[k, p]`` heads a
  list sorted by start of rows ``iv[j]`` (start, end, next);
- the windows planned in the pass: rows ``plan[j]`` as the actual windows of
  ``flat_state.held`` (start, file available, end, size, file id), then the
  next window on the same node (``P_NEXT``);
- choosing a node: bounds ``lb`` and candidates ``cand[0]`` (nodes set aside
  in ``cand[1]``), a search ``stack``, ``known`` (the nodes that know the
  job's file), ``pf_bits`` (the nodes each file is planned on) and which bits
  were set (``pf_set``), core positions ``pos[0]`` (candidate) and ``pos[1]``
  (best), and ``pos[2]`` a cursor per core for the backfilling search;
- ``buf``: the files of one node's memory at some instant (file, size, last
  use, sequence, alive, and two index lists);
- the start decisions: ``out_f`` (start, t'_k, score), ``out_i`` (queue
  index, case, node), ``out_pos``; ``smallest_left``; counters ``ints``;
  the pass's settings ``cfg`` (now, W, the largest bandwidth, policy, memory
  model, backfilling).

The rows are not rebuilt at every pass: they hold the actual state between
passes (free cores as -inf, read as now), and a pass reloads only the nodes it
reserved on and those an event changed (``availability.begin_pass``).
Compiled functions take these arrays one by one (see ``flat_state``).
"""

from collections import namedtuple

import numpy as np

Scratch = namedtuple("Scratch", ["base", "first_free", "tails", "cols", "tree", "node_i", "touched", "cand_times", "pos",
                                 "core_iv", "iv", "plan", "lb", "cand", "stack", "known", "pf_bits", "pf_set",
                                 "buf", "out_f", "out_i", "out_pos", "smallest_left", "ints", "cfg"])

# Columns of node_i, plan (after flat_state's START..FILE), iv, buf, out_f, out_i; slots of cfg.
FREE, BUSY, TOUCHED_FLAG, HEAD, TAIL = range(5)
P_NEXT = 5
IV_START, IV_END, IV_NEXT = range(3)
B_FILE, B_SIZE, B_LAST, B_SEQ, B_ALIVE, B_ORDER, B_VICTIM = range(7)
O_START, O_TFILE, O_SCORE = range(3)
O_JOB, O_CASE, O_NODE = range(3)
C_NOW, C_W, C_BW_MAX, C_POLICY, C_MODEL, C_BACKFILL, C_INFLIGHT_FROM_NOW, C_PASS_STOP = range(8)

# Slots of ``ints``: largest count of cores free now (-1: to recompute);
# planned windows, intervals and planned-file bits in use; jobs scanned and
# nodes scored (statistics); whether the rows hold the actual state (else
# the next pass reloads every node); nodes reserved on in the last pass; where
# the last pass stopped if the next one may resume it (-1: it may not).
MAX_FREE, PW_COUNT, IV_COUNT, PF_COUNT, SCANNED, SCORED, VALID, TOUCHED, RESUME_AT = range(9)


def leaves(n):
    """Leaf count of the tournament trees: the power of two >= n."""
    return 1 << max(0, (n - 1).bit_length())


def allocate(n, m, words, jobs, cores, files, memory_files):
    """Room for a pass over ``jobs`` queued jobs holding ``cores`` cores in all,
    ``files`` file ids, and nodes whose memory holds up to ``memory_files`` files."""
    z = np.zeros
    i64 = np.int64
    u = memory_files + m + jobs + 1      # files a node may hold or plan in a pass
    node_i = z((n, 5), dtype=i64)
    node_i[:, HEAD] = node_i[:, TAIL] = -1
    return Scratch(
        base=z((n, m)), first_free=z((n, m)), tails=z((n, 2 * m + 1)), cols=np.full((m, n + 1), np.inf),
        tree=z((m, 2 * leaves(n), 2)), node_i=node_i, touched=z(n, dtype=i64),
        cand_times=z(m + jobs + 1), pos=z((3, m), dtype=i64),
        core_iv=np.full((n, m), -1, dtype=i64), iv=z((cores, 3)), plan=z((jobs, 6)),
        lb=z(n), cand=z((2, n), dtype=i64), stack=z(2 * leaves(n).bit_length() + 4, dtype=i64),
        known=z(words, dtype=np.uint64), pf_bits=z((files, words), dtype=np.uint64), pf_set=z((jobs, 2), dtype=i64),
        buf=z((u, 7)), out_f=z((jobs, 3)), out_i=z((jobs, 3), dtype=i64), out_pos=z((jobs, m), dtype=i64),
        smallest_left=z(jobs, dtype=i64), ints=np.array([0, 0, 0, 0, 0, 0, 0, 0, -1], dtype=i64), cfg=z(8))
