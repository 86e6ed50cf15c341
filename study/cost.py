"""What a study's runs cost, from robin's run.json files: CPU, the longest run, and on what.

A run's CPU is its engine's and scheduler's (user + system, robin's
``cpu_seconds``); a run robin kept from an earlier invocation counts with the
CPU it cost then. The time on a cluster of W workers is bounded below by the
longest run's CPU and by the total CPU spread over W (a run's engine and
scheduler share one CPU, so an idle worker runs it in about its CPU time); the
note states that bound for 16 workers beside what this invocation took.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

from batloc.analysis.load import discover_runs

WORKERS = 16


@dataclass
class Cost:
    runs: int
    measured: int               # runs whose run.json gives their CPU
    cpu: float                  # seconds, summed over the measured runs
    longest_name: str
    longest_cpu: float
    longest_wall: float

    def projected(self, workers: int = WORKERS) -> float:
        """The study's wall time on `workers` idle workers, one run each at a time: a run's engine and
        scheduler take turns on one CPU (robin pins them together), so a run lasts about its CPU time,
        and no schedule of the runs beats the longest one nor the total spread evenly."""
        return max(self.longest_cpu, self.cpu / workers)


def measure(output_dir) -> Cost:
    cpu, measured, longest = 0.0, 0, ("", 0.0, 0.0)
    runs = discover_runs(output_dir)
    for run in runs:
        seconds = run.meta.get("cpu_seconds")
        if not isinstance(seconds, dict) or not seconds:
            continue
        total = float(sum(v for v in seconds.values() if isinstance(v, (int, float))))
        cpu += total
        measured += 1
        if total > longest[1]:
            longest = (run.name, total, float(run.meta.get("wall_seconds") or 0.0))
    return Cost(len(runs), measured, cpu, *longest)


def machine() -> str:
    """This machine in a few words: CPU model and count."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{os.cpu_count() or 1} × {model}"


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def describe(cost: Cost, seconds: float, where: str) -> str:
    """The note's paragraph: this invocation's wall time and where it ran, the runs' CPU, the projection."""
    if not cost.measured:
        return (f"This invocation took {seconds / 60:.1f} min ({where}, on {machine()}); no run recorded its CPU "
                "(runs made before robin recorded it).")
    text = (f"This invocation took {_span(seconds)} of wall time ({where}, on {machine()}). "
            f"The {cost.measured} runs with a recorded CPU time used {_span(cost.cpu)} of CPU in all "
            f"(engine + scheduler), {_span(cost.cpu / cost.measured)} a run on average; the longest, "
            f"`{cost.longest_name}`, used {_span(cost.longest_cpu)} of CPU ({_span(cost.longest_wall)} of wall "
            f"time). On {WORKERS} idle workers the study would take at least {_span(cost.projected())} (the longest "
            f"run's CPU, or all of it spread over {WORKERS}).")
    if cost.measured < cost.runs:
        text += f" {cost.runs - cost.measured} run(s) recorded no CPU time and are not counted."
    return text
