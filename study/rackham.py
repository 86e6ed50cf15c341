"""`batloc study rackham`: the paper's study at the paper's scale, on synthetic Rackham weeks.

Rackham's own logs are not public, so each evaluation week is drawn by the
synthetic generator (``workloads/synth.py``: bursts of one user's jobs that
share a file, Rackham's core mix, files of cores/20 × 128 GB) at a saturating
load, on Rackham itself (486 nodes × 20 cores, 128 GB, 0.1 GB/s): week i is
drawn with seed ``seed + i``, with `before` and `after` of context simulated
but not evaluated (paper, Fig. 1), so that a study names its weeks by its seed
and a week is the same in every study that draws it.

The runs are robin's sweep (resumable: a complete run is kept), spread over a
Dask cluster when asked; the report and ``study.md`` follow as for
``batloc study paper``, with what the study cost: wall time, the runs' CPU
(robin records each run's in run.json), the longest run, and on what.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from batloc.platforms import rackham
from batloc.platforms.generator import PlatformSpec, write as write_platform
from batloc.robin import description as rd
from batloc.shipped import package_root, packaged
from batloc.workloads import pipeline

from .description import StudyError, duration, integer
from .prepare import write_sweep, write_week

KEYS = {"output-dir", "weeks", "seed", "nodes", "load", "jobs-per-file", "length", "before", "after",
        "schedulers", "options", "baseline", "full", *rd.TIMEOUT_KEYS}
DEFAULT_FILE = "experiments/rackham-study.yaml"


@dataclass
class RackhamStudy:
    source: Path
    output_dir: Path
    weeks: int
    seed: int
    nodes: int
    load: float
    jobs_per_file: float
    length: float
    before: float
    after: float
    schedulers: list
    options: dict
    baseline: str
    timeouts: dict = field(default_factory=dict)


def load(path=None, full: bool = False, overrides: dict | None = None) -> RackhamStudy:
    """The study of `path` (default: experiments/rackham-study.yaml), `full` section and `overrides` applied."""
    path = packaged(path) if path else package_root() / DEFAULT_FILE
    try:
        desc = rd.load_description(path)
    except rd.DescriptionError as exc:
        raise StudyError(str(exc)) from None
    unknown = set(desc) - KEYS
    if unknown:
        raise StudyError(f"{path}: unknown keys {sorted(unknown)} (allowed: {sorted(KEYS)})")
    if full:
        desc = {**desc, **(desc.get("full") or {})}
    desc = {**desc, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    for key in ("output-dir", "schedulers"):
        if not desc.get(key):
            raise StudyError(f"{path}: {key} is required")
    study = RackhamStudy(
        source=path, output_dir=Path(str(desc["output-dir"])).expanduser().resolve(),
        weeks=integer(desc, "weeks", 12, path), seed=integer(desc, "seed", 2024, path),
        nodes=integer(desc, "nodes", rackham.NODES, path), load=_positive(desc, "load", 1.2, path),
        jobs_per_file=_positive(desc, "jobs-per-file", 4.0, path),
        length=duration(desc, "length", "7d", path), before=duration(desc, "before", "1d", path),
        after=duration(desc, "after", "1d", path), schedulers=list(desc["schedulers"]),
        options=dict(desc.get("options") or {}), baseline=str(desc.get("baseline", "fcfs")),
        timeouts={k: desc[k] for k in rd.TIMEOUT_KEYS if k in desc})
    if study.weeks < 1 or study.nodes < 1:
        raise StudyError(f"{path}: weeks and nodes must be at least 1")
    if study.length <= 0:
        raise StudyError(f"{path}: length must be a positive duration")
    return study


def _positive(desc, key, default, path) -> float:
    value = desc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise StudyError(f"{path}: {key} must be a positive number, not {value!r}")
    return float(value)


@dataclass
class RackhamPrepared:
    study: RackhamStudy
    platform: Path
    nodes: int
    weeks: list
    sweep: dict
    sweep_file: Path

    def title(self) -> str:
        return f"The paper's study at Rackham's scale: {len(self.weeks)} synthetic week(s) on {self.nodes} nodes"

    def setup_lines(self) -> list[str]:
        s = self.study
        return [f"- workloads: `batloc workload synth` (bursts of one user's jobs sharing a file of cores/20 × "
                f"128 GB, about {s.jobs_per_file:g} jobs a file), offered load {s.load:g}; week i drawn with seed "
                f"{s.seed} + i;",
                f"- platform: Rackham's node (20 cores, 128 GB, 0.1 GB/s FATPIPE link) × {self.nodes} nodes "
                f"(`{self.platform.name}`);",
                f"- windows: {len(self.weeks)} week(s) of {s.length / 86400:g} d, each with {s.before / 86400:g} d "
                f"of context before and {s.after / 86400:g} d after (simulated, not evaluated);"]

    def to_json(self) -> dict:
        s = self.study
        return {"study": "rackham", "platform": str(self.platform), "nodes": self.nodes,
                "cores_per_node": rackham.CORES, "seed": s.seed, "load": s.load, "jobs_per_file": s.jobs_per_file,
                "length": s.length, "before": s.before, "after": s.after, "options": s.options,
                "weeks": [{"label": w.label, "workload": str(w.workload), "jobs": w.jobs, "evaluated": w.evaluated,
                           "offered_load": w.offered_load} for w in self.weeks]}


def _platform(study: RackhamStudy, inputs: Path) -> Path:
    """The shipped rackham.xml at the paper's 486 nodes; else Rackham's node repeated `nodes` times."""
    if study.nodes == rackham.NODES:
        return package_root() / "platforms" / "rackham.xml"
    path = inputs / f"rackham-{study.nodes}n.xml"
    write_platform(PlatformSpec(memory_mix=((study.nodes, rackham.NODE_MEMORY),), cores=rackham.CORES,
                                node_bandwidth=rackham.NODE_BANDWIDTH, sharing="FATPIPE",
                                name=f"rackham-{study.nodes}n", description=f"Rackham's node x {study.nodes}"), path)
    return path


def prepare(study: RackhamStudy, log=print) -> RackhamPrepared:
    made_of = json.dumps({"nodes": study.nodes, "seed": study.seed, "load": study.load,
                          "jobs_per_file": study.jobs_per_file, "length": study.length, "before": study.before,
                          "after": study.after}, sort_keys=True)
    inputs = study.output_dir / "inputs" / hashlib.sha256(made_of.encode()).hexdigest()[:10]
    inputs.mkdir(parents=True, exist_ok=True)
    platform = _platform(study, inputs)
    sizes = pipeline.platform_sizes(platform)
    total = study.before + study.length + study.after
    weeks = []
    for i in range(study.weeks):
        label = f"{i + 1:02d}"
        path = inputs / f"week-{label}.json"
        # drawn again on every invocation (seconds): the same seed writes the same bytes, so robin keeps
        # the runs already made on it (it compares the inputs' digests)
        spec = pipeline.synth_spec(sizes, duration=total, load=study.load, jobs_per_file=study.jobs_per_file,
                                   seed=study.seed + i)
        week = pipeline.cut_window(pipeline.synthesize(spec),
                                   pipeline.Window(1.0 + study.before, study.length, study.before, study.after))
        weeks.append(write_week(week, path, label, study.before, study.nodes, log, f"{i + 1}/{study.weeks}"))

    sweep, sweep_file = write_sweep(study, platform, weeks, "rackham")
    prepared = RackhamPrepared(study=study, platform=platform, nodes=study.nodes, weeks=weeks, sweep=sweep,
                               sweep_file=sweep_file)
    (study.output_dir / "study.json").write_text(json.dumps(prepared.to_json(), indent=1) + "\n")
    return prepared
