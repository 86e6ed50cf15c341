"""A progress bar over simulated time, on stderr, redrawn at most a few times a second."""

import sys
import time


class Progress:
    def __init__(self, horizon, total_jobs, stream=sys.stderr):
        self.horizon = max(horizon, 1e-9)
        self.total = total_jobs
        self.done = 0
        self.stream = stream
        self.started = time.monotonic()
        self.last_draw = 0.0

    def job_done(self):
        self.done += 1

    def update(self, now, force=False):
        wall = time.monotonic()
        if not force and wall - self.last_draw < 0.25:
            return
        self.last_draw = wall
        share = min(1.0, now / self.horizon)
        bar = "#" * int(share * 30)
        rate = self.done / max(wall - self.started, 1e-9)
        self.stream.write(
            f"\r[{bar:<30}] t={now:,.0f}s/{self.horizon:,.0f}s  jobs {self.done}/{self.total}  {rate:,.0f} jobs/s ")
        self.stream.flush()

    def close(self, now):
        self.update(now, force=True)
        self.stream.write("\n")
        self.stream.flush()
