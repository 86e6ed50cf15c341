"""One Tabu-search round over the plan, compiled (seed-schedulers.md §3, items 3–5).

Each iteration: a random node holding planned jobs, a random planned job X on
it (xorshift64*, seeded: the same seed gives the same moves); X is skipped if
tabu, else it enters the tabu FIFO; X leaves its list (the jobs after it move
up); over the nodes in random order, X is placed by rule 1; the first node
where the move improves the objective (D > 0) keeps it, else X goes back.

D = w_F ΔF + ΔR + ΔW + ΔS with Δx = (old − new) / max(old, δ) (δ = 1e-13,
1 for S), over the planned jobs: W = mean wait, R = mean response (wait +
walltime), S = max(1, mean of max(1, s + walltime − r) / max(1, walltime)),
and F = Σ_u (1 + mean NUWT − NUWT_u)² over every user seen, NUWT_u = the
user's waits / max(1, Σ cores·time). Sums are kept up to date, so D of a
candidate start is O(1); F = Σ(1 − N_u)² + 2ΣN_u − (ΣN_u)²/U. D is concave in
X's new start, so the starts that could improve form an interval computed
before any node is scanned: a node's scan stops past it, and an iteration
with no improving start scans nothing.
"""

import numpy as np
from numba import njit

from .plan_kernels import evaluate_from, first_fit, insert_at, remove_at, restore

EPS = 1e-12
DELTA = 1e-13
_MULT = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def _next(state):
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * _MULT


@njit(cache=True)
def rand_below(state, n):
    return np.int64((_next(state) >> np.uint64(11)) % np.uint64(n))


@njit(cache=True)
def slowdown_term(s, w, r):
    return max(1.0, s + w - r) / max(1.0, w)


@njit(cache=True)
def fairness(Q, SN, U):
    return Q + 2.0 * SN - SN * SN / U


@njit(cache=True)
def _gain(t, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF):
    d = t - sx
    sw = sum_w + d
    ss = sum_s - slowdown_term(sx, wx, rx) + slowdown_term(t, wx, rx)
    n_old = wsum[ux] / den[ux]
    n_new = (wsum[ux] + d) / den[ux]
    q = Q - (1.0 - n_old) ** 2 + (1.0 - n_new) ** 2
    sn = SN - n_old + n_new
    F = fairness(q, sn, U)
    W = sw / M
    R = (sw + sum_wall) / M
    S = max(1.0, ss / M)
    return (wF * (F0 - F) / max(F0, DELTA) + (R0 - R) / max(R0, DELTA)
            + (W0 - W) / max(W0, DELTA) + (S0 - S) / max(S0, 1.0))


