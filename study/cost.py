"""What a study's runs cost, from robin's run.json files: CPU, the longest run, and on what.

A run's CPU is its engine's and scheduler's (user + system, robin's
``cpu_seconds``); a run robin kept from an earlier invocation counts with the
CPU it cost then. The time on a cluster of W workers is bounded below by the
longest run and by the total CPU spread over W; the note states that bound for
16 workers, the issue's cluster, beside what this invocation took.
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
        """A lower bound of the study's wall time on `workers` workers (one run each at a time)."""
        return max(self.longest_wall, self.cpu / workers)


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


def describe(cost: Cost, seconds: float, where: str) -> str:
    """The note's paragraph: this invocation's wall time and where it ran, the runs' CPU, the projection."""
    if not cost.measured:
        return (f"This invocation took {seconds / 60:.1f} min ({where}, on {machine()}); no run recorded its CPU "
                "(runs made before robin recorded it).")
    hours = cost.cpu / 3600
    text = (f"This invocation took {seconds / 60:.1f} min of wall time ({where}, on {machine()}). "
            f"The {cost.measured} runs with a recorded CPU time used {hours:.2f} h of CPU in all "
            f"(engine + scheduler), {cost.cpu / cost.measured / 60:.1f} min a run on average; the longest, "
            f"`{cost.longest_name}`, used {cost.longest_cpu / 60:.1f} min of CPU ({cost.longest_wall / 60:.1f} min "
            f"of wall time). On {WORKERS} workers the study cannot take less than "
            f"{cost.projected() / 60:.0f} min (the longest run, or the CPU spread over {WORKERS}).")
    if cost.measured < cost.runs:
        text += f" {cost.runs - cost.measured} run(s) recorded no CPU time and are not counted."
    return text
