"""From a description to runnable RunSpecs, and running one of them with its run.json.

`run.json`, written beside the outputs, is what `batloc report` reads: the
inputs (paths and contents' sha256), the scheduler and its options, the
commands, the outcome, the validator's verdict (robin.validation) and a hash
of the configuration. A sweep skips a run whose run.json says it succeeded,
valid, with the same configuration and the same input contents
(robin.identity).
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import batloc
from batloc.analysis import run_folder

from batloc.platforms.numbering import role_options
from batloc.processes import free_port, pybatsim_missing

from . import description as rd
from . import identity
from .process import STOP, Outcome, Stop, Timeouts, run_simulation, socket_port, tail
from .validation import summary, validate_run

PREFIX = "out"  # outputs are <run dir>/out_jobs.csv, … as in Batsim's tutorials
PROGRESS = "progress"   # <run dir>/log/progress: the engine's simulated time, for robin's display


@dataclass
class SweepBuild:
    """What a sweep run's two commands are made of; they get their port when the run starts."""
    engine: list
    platform: Path
    workload: Path
    scheduler: rd.SchedulerSpec
    extra: list
    address: str
    verbosity: str
    in_process: bool = False


@dataclass
class RunSpec:
    name: str
    output_dir: Path
    batcmd: str
    schedcmd: str | None
    timeouts: Timeouts
    meta: dict = field(default_factory=dict)
    build: SweepBuild | None = None
    sched_cwd: Path | None = None      # where the scheduler runs (None: robin's own directory, as batexpe)

    @property
    def prefix(self) -> Path:
        return self.output_dir / PREFIX

    @property
    def progress_path(self) -> Path:
        return self.output_dir / "log" / PROGRESS

    def config_hash(self) -> str:
        # ports differ between invocations; everything else defines the run (the validator checks it too)
        return run_folder.config_hash(self.meta)

    def input_files(self) -> dict:
        """{role: [paths]} of the files the run's results depend on (robin.identity)."""
        files = {role: [Path(self.meta[role])] for role in ("platform", "workload") if self.meta.get(role)}
        files["scheduler"] = identity.scheduler_files(self.meta.get("scheduler") or {}, rd.schedulers_dir())
        return files

    def state(self) -> tuple[str, str]:
        """("complete" | "changed" | "todo", what changed): may the sweep skip this run?"""
        meta_path = self.output_dir / "run.json"
        if not meta_path.exists() or not Path(f"{self.prefix}_jobs.csv").exists():
            return "todo", ""
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            return "todo", ""
        if not isinstance(meta, dict) or meta.get("status") != "success" or meta.get("config_hash") != self.config_hash():
            return "todo", ""
        if "inputs" not in meta:
            return "changed", "its run.json records no input contents (written by an older robin)"
        changed = identity.changed(meta["inputs"], identity.inputs(self.input_files()))
        if not changed:
            return "complete", ""
        more = f"; and {len(changed) - 3} more" if len(changed) > 3 else ""
        return "changed", "; ".join(changed[:3]) + more


class PortAllocator:
    """Free TCP ports, distinct within this robin: the OS picks an unused ephemeral port."""

    def __init__(self):
        self._given: set[int] = set()
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            for _ in range(100):
                port = free_port()
                if port not in self._given:
                    self._given.add(port)
                    return port
        raise RuntimeError("no free TCP port found")


PORTS = PortAllocator()


def _abs_dir(path) -> Path:
    return Path(path).expanduser().resolve()


