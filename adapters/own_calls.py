"""What the staging proxy holds back until a REQUESTED_CALL it asked the engine for itself.

Two things wait for such a call: EXECUTE_JOBs that the wrapped scheduler
dated in the future (checked against the node memories when they are due,
not when sent), and the notices telling the wrapped scheduler that the proxy
rejected one of its executions (a JOB_COMPLETED) or ended, as rejected in the
engine, a job it killed while its file was still loading (a JOB_KILLED): it
can only learn that in a later message, on a call asked 1 µs ahead.

A REQUESTED_CALL says nothing of who asked for it, nor comes exactly at the
date asked: Batsim calls no earlier than that date, but later by its
messages' time, and 10 µs after the request at least (its waiter's least
sleep, ``jobs_execution.cpp``: a call asked for 1 µs ahead comes 10 µs on).
So the proxy keeps every call asked, its own and the wrapped scheduler's
(``theirs``), by date, and each REQUESTED_CALL answers the earliest one due,
as Batsim's waiters end in the order of their dates.
No sockets here, as in ``relay``.
"""

import heapq


NEXT_INSTANT = 1e-6


def time_key(t):
    """A protocol time as the engine prints it (6 decimals, contract §5), to match calls with requests."""
    return round(float(t), 6)


class OwnCalls:
    def __init__(self):
        self.deferred = []      # heap of (time key, seq, EXECUTE_JOB)
        self.asked = []         # heap of (time key, seq, the proxy's own?): calls asked for, not received yet
        self.failures = []      # JOB_COMPLETED / JOB_KILLED for the wrapped scheduler, shown at the next own call
        self._seq = 0

    def _ask(self, t, now):
        self._seq += 1
        heapq.heappush(self.asked, (time_key(t), self._seq, True))
        return {"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": t}}

    def theirs(self, t):
        """The wrapped scheduler asked for a call at `t` (a malformed date is the engine's to refuse)."""
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            self._seq += 1
            heapq.heappush(self.asked, (time_key(t), self._seq, False))

    def defer(self, execute, t, now):
        """Keep an EXECUTE_JOB dated `t` > now; returns the CALL_ME_LATER to send the engine."""
        self._seq += 1
        heapq.heappush(self.deferred, (time_key(t), self._seq, execute))
        return self._ask(t, now)

    def wake(self, t, now):
        """A call at `t` > now for the proxy itself (a window's end: ``window_ends``), which the
        registration's end does not wait for; returns its CALL_ME_LATER."""
        return self._ask(t, now)

    def cancel(self, job_id):
        """Drop the deferred EXECUTE_JOB of `job_id` (its scheduler killed it before its time): True if
        there was one. Its call still comes, and shows nothing."""
        kept = [d for d in self.deferred if (d[2].get("data") or {}).get("job_id") != job_id]
        if len(kept) == len(self.deferred):
            return False
        self.deferred = kept
        heapq.heapify(self.deferred)
        return True

    def notify_later(self, event, now):
        """Show the wrapped scheduler `event` (a JOB_COMPLETED or JOB_KILLED of a job the engine never ran)
        at a call asked for the protocol's next instant, 1 µs on (times have six decimals; Batsim 4.2.1 refuses
        a call for now, and its waiter makes it 10 µs); returns its CALL_ME_LATER."""
        self.failures.append(event)
        return self._ask(time_key(now + NEXT_INSTANT), now)

    def received(self, now):
        """A REQUESTED_CALL at `now`: None if the wrapped scheduler asked for it, else the events to show it."""
        if not self.asked or self.asked[0][0] > time_key(now):
            return None   # none due: not the proxy's
        if not heapq.heappop(self.asked)[2]:
            return None
        shown, self.failures = self.failures, []
        return shown

    def due(self, now):
        """The deferred EXECUTE_JOBs whose time has come, in the order they were dated and sent."""
        due = []
        while self.deferred and self.deferred[0][0] <= time_key(now):
            due.append(heapq.heappop(self.deferred)[2])
        return due

    def pending(self):
        return bool(self.deferred or self.failures)
