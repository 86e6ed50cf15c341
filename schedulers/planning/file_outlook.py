"""When a job's file is available on a node if it starts there at t (t'_k), and
what starting there costs the files already in memory (LEA's eviction penalty). Compiled.

The paper's three cases (semantics note, "File availability and the memory model"):
1. the file is present on k at t (kept by the memory model)      -> t'_k = t      (hit)
2. a load of the file on k began at or before t, not finished    -> its end       (wait)
3. otherwise                                                      -> t + size/BW_k (miss)

"Present" and "in flight" look ahead over *windows*: each job holding cores on
the node, actual (running or waiting) or planned earlier in this pass, holds
its file from its avail time (load end, or start on a hit) to its end (start +
walltime). An actual window whose load is still in flight past its estimate
is taken to end its load just after now. Under ``paper`` a file also survives
its last user's end until another job starts on the node (a job planned
earlier in the pass at the same instant counts as starting first); under
``lru`` it stays until evicted for room, planned loads replayed in start
order against the node's memory; under ``strict`` it goes with its last user,
seen only by a start in the very instant that user ends (t = its end).

A job of several files (issue 39; semantics note, "Shared storage") is
planned by the sum of its files: ``evaluate_files`` takes each file's case,
its misses one load of their summed size, t'_k when its last file is there;
planned, it holds one window per file (its file rows, ``scratch.GROUP``),
and a start evicts (``paper``) only the files its job does not read.
"""

import numpy as np

from batloc.schedulers.planning.flat_state import (AVAIL, BACKBONE, BW, END, FILE, LOADING, M_FILE, M_LAST,
                                               M_LOADED, M_SEQ, M_SIZE, M_USERS, MEM, N_HELD, N_MEM, OWN_LOAD,
                                               SIZE, START)
from batloc.schedulers.planning.jit import inline, njit
from batloc.schedulers.planning.scratch import (B_ALIVE, B_FILE, B_LAST, B_ORDER, B_SEQ, B_SIZE, B_VICTIM, GROUP,
                                            HEAD, HIDDEN, P_CASE, P_NEXT, P_NODE, P_X0, P_XN)

PAPER, STRICT, LRU = range(3)
# ``authors`` plans as ``strict`` does; it differs in what execution keeps (locality/cache.py).
MODEL_CODES = {"paper": PAPER, "strict": STRICT, "lru": LRU, "authors": STRICT}
NONE, HIT, WAIT, MISS = range(4)
CASE_NAMES = ("none", "hit", "wait", "miss")
INF = np.inf


@njit
def float32_load(size, bandwidth):
    """A load's duration as the authors' simulator counts it (R6): the size in
    GB as a 32-bit float over the bandwidth in GB/s (also one), truncated to
    whole seconds; 83.2 GB at 0.1 GB/s loads in 831 s, not 832."""
    return np.floor(np.float32(size * 1e-9) / np.float32(bandwidth * 1e-9))


def load_time(size, bandwidth, float32_floor):
    """Seconds to load ``size`` bytes at ``bandwidth`` bytes/s: exact, or with ``float32_floor`` as R6."""
    return float(float32_load(size, bandwidth)) if float32_floor else size / bandwidth


def staged_bytes(size, bandwidth, float32_floor):
    """The bytes a staging moves so that it lasts ``load_time``."""
    return load_time(size, bandwidth, True) * bandwidth if float32_floor else size


# Arguments, in this order wherever they appear: k (the node), the job's
# file and instants, then node_f, held, mem (the actual state), node_i, plan
# (windows planned in the pass) and buf (see flat_state and scratch).


@inline
def window_rows(j, plan):
    """The window rows of the job planned in row j: [first, last + 1) — its own row, or
    its file rows when it reads several files."""
    if plan[j, FILE] <= GROUP:
        x0 = int(plan[j, P_X0])
        return x0, x0 + int(plan[j, P_XN])
    return j, j + 1


@inline
def _group_reads(slot, plan, fid):
    """Does the job of several files in ``slot`` read file ``fid``?"""
    x0 = int(plan[slot, P_X0])
    for x in range(x0, x0 + int(plan[slot, P_XN])):
        if plan[x, FILE] == fid:
            return True
    return False