def single_run(desc: dict) -> RunSpec:
    """batexpe's format; without `batcmd`, the embedded engine on `platform` + `workload`."""
    unknown = set(desc) - rd.SINGLE_KEYS
    if unknown:
        raise rd.DescriptionError(f"unknown keys: {sorted(unknown)} (allowed: {sorted(rd.SINGLE_KEYS)})")
    if "output-dir" not in desc:
        raise rd.DescriptionError("output-dir is required")
    out = rd.output_folder(desc["output-dir"])
    timeouts = rd.read_timeouts(desc)
    batcmd = desc.get("batcmd")
    schedcmd = desc.get("schedcmd")
    meta: dict = {}
    sched_cwd = None
    options = None   # the batloc policy's, which may ask for the engine's instant mode
    for key in ("batcmd", "schedcmd"):
        if key in desc and not isinstance(desc[key], str):
            raise rd.DescriptionError(f"{key} must be a string")
    local = None   # the engine's --in-process flags
    if rd.in_process(desc) and (batcmd or "scheduler" not in desc):
        raise rd.DescriptionError("in-process needs the embedded engine and a scheduler (no batcmd, no schedcmd)")
    if rd.instant(desc) and batcmd:
        raise rd.DescriptionError("instant is a mode of the embedded engine: not with batcmd (add --instant to its "
                                  "command if it is batloc-batsim)")
    if "scheduler" in desc:
        if schedcmd:
            raise rd.DescriptionError("give either schedcmd or scheduler, not both")
        spec = rd.parse_scheduler(desc["scheduler"])
        meta["walltime_includes_load"] = rd.walltime_rule(desc, [spec])
        meta["backfilling"] = spec.uses_backfilling
        if rd.in_process(desc):
            local = spec.in_process_args(out / PREFIX, rd.pybatsim_verbosity(desc))
        port = None if local else PORTS.take() if not batcmd else (socket_port(batcmd) or 28000)
        if not local:
            schedcmd = spec.command_line(port, out / PREFIX, rd.scheduler_address(desc), rd.pybatsim_verbosity(desc))
        meta["scheduler"] = spec.to_json()
        options = spec.options
        dynamic = spec.dynamic_jobs
        sched_cwd = out
    else:
        port = _sched_port(schedcmd) if schedcmd else 28000
        dynamic = True  # an unknown scheduler may register jobs; the flag costs nothing otherwise
    if not batcmd:
        if "platform" not in desc or "workload" not in desc:
            raise rd.DescriptionError("without batcmd, platform and workload are required (embedded engine)")
        platform, workload = rd.resolve_input(desc["platform"]), rd.resolve_input(desc["workload"])
        batcmd = rd.embedded_batcmd(rd.engine_command(None), platform, workload, out / PREFIX, port,
                                    dynamic, rd.engine_args(desc, options), rd.scheduler_address(desc),
                                    out / "log" / PROGRESS, local)
        meta["engine"] = "embedded"
        if local:
            meta["in_process"] = True
    meta.update(rd.batcmd_inputs(batcmd))
    meta.setdefault("scheduler", {"name": _sched_name(schedcmd), "command": schedcmd})
    return RunSpec(name=out.name, output_dir=out, batcmd=batcmd, schedcmd=schedcmd, timeouts=timeouts, meta=meta,
                   sched_cwd=sched_cwd)


def _sched_port(schedcmd: str) -> int:
    args = shlex.split(schedcmd)
    for i, a in enumerate(args):
        value = args[i + 1] if a in ("-s", "--socket-endpoint") and i + 1 < len(args) else (
            a.split("=", 1)[1] if a.startswith("--socket-endpoint=") else None)
        if value and value.startswith("tcp://"):
            try:
                return int(value.rsplit(":", 1)[1])
            except ValueError:
                pass
    return 28000


def _sched_name(schedcmd: str | None) -> str:
    """A readable scheduler name from a command: `pybatsim .../lea.py …` → lea, `pybatsim schedFcfs` → schedFcfs."""
    if not schedcmd:
        return "none"
    args = shlex.split(schedcmd)
    for a in args[1:]:
        if not a.startswith("-"):
            return Path(a).stem
    return Path(args[0]).stem


