"""Progress over simulated time: a bar on stderr, and/or a one-line file for a supervisor (robin).

The file holds `now horizon jobs_done jobs_total` (seconds, seconds, counts),
rewritten whole (write, then rename) about once a second, so that a reader
never sees half a line. The horizon is the last submission time: simulated
time goes on past it while the last jobs run.
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
        share = min(1.0, now / self.horizon)
        bar = "#" * int(share * 30)
        rate = self.done / max(wall - self.started, 1e-9)
        self.stream.write(
            f"\r[{bar:<30}] t={now:,.0f}s/{self.horizon:,.0f}s  jobs {self.done}/{self.total}  {rate:,.0f} jobs/s ")
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
