"""What the staging proxy holds back until a REQUESTED_CALL it asked the engine for itself.

Two things wait for such a call: EXECUTE_JOBs that the wrapped scheduler
dated in the future (checked against the node memories when they are due,
not when sent), and the notices telling the wrapped scheduler that the proxy
rejected one of its executions (a JOB_COMPLETED) or ended, as rejected in the
engine, a job it killed while its file was still loading (a JOB_KILLED): it
can only learn that in a later message, 1 µs later. The proxy's calls are counted per instant, so that a call
the wrapped scheduler asked for at the same instant still reaches it.
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
        self.asked = {}         # time key -> calls asked for and not received yet
        self.failures = []      # JOB_COMPLETED / JOB_KILLED for the wrapped scheduler, shown at the next own call
        self._seq = 0

    def _ask(self, t, now):
        self.asked[time_key(t)] = self.asked.get(time_key(t), 0) + 1
        return {"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": t}}

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
        at the protocol's next instant, 1 µs on (times have six decimals; Batsim 4.2.1 refuses a call for
        now); returns its CALL_ME_LATER."""
        self.failures.append(event)
        return self._ask(time_key(now + NEXT_INSTANT), now)

    def received(self, now):
        """A REQUESTED_CALL at `now`: None if the wrapped scheduler asked for it, else the events to show it."""
        key = time_key(now)
        if not self.asked.get(key):
            return None
        self.asked[key] -= 1
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