@inline
def _reads(j, plan, fid):
    """Does the job planned in row j read file ``fid``?"""
    if plan[j, FILE] <= GROUP:
        return _group_reads(j, plan, fid)
    return plan[j, FILE] == fid


@inline
def _own(fid, f, plan):
    """Is f a file of the job whose file id is ``fid`` (several files: ``GROUP - slot``)?"""
    if fid <= GROUP:
        return _group_reads(int(GROUP - fid), plan, f)
    return f == fid


@inline
def _survives_paper(j, plan, fid, since, t):
    """No job planned on the node (its windows from ``j`` on) starts in [since, t] without reading
    ``fid`` (a window whose file is hidden, ``scratch.HIDDEN``, is not seen)."""
    while j >= 0:
        s = plan[j, START]
        if since <= s and s <= t and plan[j, FILE] != HIDDEN and not _reads(j, plan, fid):
            return False
        j = int(plan[j, P_NEXT])
    return True


@inline
def _in_use(k, fid, t, node_f, held, node_i, plan):
    """Does a window over t (start <= t < end) on k use file ``fid``?"""
    for i in range(int(node_f[k, N_HELD])):
        if held[k, i, FILE] == fid and held[k, i, START] <= t and t < held[k, i, END]:
            return True
    j = node_i[k, HEAD]
    while j >= 0:
        if plan[j, START] <= t and t < plan[j, END] and _reads(j, plan, fid):
            return True
        j = int(plan[j, P_NEXT])
    return False


@njit
def _lru_resident(k, t, node_f, held, mem, node_i, plan, buf):
    """Files the LRU memory of k holds at t once planned loads up to t made room,
    into buf's B_FILE / B_SIZE columns in the memory's order (new files last);
    their count."""
    nf = int(node_f[k, N_MEM])
    seq, used = 0.0, 0.0
    for i in range(nf):
        buf[i, B_FILE] = mem[k, i, M_FILE]
        buf[i, B_SIZE] = mem[k, i, M_SIZE]
        buf[i, B_LAST] = mem[k, i, M_LAST]
        buf[i, B_SEQ] = mem[k, i, M_SEQ]
        buf[i, B_ALIVE] = 1.0
        if buf[i, B_SEQ] > seq:
            seq = buf[i, B_SEQ]
        used += buf[i, B_SIZE]
    count = nf
    # Planned windows starting by t, with a file, in start order (ties: planning order).
    no = 0
    j = node_i[k, HEAD]
    while j >= 0:
        if plan[j, START] <= t:
            r0, r1 = window_rows(j, plan)
            for r in range(r0, r1):
                if plan[r, FILE] >= 0:
                    x = plan[r, START]
                    i = no - 1
                    while i >= 0 and plan[int(buf[i, B_ORDER]), START] > x:
                        buf[i + 1, B_ORDER] = buf[i, B_ORDER]
                        i -= 1
                    buf[i + 1, B_ORDER] = r
                    no += 1
        j = int(plan[j, P_NEXT])
    capacity = node_f[k, MEM]
    for o in range(no):
        w = int(buf[o, B_ORDER])
        f, start, size = plan[w, FILE], plan[w, START], plan[w, SIZE]
        found = False
        for i in range(count):
            if buf[i, B_ALIVE] != 0.0 and buf[i, B_FILE] == f:
                buf[i, B_LAST] = start
                found = True
                break
        if found:
            continue
        # Least recently used first (last use, then sequence), never a file in use at start.
        nv = 0
        for i in range(count):
            if buf[i, B_ALIVE] != 0.0:
                v = nv - 1
                while v >= 0:
                    q = int(buf[v, B_VICTIM])
                    if buf[q, B_LAST] > buf[i, B_LAST] or (buf[q, B_LAST] == buf[i, B_LAST]
                                                           and buf[q, B_SEQ] > buf[i, B_SEQ]):
                        buf[v + 1, B_VICTIM] = q
                        v -= 1
                    else:
                        break
                buf[v + 1, B_VICTIM] = i
                nv += 1
        for v in range(nv):
            if used + size <= capacity:
                break
            i = int(buf[v, B_VICTIM])
            if not _in_use(k, buf[i, B_FILE], start, node_f, held, node_i, plan):
                used -= buf[i, B_SIZE]
                buf[i, B_ALIVE] = 0.0
        seq += 1.0
        buf[count, B_FILE] = f
        buf[count, B_SIZE] = size
        buf[count, B_LAST] = start
        buf[count, B_SEQ] = seq
        buf[count, B_ALIVE] = 1.0
        count += 1
        used += size
    out = 0
    for i in range(count):
        if buf[i, B_ALIVE] != 0.0:
            buf[out, B_FILE] = buf[i, B_FILE]
            buf[out, B_SIZE] = buf[i, B_SIZE]
            out += 1
    return out


