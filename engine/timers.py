"""The kinds of entries in the engine's timer heap, and their order at equal times.

An entry is (time, kind, seq, job, token, data). At equal times: ends of
phases before walltime kills (a job that ends exactly at its walltime
succeeded), then requested calls, then deferred decisions; `seq` keeps the
order of insertion among the rest, so runs are deterministic.
"""

INF = float("inf")
PHASE_END, WALLTIME, CALL, DEFERRED = 0, 1, 2, 3
