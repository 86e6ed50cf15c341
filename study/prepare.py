"""From a study to robin's sweep: the scaled platform, one workload per evaluation week.

The trace is converted once, whole (files and sessions are given over the
whole log, so a group of jobs sharing a file is not cut at a window's edge),
then each week is cut out with its context. The platform is the paper's
Rackham node (20 cores, 128 GB, 0.1 GB/s FATPIPE link to the file system)
repeated to the trace's machine: ceil(MaxProcs / 20) nodes, so that the
machine offers at least the trace's processors, as one core each, and any set
of jobs that ran together on it fits (wider jobs are split per node, as the
paper splits its multi-node jobs).

Inputs go to OUTPUT/inputs/<hash of what made them>/: a study whose inputs
change gets new paths, so robin redoes its runs instead of taking the old
ones as complete.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from batloc.platforms import rackham
from batloc.platforms.generator import PlatformSpec, write as write_platform
from batloc.robin import description as rd
from batloc.workloads import pipeline
from batloc.workloads.errors import WorkloadError
from batloc.workloads.stats import workload_stats

from . import windows
from .description import Study, StudyError


@dataclass
class Week:
    label: str
    start: float          # in the trace's seconds
    workload: Path
    jobs: int
    evaluated: int
    offered_load: float


@dataclass
class Prepared:
    study: Study
    trace: Path
    platform: Path
    nodes: int
    weeks: list
    sweep: dict           # robin's sweep description
    sweep_file: Path

    def title(self) -> str:
        return f"The paper's study on {self.trace.name}: {len(self.weeks)} week(s)"

    def setup_lines(self) -> list[str]:
        s = self.study
        return [f"- trace: `{self.trace}`; files by the `{s.sharing}` rule (same user and core count within "
                f"{s.sharing_window:g} s share a file of cores/20 × 128 GB); user sessions of 5 min;",
                f"- platform: Rackham's node (20 cores, 128 GB, 0.1 GB/s FATPIPE link) × {self.nodes} nodes, "
                f"= ceil(trace's processors / 20) (`{self.platform.name}`);",
                f"- windows: {len(self.weeks)} week(s) drawn with seed {s.seed} among the trace's whole weeks, "
                f"each with {s.before / 86400:g} d of context before and {s.after / 86400:g} d after "
                "(simulated, not evaluated);"]

    def to_json(self) -> dict:
        return {"trace": str(self.trace), "platform": str(self.platform), "nodes": self.nodes,
                "cores_per_node": rackham.CORES, "seed": self.study.seed,
                "length": self.study.length, "before": self.study.before, "after": self.study.after,
                "sharing": self.study.sharing, "sharing_window": self.study.sharing_window,
                "options": self.study.options,
                "weeks": [{"label": w.label, "start": w.start, "workload": str(w.workload), "jobs": w.jobs,
                           "evaluated": w.evaluated, "offered_load": w.offered_load} for w in self.weeks]}


def trace_path(study: Study) -> Path:
    try:
        path = rd.resolve_input(study.trace)
        if not path.is_file():
            raise rd.DescriptionError(str(path))
        return path
    except rd.DescriptionError:
        raise StudyError(f"trace not found: {study.trace} (a Standard Workload Format log, e.g. KTH-SP2 from "
                         "the Parallel Workloads Archive; give its path with --trace)") from None


def machine_nodes(table, trace: Path) -> int:
    """Rackham nodes for the trace's machine: its processors (SWF header MaxProcs, else MaxNodes) / 20, rounded up."""
    header = table.attrs.get("provenance", {}).get("source", {}).get("header", {})
    for key in ("MaxProcs", "MaxNodes"):
        text = str(header.get(key, "")).strip()
        if text.isdigit() and int(text) > 0:
            return math.ceil(int(text) / rackham.CORES)
    raise StudyError(f"{trace}: the header gives neither MaxProcs nor MaxNodes; set `nodes:` in the study file")


