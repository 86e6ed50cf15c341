"""The study file (experiments/paper-study.yaml): what `batloc study paper` runs.

Keys (durations as 3d, 800s, …; relative paths from the current folder, then
from the batloc checkout, as robin does):
    output-dir       where everything goes (inputs, runs, report, study.md)
    trace            a Standard Workload Format log (.swf or .swf.gz)
    windows          how many evaluation weeks to draw; seed: the draw's seed
    weeks            instead of a draw, the weeks' first days (YYYY-MM-DD, UTC), e.g. to compare
                     contexts or rules on the same weeks
    length, before, after   the evaluated period and its context (paper, Fig. 1)
    sharing, sharing-window the file rule (paper: same user and cores within 800 s)
    nodes            Rackham nodes of the platform: `auto` scales it to the trace's machine
    schedulers       robin's scheduler entries (the ten variants); baseline: fcfs
    options          added to every scheduler's options (e.g. {scheduling_period: 30})
    simulation-timeout, ready-timeout, success-timeout, failure-timeout: robin's
    full             the keys `--full` replaces (the paper's 12 windows)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from batloc.platforms.units import parse_duration
from batloc.reading import excerpt
from batloc.robin import description as rd
from batloc.shipped import package_root, packaged

KEYS = {"output-dir", "trace", "windows", "weeks", "seed", "length", "before", "after", "sharing", "sharing-window",
        "nodes", "schedulers", "options", "baseline", "full", *rd.TIMEOUT_KEYS}
DEFAULT_FILE = "experiments/paper-study.yaml"


class StudyError(ValueError):
    pass


@dataclass
class Study:
    source: Path
    output_dir: Path
    trace: str
    windows: int
    seed: int
    length: float
    before: float
    after: float
    sharing: str
    sharing_window: float
    nodes: int | None                 # None: scaled to the trace's machine
    schedulers: list
    options: dict
    baseline: str
    timeouts: dict = field(default_factory=dict)
    weeks: list | None = None         # first days of the weeks, instead of a draw


def default_file() -> Path:
    return package_root() / DEFAULT_FILE


def load(path=None, full: bool = False, overrides: dict | None = None) -> Study:
    """The study of `path` (default: the committed paper study), `full` section and `overrides` applied."""
    path = packaged(path) if path else default_file()
    try:
        desc = rd.load_description(path)   # robin's reader: same YAML rules, same one-line errors
    except rd.DescriptionError as exc:
        raise StudyError(str(exc)) from None
    unknown = set(desc) - KEYS
    if unknown:
        raise StudyError(f"{path}: unknown keys {sorted(unknown)} (allowed: {sorted(KEYS)})")
    if full:
        extra = desc.get("full") or {}
        if not isinstance(extra, dict) or set(extra) - KEYS:
            raise StudyError(f"{path}: `full` must map study keys to the values --full uses")
        desc = {**desc, **extra}
    desc = {**desc, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    for key in ("output-dir", "trace", "schedulers"):
        if not desc.get(key):
            raise StudyError(f"{path}: {key} is required")
    options = desc.get("options") or {}
    if not isinstance(options, dict):
        raise StudyError(f"{path}: options must be a mapping, e.g. {{scheduling_period: 30}}")
    nodes = desc.get("nodes", "auto")
    if nodes != "auto" and (not isinstance(nodes, int) or nodes < 1):
        raise StudyError(f"{path}: nodes must be `auto` or a positive number, not {excerpt(nodes)}")
    return Study(
        source=path, output_dir=Path(str(desc["output-dir"])).expanduser().resolve(), trace=str(desc["trace"]),
        windows=integer(desc, "windows", 2, path), seed=integer(desc, "seed", 0, path),
        length=duration(desc, "length", "7d", path), before=duration(desc, "before", "3d", path),
        after=duration(desc, "after", "3d", path), sharing=str(desc.get("sharing", "paper")),
        sharing_window=duration(desc, "sharing-window", "800s", path),
        nodes=None if nodes == "auto" else nodes, schedulers=list(desc["schedulers"]), options=dict(options),
        baseline=str(desc.get("baseline", "fcfs")),
        timeouts={k: desc[k] for k in rd.TIMEOUT_KEYS if k in desc}, weeks=_weeks(desc, path))


def _weeks(desc, path) -> list | None:
    weeks = desc.get("weeks")
    if weeks is None:
        return None
    if not isinstance(weeks, list) or not weeks:
        raise StudyError(f"{path}: weeks must be a list of dates (YYYY-MM-DD), e.g. [1997-01-06]")
    return [str(w) for w in weeks]


def integer(desc, key, default, path) -> int:
    value = desc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise StudyError(f"{path}: {key} must be a whole number, not {excerpt(value)}")
    return value


def duration(desc, key, default, path) -> float:
    value = desc.get(key, default)
    try:
        return float(value) if isinstance(value, (int, float)) else parse_duration(str(value))
    except ValueError:
        raise StudyError(f"{path}: {key} must be a duration (e.g. 3d, 800s), not {excerpt(value)}") from None