@njit(cache=True)
def tabu_round(base, after, lists, length, node_cores, cores, wall, sub, user, start, slack, pos,
               wsum, den, iterations, tabu_size, wF, now, rng, log_job, log_from, log_to, log_gain):
    """Run `iterations` iterations; returns the number of accepted moves (logged in log_*)."""
    N = length.shape[0]
    U = wsum.shape[0]
    M = 0
    sum_w = 0.0
    sum_wall = 0.0
    sum_s = 0.0
    for k in range(N):
        for i in range(length[k]):
            j = lists[k][i]
            M += 1
            sum_w += start[j] - sub[j]
            sum_wall += wall[j]
            sum_s += slowdown_term(start[j], wall[j], sub[j])
    if M == 0:
        return 0
    Q = 0.0
    SN = 0.0
    for u in range(U):
        n = wsum[u] / den[u]
        Q += (1.0 - n) ** 2
        SN += n
    tabu = np.full(max(tabu_size, 1), -1, dtype=np.int64)
    tabu_next = 0
    perm = np.arange(N)
    old_start = np.empty(M)
    saved_user = np.empty(M, dtype=np.int64)
    saved_wsum = np.empty(M)
    kept_rows = np.empty((M, after.shape[1]))
    kept_start = np.empty(M)
    kept_slack = np.empty(M, dtype=np.int64)
    moves = 0
    for _ in range(iterations):
        k = rand_below(rng, N)
        while length[k] == 0:
            k = rand_below(rng, N)
        x = lists[k][rand_below(rng, length[k])]
        if tabu_size > 0:
            is_tabu = False
            for i in range(tabu_size):
                if tabu[i] == x:
                    is_tabu = True
            if is_tabu:
                continue
            tabu[tabu_next] = x
            tabu_next = (tabu_next + 1) % tabu_size
        W0 = sum_w / M
        R0 = (sum_w + sum_wall) / M
        S0 = max(1.0, sum_s / M)
        F0 = fairness(Q, SN, U)
        keep = (sum_w, sum_s, Q, SN)
        # X leaves its list; the jobs after it move up
        px, sx = pos[x], start[x]
        L = length[k]
        order = lists[k]
        for q in range(px + 1, L):
            old_start[q - px - 1] = start[order[q]]
        remove_at(order, L, px)
        length[k] = L - 1
        evaluated = evaluate_from(base[k], after, node_cores[k], order, L - 1, px, False, cores, wall, start, slack,
                                  pos, now, True, kept_rows, kept_start, kept_slack)
        nsaved = 0
        for q in range(px, L - 1):
            j = order[q]
            d = start[j] - old_start[q - px]
            if d != 0.0:
                sum_w += d
                sum_s += slowdown_term(start[j], wall[j], sub[j]) - slowdown_term(old_start[q - px], wall[j], sub[j])
                u = user[j]
                saved_user[nsaved] = u
                saved_wsum[nsaved] = wsum[u]
                nsaved += 1
                n_old = wsum[u] / den[u]
                wsum[u] += d
                n_new = wsum[u] / den[u]
                Q += (1.0 - n_new) ** 2 - (1.0 - n_old) ** 2
                SN += n_new - n_old
        # the starts X could take that improve the objective: [t_lo, t_hi] (D concave)
        horizon = now
        for kk in range(N):
            last = base[kk][node_cores[kk] - 1] if length[kk] == 0 else after[lists[kk][length[kk] - 1]][node_cores[kk] - 1]
            if last > horizon:
                horizon = last
        wx, rx, ux = wall[x], sub[x], user[x]
        lo, hi = now, horizon
        for _ in range(100):
            if hi - lo <= 1e-9 * max(1.0, abs(hi)):
                break
            m1 = lo + (hi - lo) / 3.0
            m2 = hi - (hi - lo) / 3.0
            g1 = _gain(m1, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF)
            g2 = _gain(m2, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF)
            if g1 < g2:
                lo = m1
            else:
                hi = m2
        best_t = lo
        accepted = False
        if _gain(best_t, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF) > EPS:
            t_hi = horizon
            if _gain(horizon, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF) <= EPS:
                a, b = best_t, horizon
                for _ in range(100):
                    if b - a <= 1e-9 * max(1.0, abs(b)):
                        break
                    mid = 0.5 * (a + b)
                    if _gain(mid, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den,
                             W0, R0, S0, F0, wF) > EPS:
                        a = mid
                    else:
                        b = mid
                t_hi = b
            for i in range(N - 1, 0, -1):
                r = rand_below(rng, i + 1)
                perm[i], perm[r] = perm[r], perm[i]
            for i in range(N):
                k2 = perm[i]
                if node_cores[k2] < cores[x]:
                    continue
                p, t = first_fit(base[k2], after, lists[k2], length[k2], cores[x], wx, start, slack, now, t_hi)
                if p < 0:
                    continue
                g = _gain(t, sx, wx, rx, ux, M, sum_w, sum_wall, sum_s, Q, SN, U, wsum, den, W0, R0, S0, F0, wF)
                if g > EPS:
                    insert_at(lists[k2], length[k2], p, x)
                    length[k2] += 1
                    evaluate_from(base[k2], after, node_cores[k2], lists[k2], length[k2], p, True, cores, wall,
                                  start, slack, pos, now, False, kept_rows, kept_start, kept_slack)
                    d = t - sx
                    sum_w += d
                    sum_s += slowdown_term(t, wx, rx) - slowdown_term(sx, wx, rx)
                    n_old = wsum[ux] / den[ux]
                    wsum[ux] += d
                    n_new = wsum[ux] / den[ux]
                    Q += (1.0 - n_new) ** 2 - (1.0 - n_old) ** 2
                    SN += n_new - n_old
                    log_job[moves] = x
                    log_from[moves] = k
                    log_to[moves] = k2
                    log_gain[moves] = g
                    moves += 1
                    accepted = True
                    break
        if not accepted:
            order = lists[k]
            insert_at(order, length[k], px, x)
            length[k] += 1
            restore(after, node_cores[k], order, length[k], px + 1, evaluated, start, slack, pos,
                    kept_rows, kept_start, kept_slack)
            pos[x] = px
            sum_w, sum_s, Q, SN = keep
            for i in range(nsaved - 1, -1, -1):
                wsum[saved_user[i]] = saved_wsum[i]
    return moves
