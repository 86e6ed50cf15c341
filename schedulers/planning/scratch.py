"""The planning state: the standing plan and the pass's working memory,
allocated once and kept from pass to pass.

The rows hold the actual state plus every queued job's standing reservation
(``planner`` says when a reservation is kept, moved or planned again):

- core availability: ``base`` (cores held by actual jobs: the availability
  itself without backfilling, where reservations raise it), with backfilling
  ``first_free`` (earliest instant each core is free, a lower bound of t_k),
  ``tails[k]``: each core's end of its last reservation (free for good from
  then), the same sorted, and the longest gap left between reservations on
  the node (an upper bound once now moves on) (a job longer than every gap can only start once
  its cores are free for good: its t_k is the c-th smallest end, no scan), then per core its
  gaps longer than every earlier one (``FRONT``, ``availability.gap_bound``) and its longest gap;
  ``cols[c - 1, k]``: node k's c-th smallest availability, i.e. t_k (or its
  bound) for c cores on every node (column n is +inf: a sentinel node);
  ``tree[c - 1]``: a tournament tree over the nodes by (cols[c - 1, k], k), so
  that nodes come out in increasing t_k without scanning them all (each tree
  node holds its winner's key and index, see ``availability``), and
  ``tree[m + c - 1]`` the nodes whose key changed since that tree was last
  read (the trees are brought up to date lazily); ``tree[2m..5m)`` the same
  for the changed nodes of a walk (their least bounds and longest gap per
  subtree, ``availability.changed_note``);
- per node, ``node_i[k]``: cores free now, busy, whether the pass sees the node
  changed (``CHANGED``: its rows hold only the reservations walked so far) or
  rebuilds it (``REBUILT``), its first and last planned window (``HEAD, TAIL``);
  ``dset`` lists the changed nodes, then the nodes a pass rebuilds;
- with backfilling, reservation intervals per core: ``core_iv[k, p]`` heads a
  list sorted by start of rows ``iv[j]`` (start, end, next);
- the standing plan, one row per queue slot (``job_queue``): ``plan[s]`` as the
  actual windows of ``flat_state.held`` (start, file available, end, size,
  file id), then the next window on the same node (``P_NEXT``: each node's
  windows in queue order), the job's submission sequence, its score, node
  (``UNPLANNED``: none yet; ``NO_NODE``: no node can ever hold it), planned
  case, LEM's saturation flag when it was placed and its walltime; and for
  the predictions (what ``squeue --start`` tells): its first planned start
  and the pass that made it (NaN until it is planned), and the planned start
  it had before its latest placement; the runner-up when it was placed (score
  and node, an exact score on a node whose view has not changed since) and a
  floor under every other node's score; for a job of several files (its
  ``FILE`` is ``GROUP - slot``, below ``GROUP``) the first of its file rows
  and their count (``P_X0, P_XN``: 0 for a job of one file or none);
  ``pos_plan[s]`` its cores (-1 after the last);
- the file rows of the jobs of several files, past the slots' rows of
  ``plan`` (``planner.Planner`` hands them out): one window per file in the
  columns of a slot's (start, file available, end, size, file id, and its
  case ``P_CASE``), the file and size written once, the rest at each placement;
- choosing a node: bounds ``lb`` and candidates ``cand[0]`` (nodes set aside
  in ``cand[1]``), a search ``stack``, ``known`` (the nodes that know the
  job's file), ``pf_bits`` (the nodes each file is planned on: bits of
  ``pf_count``, the standing windows of that file on that node), core positions ``pos[0]`` (candidate) and ``pos[1]``
  (best), and ``pos[2]`` a cursor per core for the backfilling search;
- ``buf``: the files of one node's memory at some instant (file, size, last
  use, sequence, alive, and two index lists);
- the start decisions: ``out_f`` (start, t'_k, score), ``out_i`` (queue
  index, case, node), ``out_pos``; ``smallest_left``; with backfilling
  ``now_gaps[c - 1]``, the longest time from now during which some node has
  c cores free (when a pass may stop); counters ``ints``;
  the pass's settings ``cfg`` (now, W, the largest bandwidth, policy, memory
  model, backfilling).

The rows are not rebuilt at every pass: free cores hold -inf (read as now), so
they stay true as time passes; a pass reloads only the nodes an event changed
and those whose reservations it plans again.
Compiled functions take these arrays one by one (see ``flat_state``).
"""

from collections import namedtuple

import numpy as np

