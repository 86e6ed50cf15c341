"""The evaluation weeks of a study: whole weeks of the trace, drawn at random, as the paper drew 12.

A candidate week starts on a Monday at 00:00 UTC and must fit in the trace with
its context: `before` it and `after` it, jobs are simulated (so that the
platform is in steady state) but not evaluated (paper, Fig. 1). The draw is a
seeded sample without replacement, so a study names its weeks by its seed.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from batloc.workloads import pipeline

WEEK = 7 * 86400.0


class WindowError(ValueError):
    pass


def candidate_weeks(first_submit: float, last_submit: float, epoch: float | None, before: float,
                    after: float, length: float = WEEK) -> list[float]:
    """Starts (in the trace's seconds) of every whole week that fits with its context."""
    if epoch is None:
        # no calendar: weeks counted from the first submission
        origin = first_submit
    else:
        first = datetime.fromtimestamp(epoch + first_submit, tz=timezone.utc)
        monday = (first - timedelta(days=first.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        origin = monday.timestamp() - epoch
    starts = []
    start = origin
    while start + length + after <= last_submit:
        if start - before >= first_submit:
            starts.append(start)
        start += WEEK
    return starts


def draw(candidates: list[float], count: int, seed: int) -> list[float]:
    """`count` of the candidates, drawn with `seed`, in time order."""
    if count < 1:
        raise WindowError(f"windows must be at least 1, not {count}")
    if count > len(candidates):
        raise WindowError(f"the trace has {len(candidates)} whole weeks with their context, "
                          f"fewer than the {count} windows asked for")
    # a prefix of one seeded permutation: the weeks of a smaller study are among those of a larger one
    picked = np.random.default_rng(seed).permutation(len(candidates))[:count]
    return sorted(candidates[i] for i in picked)


def label(start: float, epoch: float | None) -> str:
    """A week's name: its Monday's date, or its offset in days without a calendar."""
    if epoch is None:
        return f"day{start / 86400:.0f}"
    return datetime.fromtimestamp(epoch + start, tz=timezone.utc).strftime("%Y-%m-%d")


def given(dates: list[str], table, first_submit: float, last_submit: float, before: float, after: float,
          length: float = WEEK) -> list[float]:
    """Starts of the weeks named by their first day; each must fit in the trace with its context."""
    starts = []
    for date in dates:
        start = pipeline.start_time(date, table)
        if start - before < first_submit or start + length + after > last_submit:
            raise WindowError(f"week {date} with its context does not fit in the trace")
        starts.append(start)
    return starts