@inline
def put_file(buf, count, f, size):
    for i in range(count):
        if buf[i, B_FILE] == f:
            buf[i, B_SIZE] = size
            return count
    buf[count, B_FILE] = f
    buf[count, B_SIZE] = size
    return count + 1


@njit
def unused_bytes(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf):
    """Bytes of files in memory on k at t, other than the job's (``fid``, or
    its files when it reads several), that no window over t uses (summed in
    the memory's order, as the Python oracle does)."""
    if model == STRICT:
        return 0.0
    if model == LRU:
        count = _lru_resident(k, t, node_f, held, mem, node_i, plan, buf)
    else:
        # paper: orphans of the memory that survive until t, then files of
        # windows ended by t that survive until t, each file once (first
        # position kept).
        head = node_i[k, HEAD]
        count = 0
        for i in range(int(node_f[k, N_MEM])):
            f = mem[k, i, M_FILE]
            if mem[k, i, M_USERS] == 0 and mem[k, i, M_LOADED] != 0 and _survives_paper(head, plan, f, now, t):
                buf[count, B_FILE] = f
                buf[count, B_SIZE] = mem[k, i, M_SIZE]
                count += 1
        for i in range(int(node_f[k, N_HELD])):
            f = held[k, i, FILE]
            e = held[k, i, END]
            if f >= 0 and e <= t and _survives_paper(head, plan, f, e, t):
                count = put_file(buf, count, f, held[k, i, SIZE])
        j = head
        while j >= 0:
            e = plan[j, END]
            if e <= t:
                r0, r1 = window_rows(j, plan)
                for r in range(r0, r1):
                    f = plan[r, FILE]
                    if f >= 0 and _survives_paper(head, plan, f, e, t):
                        count = put_file(buf, count, f, plan[r, SIZE])
            j = int(plan[j, P_NEXT])
    total = 0.0
    for i in range(count):
        f = buf[i, B_FILE]
        if not _own(fid, f, plan) and not _in_use(k, f, t, node_f, held, node_i, plan):
            total += buf[i, B_SIZE]
    return total


@njit
def ended_window_bytes(k, fid, t, now, node_f, held, mem, node_i, plan, buf):
    """The authors' eviction penalty numerator (R11): bytes of the files other
    than ``fid`` whose *last inserted* window on k ends by t. A file of started
    jobs has one window, to the latest of their ends; a file whose last user
    ended now, one ending now; each job planned in the pass inserts its own
    window (the last one planned replaces the file's end, whichever ends later)."""
    count = 0
    for i in range(int(node_f[k, N_HELD])):
        f = held[k, i, FILE]
        if f < 0:
            continue
        e = held[k, i, END]
        x = _find(buf, count, f)
        if x < 0:
            buf[count, B_FILE] = f
            buf[count, B_SIZE] = held[k, i, SIZE]
            buf[count, B_LAST] = e
            count += 1
        elif e > buf[x, B_LAST]:
            buf[x, B_LAST] = e
    for i in range(int(node_f[k, N_MEM])):
        f = mem[k, i, M_FILE]
        if mem[k, i, M_USERS] == 0 and mem[k, i, M_LAST] == now and _find(buf, count, f) < 0:
            buf[count, B_FILE] = f
            buf[count, B_SIZE] = mem[k, i, M_SIZE]
            buf[count, B_LAST] = now
            count += 1
    j = node_i[k, HEAD]
    while j >= 0:
        r0, r1 = window_rows(j, plan)
        for r in range(r0, r1):
            f = plan[r, FILE]
            if f >= 0:
                x = _find(buf, count, f)
                if x < 0:
                    x = count
                    buf[x, B_FILE] = f
                    buf[x, B_SIZE] = plan[r, SIZE]
                    count += 1
                buf[x, B_LAST] = plan[r, END]
        j = int(plan[j, P_NEXT])
    total = 0.0
    for i in range(count):
        if not _own(fid, buf[i, B_FILE], plan) and buf[i, B_LAST] <= t:
            total += buf[i, B_SIZE]
    return total