Scratch = namedtuple("Scratch", ["base", "first_free", "tails", "cols", "tcols", "tree", "node_i", "dset", "cand_times", "pos",
                                 "core_iv", "iv", "plan", "pos_plan", "lb", "cand", "stack", "known", "pf_bits", "pf_count",
                                 "buf", "out_f", "out_i", "out_pos", "smallest_left", "now_gaps", "ints",
                                 "cfg"])

# Columns of node_i, plan (after flat_state's START..FILE), iv, buf, out_f, out_i; slots of cfg.
FREE, BUSY, CHANGED, HEAD, TAIL, REBUILT = range(6)
P_NEXT, P_SEQ, P_SCORE, P_NODE, P_CASE, P_SAT, P_WALL, P_FIRST, P_FIRST_AT, P_PREV, P_S2, P_K2, P_FLOOR = range(5, 18)
P_X0, P_XN = 18, 19
PLAN_COLUMNS = 20
UNPLANNED, NO_NODE = -2.0, -1.0
# plan[s, FILE] of a standing window whose file a pass placing only new jobs
# does not see (the authors' simulator rebuilds its file view from started
# jobs only): no file, and, unlike a job without one, it evicts nothing.
HIDDEN = -2.0
# plan[s, FILE] (and the queue's file id) of a job of several files: GROUP - s,
# its windows being its file rows (``P_X0, P_XN``).
GROUP = -3.0
IV_START, IV_END, IV_NEXT = range(3)
B_FILE, B_SIZE, B_LAST, B_SEQ, B_ALIVE, B_ORDER, B_VICTIM = range(7)
O_START, O_TFILE, O_SCORE = range(3)
O_JOB, O_CASE, O_NODE = range(3)
C_NOW, C_W, C_BW_MAX, C_POLICY, C_MODEL, C_BACKFILL, C_INFLIGHT_FROM_NOW, C_PASS_STOP, C_LAST_NOW, C_WHOLE = range(10)
# cfg[C_ENDED_WINDOWS]: LEA's penalty counts the files whose last window ended (R11), not the memory model's.
C_ENDED_WINDOWS = 10
# cfg[C_TRUNCATE]: scores truncated to whole seconds before they are compared (R7).
C_TRUNCATE = 11
# cfg[C_RAMP_LOW, C_RAMP_HIGH, C_RAMP_SHAPE]: the gradual LEM's ramp (formulas.locality_weight).
C_RAMP_LOW, C_RAMP_HIGH, C_RAMP_SHAPE = 12, 13, 14
# cfg[C_EARLIEST_CORES]: a job takes the node's cores that are available first, not the lowest
# positions available by its t_k (R7's core order; the authors' simulator).
C_EARLIEST_CORES = 15
# cfg[C_FLOAT32_LOADS]: a load planned from t_k ends at t_k + its float32-floored duration (R6).
C_FLOAT32_LOADS = 16
# cfg[C_PER_FILE]: a file's windows as the authors' simulator plans with them (R10, file_window).
C_PER_FILE = 17
# cfg[C_WALK_RECHOOSE]: a walked job whose node got dearer past its floor is chosen a node again (the walk
# goes on) rather than the rest of the queue placed again (planner._walk).
C_WALK_RECHOOSE = 18
# cfg[C_PASS_STOP]: where a pass stops (options.pass_stop).
STOP_NEVER, STOP_JOB_EXCEEDS, STOP_NO_FREE = range(3)
STOP_CODES = {"never": STOP_NEVER, "job_exceeds_free_cores": STOP_JOB_EXCEEDS, "no_free_core": STOP_NO_FREE}

