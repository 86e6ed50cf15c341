"""Progress over simulated time: a bar on stderr, and/or a one-line file for a supervisor (robin).

The file holds `now horizon jobs_done jobs_total` (seconds, seconds, counts),
rewritten whole (write, then rename) about once a second, so that a reader
never sees half a line. The horizon is the last submission time: simulated
time goes on past it while the last jobs run, so it is shown as what it is,
and the share done is the share of the workloads' jobs that ended (it never
passes 100 % while the run goes on, as time against the last submission did).
"""

import os
import sys
import time

FILE_PERIOD = 1.0    # seconds between two writes of the progress file
BAR_PERIOD = 0.25    # seconds between two redraws of the bar


class Progress:
    def __init__(self, horizon, total_jobs, stream=sys.stderr, path=None):
        self.horizon = max(horizon, 1e-9)
        self.total = total_jobs
        self.done = 0
        self.stream = stream
        self.path = path
        self.started = time.monotonic()
        self.last_draw = self.last_write = -FILE_PERIOD

    def job_done(self):
        self.done += 1

    def update(self, now, force=False):
        wall = time.monotonic()
        if self.path is not None and (force or wall - self.last_write >= FILE_PERIOD):
            self.last_write = wall
            self._write(now)
        if self.stream is None or (not force and wall - self.last_draw < BAR_PERIOD):
            return
        self.last_draw = wall
        done = min(self.done, self.total)     # jobs a scheduler registers into a workload count too
        bar = "#" * (30 * done // max(1, self.total))
        rate = self.done / max(wall - self.started, 1e-9)
        self.stream.write(
            f"\r[{bar:<30}] jobs {done}/{self.total} ended  t={now:,.0f}s (last submission {self.horizon:,.0f}s)  "
            f"{rate:,.0f} jobs/s ")
        self.stream.flush()

    def _write(self, now):
        tmp = f"{self.path}.tmp"
        try:
            with open(tmp, "w") as f:
                f.write(f"{now:.6f} {self.horizon:.6f} {self.done} {self.total}\n")
            os.replace(tmp, self.path)
        except OSError:
            self.path = None    # progress is a courtesy: a full disk must not stop the simulation

    def close(self, now):
        self.update(now, force=True)
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