def prepare(study: Study, log=print) -> Prepared:
    trace = trace_path(study)
    sizes = pipeline.platform_sizes()   # Rackham's node: cores per node and memory give the file sizes
    try:
        # the paper's file sizes whatever the walltimes: the study is the paper's (docs/reproduction.md counts the
        # jobs their load pushes over the walltime)
        table, _ = pipeline.convert(trace, "swf", sizes, sharing=study.sharing, sharing_window=study.sharing_window,
                                    file_size="paper")
    except (WorkloadError, ValueError, OSError) as exc:
        raise StudyError(f"{trace}: {exc}") from None
    nodes = study.nodes or machine_nodes(table, trace)
    epoch = table.attrs.get("epoch")
    submit = table["submit"]
    first, last = float(submit.min()), float(submit.max())
    try:
        if study.weeks:
            starts = sorted(windows.given(study.weeks, table, first, last, study.before, study.after, study.length))
        else:
            candidates = windows.candidate_weeks(first, last, epoch, study.before, study.after, study.length)
            starts = windows.draw(candidates, study.windows, study.seed)
    except (windows.WindowError, WorkloadError) as exc:
        raise StudyError(f"{trace}: {exc}") from None

    made_of = json.dumps({"trace": str(trace), "size": trace.stat().st_size, "starts": starts, "nodes": nodes,
                          "length": study.length, "before": study.before, "after": study.after,
                          "sharing": study.sharing, "sharing_window": study.sharing_window}, sort_keys=True)
    inputs = study.output_dir / "inputs" / hashlib.sha256(made_of.encode()).hexdigest()[:10]
    inputs.mkdir(parents=True, exist_ok=True)
    platform = inputs / f"rackham-{nodes}n.xml"
    write_platform(PlatformSpec(memory_mix=((nodes, rackham.NODE_MEMORY),), cores=rackham.CORES,
                                node_bandwidth=rackham.NODE_BANDWIDTH, sharing="FATPIPE", name=f"rackham-{nodes}n",
                                description=f"Rackham's node x {nodes}, scaled to {trace.name}"), platform)
    weeks = []
    for start in starts:
        label = windows.label(start, epoch)
        week = pipeline.cut_window(table, pipeline.Window(start, study.length, study.before, study.after))
        weeks.append(write_week(week, inputs / f"week-{label}.json", label, start, nodes, log))

    sweep, sweep_file = write_sweep(study, platform, weeks, "paper")
    prepared = Prepared(study=study, trace=trace, platform=platform, nodes=nodes, weeks=weeks, sweep=sweep,
                        sweep_file=sweep_file)
    (study.output_dir / "study.json").write_text(json.dumps(prepared.to_json(), indent=1) + "\n")
    return prepared


def write_week(week, path: Path, label: str, start: float, nodes: int, log, shown: str | None = None) -> Week:
    """One week's workload written for `nodes` Rackham nodes, its record, and its line on the log."""
    total_cores = nodes * rackham.CORES
    pipeline.write(week, path, total_cores)
    stats = workload_stats(week, total_cores)
    done = Week(label=label, start=start, workload=path, jobs=len(week), evaluated=int(week["evaluated"].sum()),
                offered_load=float(stats.get("offered load", 0)))
    log(f"batloc study: week {shown or label}: {done.jobs} jobs, {done.evaluated} evaluated, "
        f"offered load {done.offered_load:.2f} on {nodes} nodes x {rackham.CORES} cores")
    return done


def write_sweep(study, platform: Path, weeks: list[Week], command: str) -> tuple[dict, Path]:
    """The study's robin sweep (every week x every variant), written as sweep.yaml in its folder."""
    sweep = {"output-dir": str(study.output_dir), "platforms": [str(platform)],
             "workloads": [str(w.workload) for w in weeks], "schedulers": schedulers(study),
             "baseline": study.baseline, **study.timeouts}
    sweep_file = study.output_dir / "sweep.yaml"
    sweep_file.write_text(f"# written by `batloc study {command}`; re-run with robin (--jobs N, or --dask ADDRESS)\n"
                          + yaml.safe_dump(sweep, sort_keys=False))
    return sweep, sweep_file


def schedulers(study: Study) -> list:
    """The study's scheduler entries with its common `options` added to each policy's own."""
    entries = []
    for entry in study.schedulers:
        try:
            spec = rd.parse_scheduler(entry)
        except rd.DescriptionError as exc:
            raise StudyError(f"{study.source}: {exc}") from None
        if spec.policy is None:
            entries.append(spec.to_json())
        else:
            entries.append({"name": spec.name, "policy": spec.policy, "options": {**spec.options, **study.options}})
    return entries