# Slots of ``ints``: largest count of cores free now (-1: to recompute);
# intervals in use; jobs placed (chosen among every
# node), nodes scored, jobs walked (kept unless a changed node could take
# them), reservations dropped to be placed again, reservations the walk moved
# (statistics); whether the rows hold the standing plan (else the next pass
# plans from scratch).
MAX_FREE, IV_COUNT, SCANNED, SCORED, WALKED, DROPPED, MOVED, VALID = range(8)
# Where walks stop (LEM's flag changed, a job's node got dearer past its floor, the cap on moves),
# compactions of the backfilling intervals, reservations replayed on reloaded nodes (statistics).
STOP_FLAG, STOP_DEARER, STOP_CAP, COMPACTIONS, REPLAYED = range(8, 13)
# Jobs the walk chose a node for again under LEM's other flag, and the unchanged nodes it reloaded
# to score them (statistics).
FLAG_CHOSEN, FLAG_RELOADED = 13, 14
# Changed nodes whose bound the walk computed for a job, and walked jobs that the changed nodes' least
# bound settled without any (statistics).
BOUNDED, SETTLED = 15, 16
# Walked jobs whose node got dearer past their floor chosen a node again (``walk_rechoose``; statistics).
CHOSEN_DEARER = 17
# Cycles (``jit.cycles``) spent in the pass's parts: compactions, the changed nodes' reload, the walk
# (its re-choices included), the drop of the rest of the queue (replays on reloaded nodes included),
# the placements; and in the whole pass (statistics: where a pass's time goes).
CY_COMPACT, CY_RELOAD, CY_WALK, CY_DROP, CY_PLACE, CY_PASS = range(18, 24)
# In the placements' choices: nodes listed apart from the tree (they know the file, or with backfilling
# the job fits one of their gaps), the cycles spent listing them, and the cycles of the whole choice.
LISTED, CY_LIST, CY_CHOOSE = range(24, 27)
# In the placements, besides the choices: the suffix minima of the jobs left (cores; walltimes per core
# count, with backfilling), and the gaps from now read again after a reservation on a node with free cores.
CY_LEFT, CY_GAPS = 27, 28
# Exact scores in choices of nodes from the list (the rest: from the tree) (statistics).
FROM_LIST = 29
# Listed nodes put back into the list under their gaps' bound (``availability.gap_bound``).
REKEYED = 30
# In the placements: the cycles reserving the chosen node's cores (statistics).
CY_RESERVE = 31


# Backfilling intervals are not reused until a compaction (every node reloaded, every
# standing reservation made again) frees those of reloaded nodes: room for this many
# times the queued cores makes compactions rarer (a saturated day's FCFS-BF compacted
# about once every 75 passes with twice).
IV_ROOM = 8
# Gaps kept per core with backfilling (``availability.gap_bound``), past the first 2m + 1 columns of ``tails``.
FRONT = 4


def leaves(n):
    """Leaf count of the tournament trees: the power of two >= n."""
    return 1 << max(0, (n - 1).bit_length())


def _trees(n, m):
    """The trees over the nodes (``availability``): 2m planes for every node's t_k, 3m for a
    walk's changed nodes, all empty."""
    tree = np.zeros((5 * m, 2 * leaves(n), 2))
    tree[2 * m:3 * m] = np.inf
    tree[3 * m:4 * m] = -np.inf
    return tree


def allocate(n, m, words, jobs, cores, files, memory_files, file_rows=0):
    """Room for ``jobs`` queue slots holding ``cores`` cores in all, ``file_rows``
    file rows of jobs of several files past them (``IV_ROOM``
    times that in backfilling intervals, which outlive a rebuilt node's until
    the next compaction), ``files`` file ids, and nodes whose memory holds up
    to ``memory_files`` files."""
    z = np.zeros
    i64 = np.int64
    u = memory_files + m + jobs + file_rows + 1      # files a node may hold or plan in a pass
    node_i = z((n, 6), dtype=i64)
    node_i[:, HEAD] = node_i[:, TAIL] = -1
    return Scratch(
        base=z((n, m)), first_free=z((n, m)), tails=z((n, (3 + 2 * FRONT) * m + 1)), cols=np.full((m, n + 1), np.inf),
        tcols=np.full((m, n + 1), np.inf),
        tree=_trees(n, m), node_i=node_i, dset=z(n, dtype=i64),
        cand_times=z(m + jobs + 1), pos=z((3, m), dtype=i64),
        core_iv=np.full((n, m), -1, dtype=i64), iv=z((IV_ROOM * cores, 3)), plan=z((jobs + file_rows, PLAN_COLUMNS)),
        pos_plan=z((jobs, m), dtype=i64),
        lb=z(n), cand=z((2, n), dtype=i64), stack=z(2 * leaves(n).bit_length() + 4, dtype=i64),
        known=z(words, dtype=np.uint64), pf_bits=z((files, words), dtype=np.uint64),
        pf_count=z((files, n), dtype=np.int32),
        buf=z((u, 7)), out_f=z((jobs, 3)), out_i=z((jobs, 3), dtype=i64), out_pos=z((jobs, m), dtype=i64),
        smallest_left=z(jobs, dtype=i64), now_gaps=z(m), ints=z(32, dtype=i64), cfg=z(19))