@inline
def _find(buf, count, f):
    for i in range(count):
        if buf[i, B_FILE] == f:
            return i
    return -1


@inline
def _has(buf, count, fid):
    for i in range(count):
        if buf[i, B_FILE] == fid:
            return True
    return False


@njit
def _kept(k, fid, since, t, model, lru, node_f, held, mem, node_i, plan, buf):
    """Does the memory model keep ``fid``, unused since ``since``, until t?
    ``lru`` caches the LRU replay at t (-1: not yet done); returns (kept, lru)."""
    if model == PAPER:
        return _survives_paper(node_i[k, HEAD], plan, fid, since, t), lru
    if model == LRU:
        if lru < 0:
            lru = _lru_resident(k, t, node_f, held, mem, node_i, plan, buf)
        return _has(buf, lru, fid), lru
    return since == t, lru


@inline
def file_case(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf):
    """File ``fid`` (>= 0) on k at t: (present, a load in flight, that load's end)."""
    soon = np.nextafter(now, INF)
    present = False
    have_load = False
    load_end = INF
    lru = -1
    for i in range(int(node_f[k, N_HELD])):
        if held[k, i, FILE] != fid or held[k, i, START] > t:
            continue
        avail = held[k, i, AVAIL]
        if held[k, i, LOADING] != 0 and avail < soon:
            avail = soon
        if avail <= t:
            if t < held[k, i, END]:
                present = True
                break
            kept, lru = _kept(k, fid, held[k, i, END], t, model, lru, node_f, held, mem, node_i, plan, buf)
            if kept:
                present = True
                break
        elif not have_load or avail < load_end:
            load_end = avail
            have_load = True
    if not present:
        j = node_i[k, HEAD]
        while j >= 0 and not present:
            if plan[j, START] <= t:
                r0, r1 = window_rows(j, plan)
                for r in range(r0, r1):
                    if plan[r, FILE] != fid:
                        continue
                    avail = plan[r, AVAIL]
                    if avail <= t:
                        if t < plan[r, END]:
                            present = True
                            break
                        kept, lru = _kept(k, fid, plan[r, END], t, model, lru, node_f, held, mem, node_i, plan,
                                          buf)
                        if kept:
                            present = True
                            break
                    elif not have_load or avail < load_end:
                        load_end = avail
                        have_load = True
            j = int(plan[j, P_NEXT])
    if not present and not have_load:
        for i in range(int(node_f[k, N_MEM])):
            if mem[k, i, M_FILE] == fid:
                # strict: an orphan is one whose last user ended at M_LAST (<= now); one still
                # loading (only ``authors`` keeps those) is present then, as the C planning sees it (R10)
                if (mem[k, i, M_LOADED] != 0 or model == STRICT) and mem[k, i, M_USERS] == 0:
                    since = mem[k, i, M_LAST] if model == STRICT else now
                    present, lru = _kept(k, fid, since, t, model, lru, node_f, held, mem, node_i, plan, buf)
                break
    return present, have_load, load_end


