"""Slurm's duration and date formats, as sacct prints them."""

import re
from datetime import datetime, timezone

UNLIMITED = ("UNLIMITED", "INFINITE", "PARTITION_LIMIT")


_WITH_DAYS = re.compile(r"^(\d+)-(\d+)(?::(\d+)(?::(\d+(?:\.\d+)?))?)?$")  # D-HH[:MM[:SS]]
_CLOCK = re.compile(r"^(?:(?:(\d+):)?(\d+):)?(\d+(?:\.\d+)?)$")  # [[HH:]MM:]SS, or MM alone


def parse_duration(text):
    """Slurm duration → seconds; None for an unlimited limit.

    Accepted, as Slurm writes them: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`,
    `D-HH:MM`, `D-HH:MM:SS`, with optional fractional seconds (`MM:SS.mmm`).
    Raises ValueError otherwise.
    """
    text = text.strip()
    if text.upper() in UNLIMITED:
        return None
    match = _WITH_DAYS.match(text)
    if match:
        days, hours, minutes, seconds = match.groups()
    else:
        match = _CLOCK.match(text)
        if not match:
            raise ValueError(f"not a Slurm duration: {text!r}")
        days, hours, minutes, seconds = None, *match.groups()
        if minutes is None:  # a bare number is minutes in Slurm
            minutes, seconds = seconds, None
    days, hours, minutes = (int(v) if v else 0 for v in (days, hours, minutes))
    seconds = float(seconds) if seconds else 0.0
    if (minutes >= 60 and (hours or days)) or seconds >= 60 or (hours >= 24 and days):
        raise ValueError(f"not a Slurm duration: {text!r}")
    return days * 86400 + hours * 3600 + minutes * 60 + seconds


def parse_date(text):
    """sacct date (`2022-01-03T10:00:00`, local time) → seconds, read as UTC; None if unset.

    sacct prints the cluster's local time without zone; only differences
    between dates matter here, so reading them as UTC is exact except across
    a daylight-saving change.
    """
    text = text.strip()
    if text in ("", "None", "Unknown"):
        return None
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()