def sweep_runs(desc: dict, timeout_defaults: Timeouts | None = None) -> tuple[Path, list[RunSpec], str]:
    unknown = set(desc) - rd.SWEEP_KEYS
    if unknown:
        raise rd.DescriptionError(f"unknown sweep keys: {sorted(unknown)} (allowed: {sorted(rd.SWEEP_KEYS)})")
    for key in ("output-dir", "platforms", "workloads", "schedulers"):
        if not desc.get(key):
            raise rd.DescriptionError(f"a sweep needs a non-empty {key}")
    out = rd.output_folder(desc["output-dir"])
    platforms = [rd.resolve_input(p) for p in _as_list(desc["platforms"])]
    workloads = [rd.resolve_input(w) for w in _as_list(desc["workloads"])]
    schedulers = [rd.parse_scheduler(s) for s in _as_list(desc["schedulers"])]
    names = [s.name for s in schedulers]
    if len(set(names)) != len(names):
        raise rd.DescriptionError(f"scheduler names must be unique: {names}")
    for s in schedulers:
        if s.against is not None and s.against not in names:
            raise rd.DescriptionError(f"scheduler {s.name}: against {s.against!r} names no scheduler of the sweep "
                                      f"({', '.join(names)})")
    if "baseline" in desc and str(desc["baseline"]) not in names:
        raise rd.DescriptionError(f"baseline {desc['baseline']!r} names no scheduler of the sweep "
                                  f"({', '.join(names)})")
    rule = rd.walltime_rule(desc, schedulers)
    if any(s.policy for s in schedulers) and pybatsim_missing():
        raise rd.DescriptionError(pybatsim_missing())   # once, not once per run
    timeouts = rd.read_timeouts(desc, timeout_defaults)
    engine = rd.engine_command(desc.get("engine"))
    extra = rd.engine_args(desc)
    address = rd.scheduler_address(desc)
    verbosity = rd.pybatsim_verbosity(desc)
    local = rd.in_process(desc)
    if local and not rd.is_embedded(engine):
        raise rd.DescriptionError("in-process needs the embedded engine (engine: embedded)")
    if rd.instant(desc) and not rd.is_embedded(engine):
        raise rd.DescriptionError("instant is a mode of the embedded engine (engine: embedded): real Batsim has "
                                  "only its own messages")
    plat_labels, wl_labels = _labels(platforms), _labels(workloads)
    roles = role_options(extra)   # the engine's -m/-r: the validator and the report read the platforms so too
    runs_dir = out / "runs"
    specs = []
    for (pl, pl_label), (wl, wl_label), sched in itertools.product(
            zip(platforms, plat_labels), zip(workloads, wl_labels), schedulers):
        run_dir = runs_dir / f"{pl_label}__{wl_label}__{sched.name}"
        if run_dir.parent != runs_dir or run_dir.name in (".", ".."):   # labels and names are plain names
            raise rd.DescriptionError(f"run folder {run_dir} would leave {runs_dir}")
        run_extra = rd.engine_args(desc, sched.options) if rd.is_embedded(engine) else extra
        meta = {"platform": str(pl), "workload": str(wl), "scheduler": sched.to_json(),
                "engine": desc.get("engine") or "embedded", "engine_args": run_extra,
                # for the report, outside the configuration hash: which rule, which comparison
                "walltime_includes_load": rule, "backfilling": sched.uses_backfilling,
                "baseline": str(desc.get("baseline", "fcfs"))}
        if roles:
            meta["platform_options"] = roles
        if sched.against:
            meta["against"] = sched.against
        if local and sched.in_process_args(run_dir / PREFIX) is not None:
            meta["in_process"] = True
        # commands get their port when the run starts, see bind_commands()
        specs.append(RunSpec(name=run_dir.name, output_dir=run_dir, batcmd="", schedcmd=None,
                             timeouts=timeouts, meta=meta, sched_cwd=run_dir,
                             build=SweepBuild(engine, pl, wl, sched, run_extra, address, verbosity, local)))
    return out, specs, str(desc.get("baseline", "fcfs"))


def bind_commands(spec: RunSpec) -> None:
    """Give a sweep run its own port and build its two commands."""
    b = spec.build
    local = b.scheduler.in_process_args(spec.prefix, b.verbosity) if b.in_process else None
    port = None if local else PORTS.take()
    spec.schedcmd = None if local else b.scheduler.command_line(port, spec.prefix, b.address, b.verbosity)
    spec.batcmd = rd.embedded_batcmd(b.engine, b.platform, b.workload, spec.prefix, port, b.scheduler.dynamic_jobs,
                                     b.extra, b.address, spec.progress_path, local)


def _as_list(v):
    return v if isinstance(v, list) else [v]


def _labels(paths: list[Path]) -> list[str]:
    stems = [rd.safe_name(p.stem) for p in paths]
    return stems if len(set(stems)) == len(stems) else [f"{s}-{i}" for i, s in enumerate(stems)]