@inline
def evaluate(k, fid, size, t, now, model, penalty, node_f, held, mem, node_i, plan, buf):
    """(case, t'_k, t'_k - t_k, penalty bytes) of a job with file ``fid`` >= 0
    starting on k at t; ``penalty=False`` skips the penalty (0.0)."""
    present, have_load, load_end = file_case(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf)
    pen = 0.0
    if penalty:
        pen = unused_bytes(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf)
    if present:
        return HIT, t, 0.0, pen
    if have_load:
        return WAIT, load_end, load_end - t, pen
    if node_f[k, BACKBONE] < INF:       # load_model "shared"
        end = shared_load_end(k, t, size, now, node_f, held, node_i, plan)
        return MISS, end, end - t, pen
    overhead = size / node_f[k, BW]
    return MISS, t + overhead, overhead, pen


@njit
def evaluate_files(k, fid, t, now, model, penalty, node_f, held, mem, node_i, plan, buf):
    """(case, t'_k, t'_k - t_k, penalty bytes) of the job of several files
    whose file id is ``fid`` (``GROUP - slot``) starting on k at t: each file
    present, in flight or missing, the misses one load of their summed size,
    t'_k when its last file is there (semantics note, "Shared storage", 2);
    the job's case is a miss if it loads anything, else a wait if it waits,
    else a hit. Its file rows get each file's case and when it is there on
    k at t (``P_NODE`` and ``START`` say for which node and instant: the
    planner places the job with the rows of the node it chose)."""
    slot = int(GROUP - fid)
    x0 = int(plan[slot, P_X0])
    x1 = x0 + int(plan[slot, P_XN])
    missing = 0.0
    t_file = t
    for x in range(x0, x1):
        present, have_load, load_end = file_case(k, plan[x, FILE], t, now, model, node_f, held, mem, node_i, plan,
                                             buf)
        if present:
            plan[x, P_CASE] = HIT
            plan[x, AVAIL] = t
        elif have_load:
            plan[x, P_CASE] = WAIT
            plan[x, AVAIL] = load_end
            if load_end > t_file:
                t_file = load_end
        else:
            plan[x, P_CASE] = MISS
            missing += plan[x, SIZE]
        plan[x, START] = t
        plan[x, P_NODE] = k
    case = HIT
    overhead = t_file - t
    if missing != 0.0:
        case = MISS
        if node_f[k, BACKBONE] < INF:       # load_model "shared"
            miss_end = shared_load_end(k, t, missing, now, node_f, held, node_i, plan)
        else:
            miss_end = t + missing / node_f[k, BW]
        for x in range(x0, x1):
            if plan[x, P_CASE] == MISS:
                plan[x, AVAIL] = miss_end
        if miss_end > t_file:
            t_file = miss_end
            # as for one file, a load's overhead is exactly its duration
            overhead = missing / node_f[k, BW] if node_f[k, BACKBONE] == INF else t_file - t
        else:
            overhead = t_file - t
    elif t_file > t:
        case = WAIT
    pen = 0.0
    if penalty:
        pen = unused_bytes(k, fid, t, now, model, node_f, held, mem, node_i, plan, buf)
    return case, t_file, overhead, pen


@inline
def _load_end(r, plan):
    """The end of the load from Lustre of the job planned in row r, a miss (its misses' one load)."""
    if plan[r, FILE] <= GROUP:
        x0 = int(plan[r, P_X0])
        for x in range(x0, x0 + int(plan[r, P_XN])):
            if plan[x, P_CASE] == MISS:
                return plan[x, AVAIL]
    return plan[r, AVAIL]


