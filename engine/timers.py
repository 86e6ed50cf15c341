"""The engine's timing conventions: the entries of its timer heap and their order, the first submission instant.

An entry is (time, kind, seq, job, token, data). At equal times: ends of
phases before walltime kills (a delay phase that would end at or after its
job's walltime is not scheduled at all: Batsim 4.2.1 kills such a job at its
walltime), then requested calls, then deferred decisions; `seq` keeps the
order of insertion among the rest, so runs are deterministic.

The heap times the instant mode; the timed mode (``mailbox``) runs on SimGrid's
own clock arithmetic instead (``l07_clock``).
"""

INF = float("inf")
PHASE_END, WALLTIME, CALL, DEFERRED = 0, 1, 2, 3
# Jobs submitted at t = 0 are announced at the protocol's first instant after 0
# (its clock has six decimals): pybatsim 3.2.1's stock schedulers assert that an
# allocation starts at t > 0, and Batsim 4.2 too delivers them just after 0
# (contract §4b). Their subtime, in jobs.csv and JOB_SUBMITTED, stays 0.
FIRST_SUBMISSION = 1e-6
# The latest simulated time (2^32 s, about 136 years): up to it a double still
# tells apart two times one microsecond apart, the resolution every output and
# message prints (at 1e300 s adding a 5 s delay changes nothing). Input times
# beyond it are refused, and a run whose clock would pass it stops (contract §4).
HORIZON = 2.0 ** 32
