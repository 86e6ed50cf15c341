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
order against the node's memory; under ``strict`` it goes with its last user.
"""

import numpy as np

from batloc.schedulers.core.jit import njit

PAPER, STRICT, LRU = range(3)
MODEL_CODES = {"paper": PAPER, "strict": STRICT, "lru": LRU}
NONE, HIT, WAIT, MISS = range(4)
CASE_NAMES = ("none", "hit", "wait", "miss")
INF = np.inf


@njit
def _survives_paper(S, k, fid, since, t):
    """No job planned on k starts in [since, t] with another file."""
    j = S.node_pw_head[k]
    while j >= 0:
        s = S.pw_start[j]
        if since <= s and s <= t and S.pw_file[j] != fid:
            return False
        j = S.pw_next[j]
    return True


@njit
def _in_use(A, S, k, fid, t):
    """Does a window over t (start <= t < end) on k use file ``fid``?"""
    for i in range(A.aw_count[k]):
        if A.aw_file[k, i] == fid and A.aw_start[k, i] <= t and t < A.aw_end[k, i]:
            return True
    j = S.node_pw_head[k]
    while j >= 0:
        if S.pw_file[j] == fid and S.pw_start[j] <= t and t < S.pw_end[j]:
            return True
        j = S.pw_next[j]
    return False


@njit
def _lru_resident(A, S, k, t):
    """Files the LRU memory of k holds at t once planned loads up to t made room:
    (file ids, sizes, count), in the memory's order (new files last)."""
    nf = A.cf_count[k]
    # Planned windows starting by t, with a file, in start order (ties: planning order).
    npw = 0
    j = S.node_pw_head[k]
    while j >= 0:
        npw += 1
        j = S.pw_next[j]
    cap = nf + npw
    files = np.empty(cap, dtype=np.int64)
    sizes = np.empty(cap)
    last = np.empty(cap)
    seqs = np.empty(cap, dtype=np.int64)
    alive = np.zeros(cap, dtype=np.bool_)
    seq, used = 0, 0.0
    for i in range(nf):
        files[i] = A.cf_file[k, i]
        sizes[i] = A.cf_size[k, i]
        last[i] = A.cf_last_use[k, i]
        seqs[i] = A.cf_seq[k, i]
        alive[i] = True
        if seqs[i] > seq:
            seq = seqs[i]
        used += sizes[i]
    count = nf
    order = np.empty(npw, dtype=np.int64)
    no = 0
    j = S.node_pw_head[k]
    while j >= 0:
        if S.pw_start[j] <= t and S.pw_file[j] >= 0:
            x = S.pw_start[j]
            i = no - 1
            while i >= 0 and S.pw_start[order[i]] > x:
                order[i + 1] = order[i]
                i -= 1
            order[i + 1] = j
            no += 1
        j = S.pw_next[j]
    victims = np.empty(cap, dtype=np.int64)
    capacity = A.mem[k]
    for o in range(no):
        w = order[o]
        f, start, size = S.pw_file[w], S.pw_start[w], S.pw_size[w]
        found = False
        for i in range(count):
            if alive[i] and files[i] == f:
                last[i] = start
                found = True
                break
        if found:
            continue
        # Least recently used first (last use, then sequence), never a file in use at start.
        nv = 0
        for i in range(count):
            if alive[i]:
                v = nv - 1
                while v >= 0 and (last[victims[v]] > last[i]
                                  or (last[victims[v]] == last[i] and seqs[victims[v]] > seqs[i])):
                    victims[v + 1] = victims[v]
                    v -= 1
                victims[v + 1] = i
                nv += 1
        for v in range(nv):
            if used + size <= capacity:
                break
            i = victims[v]
            if not _in_use(A, S, k, files[i], start):
                used -= sizes[i]
                alive[i] = False
        seq += 1
        files[count] = f
        sizes[count] = size
        last[count] = start
        seqs[count] = seq
        alive[count] = True
        count += 1
        used += size
    out = 0
    for i in range(count):
        if alive[i]:
            files[out] = files[i]
            sizes[out] = sizes[i]
            out += 1
    return files, sizes, out


