"""The walltime rule in the proxy: whether a job's load counts against its walltime.

The paper's rule (the default, ``--walltime-includes-load``): a job's
reservation window starts when it takes its cores and lasts its walltime,
load included, and batloc's own schedulers kill it at that window's end
(``schedulers/base.py``). The engine counts walltime from the execution, after
the load, as Batsim does; so the proxy kills a wrapped scheduler's job itself
at the instant its scheduler executed it + its walltime, through a call it
asks for then. A job still waiting there (for room in memory or for its load)
is executed and killed in the same answer, as batloc's schedulers do. The
wrapped scheduler, which never asked for that kill, is told what Batsim would
tell it at a walltime: a JOB_COMPLETED with COMPLETED_WALLTIME_REACHED.

``--walltime-excludes-load``: no timer; the engine's walltime, from the
execution on, is the only kill (the option ``walltime_includes_load: false``
of batloc's schedulers), so that both groups of a sweep follow one rule.
No sockets here, as in ``relay``.
"""

import heapq
import math

from .own_calls import time_key


class WindowEnds:
    def __init__(self, includes_load=True):
        self.includes_load = includes_load
        self.walltimes = {}     # job id -> walltime (s), submitted jobs with a positive one
        self.ends = []          # heap of (time key of the window's end, job id)
        self.killed = {}        # job id -> its allocation in the wrapped scheduler's ids: killed by the proxy
        self.told = set()       # proxy-killed jobs whose engine JOB_COMPLETED was shown as a walltime end

    def submitted(self, job_id, walltime):
        if (self.includes_load and isinstance(walltime, (int, float)) and not isinstance(walltime, bool)
                and math.isfinite(walltime) and walltime > 0):
            self.walltimes[job_id] = float(walltime)

    def started(self, job_id, now):
        """Its scheduler executed `job_id` now: the end of its window, or None when no timer is due."""
        walltime = self.walltimes.pop(job_id, None)
        if walltime is None:
            return None
        end = now + walltime
        heapq.heappush(self.ends, (time_key(end), job_id))
        return end

    def due(self, now):
        """The jobs whose window ends by now, in the order their windows end."""
        out = []
        while self.ends and self.ends[0][0] <= time_key(now):
            out.append(heapq.heappop(self.ends)[1])
        return out

    def kill(self, job_id, inner_alloc):
        """The proxy ends `job_id` at its window's end (its engine JOB_KILLED becomes a walltime end)."""
        self.killed[job_id] = inner_alloc

    def completed(self, event):
        """An engine JOB_COMPLETED as the wrapped scheduler sees it: a window-end kill as a walltime end.

        Batsim 4.2.1 tells a job really killed twice, JOB_COMPLETED (COMPLETED_KILLED) then JOB_KILLED;
        the wrapped scheduler, which asked for no kill, must hear of its job's end once."""
        data = event.get("data") or {}
        job_id = data.get("job_id")
        if job_id not in self.killed:
            return event
        alloc = self.killed.pop(job_id)
        self.told.add(job_id)
        return dict(event, data=dict(data, job_state="COMPLETED_WALLTIME_REACHED", return_code=-1,
                                     alloc=alloc if alloc else data.get("alloc", "")))

    def shown(self, event, now):
        """An engine JOB_KILLED as the wrapped scheduler sees it: its window-end kills as walltime ends, and
        without those whose end it was already shown (``completed``)."""
        ids = (event.get("data") or {}).get("job_ids") or []
        told = {j for j in ids if j in self.told}
        ours = [j for j in ids if j in self.killed]
        if not told and not ours:
            return [event]
        self.told -= told
        out = [{"timestamp": now, "type": "JOB_COMPLETED", "data": {
            "job_id": j, "job_state": "COMPLETED_WALLTIME_REACHED", "return_code": -1, "kill_reason": "",
            "alloc": self.killed.pop(j)}} for j in ours]
        rest = [j for j in ids if j not in told and j not in ours]
        if rest:
            data = event["data"]
            progress = {j: p for j, p in (data.get("job_progress") or {}).items() if j in rest}
            out.insert(0, dict(event, data=dict(data, job_ids=rest, job_progress=progress)))
        return out