# run.json keys the report reads that do not define the run: a complete run kept by a later sweep
# takes that sweep's values (its `against:` or `baseline:` may have changed), its outputs untouched.
ANALYSIS_KEYS = ("against", "backfilling", "walltime_includes_load", "baseline")


def refresh_analysis_keys(spec: RunSpec) -> None:
    path = spec.output_dir / "run.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    fresh = {k: spec.meta[k] for k in ANALYSIS_KEYS if k in spec.meta}
    if all(meta.get(k) == v for k, v in fresh.items()) and not set(meta) & (set(ANALYSIS_KEYS) - set(fresh)):
        return
    for k in ANALYSIS_KEYS:
        meta.pop(k, None)
    meta.update(fresh)
    path.write_text(json.dumps(meta, indent=2) + "\n")


def execute(spec: RunSpec, log=print, stop: Stop = STOP) -> Outcome:
    """Run it, validate it if it succeeded, and record both in its run.json."""
    spec.output_dir.mkdir(parents=True, exist_ok=True)
    # contents as the run starts: a file edited while it runs differs at the next invocation
    files = spec.input_files()
    inputs = identity.inputs(files)
    before = identity.stamps(files)
    try:
        spec.progress_path.unlink()
    except OSError:
        pass
    outcome = run_simulation(spec.output_dir, spec.batcmd, spec.schedcmd, spec.timeouts, log=log, stop=stop,
                             sched_cwd=spec.sched_cwd)
    edited = identity.changed_while_running(inputs, before, files)
    if outcome.success and edited:
        # validated against the new contents, the outputs of the old read as violations ("job not in workload")
        outcome.success = False
        outcome.reason = (f"its inputs changed while it ran ({', '.join(edited)}): not validated against contents "
                          "it may not have read; the next invocation runs it again")
    if outcome.success:
        outcome.validation = _validate(spec)
        if outcome.validation is not None and not outcome.validation["valid"]:
            outcome.success = False
            outcome.reason = f"invalid schedule: {summary(outcome.validation)} (see {spec.output_dir / 'log' / 'validate.txt'})"
    meta = {
        "name": spec.name, **spec.meta,
        "batcmd": spec.batcmd, "schedcmd": spec.schedcmd,
        "export_prefix": spec.meta.get("export_prefix", str(spec.prefix)),
        "timeouts": spec.timeouts.__dict__, "status": "success" if outcome.success else "failure",
        "reason": outcome.reason, "batsim_returncode": outcome.batsim_returncode,
        "sched_returncode": outcome.sched_returncode,
        "validation": outcome.validation,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(outcome.started_at)),
        "ended_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(outcome.ended_at)),
        "wall_seconds": round(outcome.wall_seconds, 3), "cpu_seconds": outcome.cpu_seconds,
        "config_hash": spec.config_hash(),
        "inputs": inputs, "batloc_version": batloc.__version__,
    }
    (spec.output_dir / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    return outcome


def _validate(spec: RunSpec) -> dict | None:
    """The validator's verdict on a run that ended well; None when its inputs are not known
    (a batexpe batcmd that names no platform, workload or export prefix)."""
    platform, workload = spec.meta.get("platform"), spec.meta.get("workload")
    prefix = spec.meta.get("export_prefix", str(spec.prefix))
    if not (platform and workload and prefix):
        return None
    # relative to robin's directory, where the engine ran; a trailing '/' is part of Batsim's prefix
    prefix = prefix if os.path.isabs(prefix) else os.path.join(os.getcwd(), prefix)
    validation, lines = validate_run(prefix, workload, platform, spec.meta.get("scheduler") or {},
                                     spec.meta.get("platform_options"))
    (spec.output_dir / "log").mkdir(exist_ok=True)
    (spec.output_dir / "log" / "validate.txt").write_text("".join(f"{line}\n" for line in lines))
    return validation


def failure_message(spec: RunSpec, outcome: Outcome, lines: int = 15) -> str:
    parts = [f"robin: run {spec.name} FAILED: {outcome.reason}"]
    for name, paths in outcome.logs.items():
        for path in paths:
            text = tail(path, lines)
            if text:
                parts.append(f"--- tail of {path} ---\n{text}")
    return "\n".join(parts)