@njit
def _unused_bytes(A, S, k, fid, t, now, model):
    """Bytes of files in memory on k at t, other than ``fid``, that no window
    over t uses (summed in the memory's order, as the Python oracle does)."""
    if model == STRICT:
        return 0.0
    if model == LRU:
        files, sizes, count = _lru_resident(A, S, k, t)
        total = 0.0
        for i in range(count):
            f = files[i]
            if f != fid and not _in_use(A, S, k, f, t):
                total += sizes[i]
        return total
    # paper: orphans of the memory that survive until t, then files of windows
    # ended by t that survive until t, each file once (first position kept).
    nf = A.cf_count[k]
    na = A.aw_count[k]
    cap = nf + na
    j = S.node_pw_head[k]
    while j >= 0:
        cap += 1
        j = S.pw_next[j]
    files = np.empty(cap, dtype=np.int64)
    sizes = np.empty(cap)
    count = 0
    for i in range(nf):
        f = A.cf_file[k, i]
        if A.cf_users[k, i] == 0 and A.cf_loaded[k, i] and _survives_paper(S, k, f, now, t):
            files[count] = f
            sizes[count] = A.cf_size[k, i]
            count += 1
    for i in range(na):
        f = A.aw_file[k, i]
        if f >= 0 and A.aw_end[k, i] <= t and _survives_paper(S, k, f, A.aw_end[k, i], t):
            count = _put(files, sizes, count, f, A.aw_size[k, i])
    j = S.node_pw_head[k]
    while j >= 0:
        f = S.pw_file[j]
        if f >= 0 and S.pw_end[j] <= t and _survives_paper(S, k, f, S.pw_end[j], t):
            count = _put(files, sizes, count, f, S.pw_size[j])
        j = S.pw_next[j]
    total = 0.0
    for i in range(count):
        f = files[i]
        if f != fid and not _in_use(A, S, k, f, t):
            total += sizes[i]
    return total


@njit
def _put(files, sizes, count, f, size):
    for i in range(count):
        if files[i] == f:
            sizes[i] = size
            return count
    files[count] = f
    sizes[count] = size
    return count + 1


@njit
def evaluate(A, S, k, fid, size, t, now, model, penalty):
    """(case, t'_k, t'_k - t_k, penalty bytes) of a job with file ``fid`` >= 0
    starting on k at t; ``penalty=False`` skips the penalty (0.0)."""
    soon = np.nextafter(now, INF)
    present = False
    have_load = False
    load_end = INF
    lru_files = np.empty(0, dtype=np.int64)
    lru_count = -1
    for i in range(A.aw_count[k]):
        if A.aw_file[k, i] != fid or A.aw_start[k, i] > t:
            continue
        avail = A.aw_avail[k, i]
        if A.aw_loading[k, i] and avail < soon:
            avail = soon
        if avail <= t:
            if t < A.aw_end[k, i]:
                present = True
                break
            if model == PAPER:
                if _survives_paper(S, k, fid, A.aw_end[k, i], t):
                    present = True
                    break
            elif model == LRU:
                if lru_count < 0:
                    lru_files, _s, lru_count = _lru_resident(A, S, k, t)
                if _has(lru_files, lru_count, fid):
                    present = True
                    break
        elif not have_load or avail < load_end:
            load_end = avail
            have_load = True
    if not present:
        j = S.node_pw_head[k]
        while j >= 0:
            if S.pw_file[j] == fid and S.pw_start[j] <= t:
                avail = S.pw_avail[j]
                if avail <= t:
                    if t < S.pw_end[j]:
                        present = True
                        break
                    if model == PAPER:
                        if _survives_paper(S, k, fid, S.pw_end[j], t):
                            present = True
                            break
                    elif model == LRU:
                        if lru_count < 0:
                            lru_files, _s, lru_count = _lru_resident(A, S, k, t)
                        if _has(lru_files, lru_count, fid):
                            present = True
                            break
                elif not have_load or avail < load_end:
                    load_end = avail
                    have_load = True
            j = S.pw_next[j]
    if not present and not have_load:
        for i in range(A.cf_count[k]):
            if A.cf_file[k, i] == fid:
                if A.cf_loaded[k, i] and A.cf_users[k, i] == 0:
                    if model == PAPER:
                        present = _survives_paper(S, k, fid, now, t)
                    elif model == LRU:
                        if lru_count < 0:
                            lru_files, _s, lru_count = _lru_resident(A, S, k, t)
                        present = _has(lru_files, lru_count, fid)
                break
    pen = _unused_bytes(A, S, k, fid, t, now, model) if penalty else 0.0
    if present:
        return HIT, t, 0.0, pen
    if have_load:
        return WAIT, load_end, load_end - t, pen
    overhead = size / A.bw[k]
    return MISS, t + overhead, overhead, pen


@njit
def _has(files, count, fid):
    for i in range(count):
        if files[i] == fid:
            return True
    return False