@njit
def shared_load_end(k, t, size, now, node_f, held, node_i, plan):
    """When a load of ``size`` bytes on k from t ends under ``load_model: "shared"``
    (``batloc.locality.backbone.load_end``, the model's reference): at its share
    of the backbone beside the loads from Lustre in flight (their rows, to their
    projected ends) and the misses planned before it in the pass (from scratch:
    the chains hold exactly those)."""
    cap = node_f[k, BW]
    backbone = node_f[k, BACKBONE]
    if size <= 0.0:
        return t
    n_nodes = node_f.shape[0]
    count = 0
    for j in range(n_nodes):
        for i in range(int(node_f[j, N_HELD])):
            if held[j, i, LOADING] == OWN_LOAD:
                count += 1
        r = node_i[j, HEAD]
        while r >= 0:
            if plan[r, P_CASE] == MISS:
                count += 1
            r = int(plan[r, P_NEXT])
    starts = np.empty(count)
    ends = np.empty(count)
    caps = np.empty(count)
    c = 0
    for j in range(n_nodes):
        for i in range(int(node_f[j, N_HELD])):
            if held[j, i, LOADING] == OWN_LOAD:
                starts[c], ends[c], caps[c] = now, held[j, i, AVAIL], node_f[j, BW]
                c += 1
        r = node_i[j, HEAD]
        while r >= 0:
            if plan[r, P_CASE] == MISS:
                starts[c], ends[c], caps[c] = plan[r, START], _load_end(r, plan), node_f[j, BW]
                c += 1
            r = int(plan[r, P_NEXT])
    # the breakpoints after t: starts of later loads, ends of loads that end after t
    active = 0
    load = 0.0
    times = np.empty(2 * count)
    nt = 0
    for x in range(count):
        s, e = starts[x], ends[x]
        if e <= t or e <= s:
            continue
        if s <= t:
            active += 1
            load += caps[x]
        else:
            times[nt] = s
            nt += 1
        times[nt] = e
        nt += 1
    times = np.sort(times[:nt])
    done = 0.0
    tau = t
    at_cap = True
    i = 0
    while True:
        r = min(cap, max(backbone / (active + 1), backbone - load))
        at_cap = at_cap and r == cap
        nxt = times[i] if i < nt else INF
        if done + r * (nxt - tau) >= size:
            if at_cap:
                return t + size / cap
            return tau + (size - done) / r
        done += r * (nxt - tau)
        tau = nxt
        while i < nt and times[i] == nxt:
            i += 1
        # the loads beside it over [nxt, next breakpoint)
        active = 0
        load = 0.0
        for x in range(count):
            s, e = starts[x], ends[x]
            if e <= t or e <= s:
                continue
            if s <= nxt < e:
                active += 1
                load += caps[x]


@njit
def evaluate_per_file(k, fid, size, t, now, node_f, held, mem, node_i, plan):
    """(case, t'_k, t'_k - t_k) of a job with file ``fid`` >= 0 starting on k
    at t, as the authors' simulator plans it (R10, ``file_window:
    "per_file"``): the file's windows on k, each [from, loaded at, to] with
    both ends included, are looked at in order and the first that holds t
    decides (loaded by t: present; else the wait for that load):
    - the started jobs' one window: from now, loaded at their load's end (or
      now), to the latest planned end of every job that used the file since
      its load (the held rows' END, ``ClusterState``), or [now, now, now]
      for a file whose last user ended now;
    - then each window planned in this pass, in placement order.
    No window holds t: a load of size / BW_k."""
    soon = np.nextafter(now, INF)
    users = False
    loaded_at = now
    until = -INF
    for i in range(int(node_f[k, N_HELD])):
        if held[k, i, FILE] != fid:
            continue
        users = True
        avail = held[k, i, AVAIL]
        if held[k, i, LOADING] != 0 and avail < soon:
            avail = soon
        if avail > loaded_at:
            loaded_at = avail
        if held[k, i, END] > until:
            until = held[k, i, END]
    if not users:
        for i in range(int(node_f[k, N_MEM])):
            if mem[k, i, M_FILE] == fid:
                if mem[k, i, M_USERS] == 0 and mem[k, i, M_LAST] == now:
                    users, until = True, now
                break
    if users and t <= until:
        if loaded_at <= t:
            return HIT, t, 0.0
        return WAIT, loaded_at, loaded_at - t
    j = node_i[k, HEAD]
    while j >= 0:
        if plan[j, START] <= t and t <= plan[j, END]:
            r0, r1 = window_rows(j, plan)
            for r in range(r0, r1):
                if plan[r, FILE] == fid:
                    if plan[r, AVAIL] <= t:
                        return HIT, t, 0.0
                    return WAIT, plan[r, AVAIL], plan[r, AVAIL] - t
        j = int(plan[j, P_NEXT])
    overhead = size / node_f[k, BW]
    return MISS, t + overhead, overhead

