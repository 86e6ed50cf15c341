"""One simulation from Python: `run(...)` → `Run`, on robin's single-run machinery.

`run` writes the description robin's single-run form reads (platform,
workload, scheduler, `in-process: true`, the engine's flags as `engine-args`)
and runs it as `robin` does (``robin.sweep.run_alone``: the folder locked,
the run validated, its run.json written), after loading the planning core
once as a sweep does (``robin.kernel``). So a run made here is a robin run:
`batloc report`, `batloc validate` and `Run` read it as any other, and it
gives the numbers robin's would.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

from batloc.analysis import load
from batloc.analysis.checks import RunLeftOut
from batloc.reading import excerpt
from batloc.robin import description as rd
from batloc.robin import kernel
from batloc.robin import runs as robin_runs
from batloc.robin.lock import FolderInUse
from batloc.robin.process import STOP
from batloc.robin.sweep import run_alone
from batloc.robin.validation import summary as violations_line
from batloc.robin.validation import validate_run
from batloc.schedulers.loading import batloc_policy, resolve

from .errors import BatlocError
from .inputs import input_path

# Engine flags that `run` sets itself (its inputs, outputs, scheduler and link)
RESERVED = {"-p", "--platform", "-w", "--workload", "-e", "--export", "-s", "--socket-endpoint", "--in-process",
            "--scheduler-options", "--scheduler-verbosity", "--progress-file", "--recover", "--version", "-h",
            "--help"}
# Over ZeroMQ, the seconds robin waits for the scheduler to listen: loading the planning core from numba's
# cache took 30 s on a loaded 2-core machine (issue 36), where robin's default is batexpe's 10 s
READY_TIMEOUT = 120.0


class Validation:
    """`batloc validate`'s verdict on a run: true when its schedule is possible."""

    def __init__(self, verdict: dict, lines: list[str]):
        self.valid = bool(verdict["valid"])
        self.violations = dict(verdict.get("violations") or {})   # kind → count
        self.lines = list(lines)                                  # one per violation

    def __bool__(self):
        return self.valid

    def __repr__(self):
        return "<valid schedule>" if self.valid else f"<invalid schedule: {violations_line(self.__dict__)}>"


class Run:
    """A run folder made by `run`, robin or a sweep (its run.json, its outputs `out_*.csv`), read lazily."""

    def __init__(self, folder):
        self.folder = Path(folder).expanduser().resolve()
        meta, problem = load.read_run_json(self.folder / "run.json")
        if problem or not meta:
            raise BatlocError(problem or f"{self.folder}: not a run folder (no run.json: give the folder robin, "
                                         "batloc.api.run or a sweep made)")
        self.meta = meta
        prefix = Path(meta.get("export_prefix") or self.folder / robin_runs.PREFIX)
        if not Path(f"{prefix}_jobs.csv").exists():   # a folder moved since: its outputs are beside run.json
            prefix = self.folder / prefix.name
        self.prefix = prefix

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.folder.name)

    @property
    def scheduler(self) -> str:
        return str((self.meta.get("scheduler") or {}).get("name") or self.name)

    @property
    def platform(self) -> Path | None:
        return self._input("platform")

    @property
    def workload(self) -> Path | None:
        return self._input("workload")

    def _input(self, key):
        value = self.meta.get(key)
        return None if not value else Path(value) if Path(value).is_absolute() else self.folder / value

    @cached_property
    def jobs(self):
        """The run's jobs.csv as a DataFrame (its rows, Batsim's columns, and `full_id`: workload!job_id)."""
        return _read(load.read_jobs, f"{self.prefix}_jobs.csv")

    @cached_property
    def jobset(self):
        """An evalys JobSet of the workload's jobs that ran, on the platform's compute cores; its `stretch`
        column is the report's (``batloc.analysis.load.jobset``)."""
        return _read(load.jobset, self.folder)

    @cached_property
    def decisions(self):
        """The scheduler's decision log (one row per job it started: node, cache hit or load, score), or None
        when the scheduler writes none (pybatsim's stock ones)."""
        return _read(load.read_decisions, f"{self.prefix}_decisions.csv")

    @cached_property
    def _analysis(self):
        from batloc.analysis.runs import analyse_run

        files = load.RunFiles(name=self.name, directory=self.folder, prefix=self.prefix, meta=self.meta)
        try:
            return analyse_run(files)[0]
        except RunLeftOut as exc:
            raise BatlocError(str(exc)) from None

    @property
    def per_job(self):
        """The report's per-job table (wait, flow, stretch, load time, cache outcome, node, … one row per
        workload job)."""
        return self._analysis.jobs

    @property
    def summary(self) -> dict:
        """The report's figures for this run (mean_stretch, mean_wait, jobs_killed, bytes_staged, …)."""
        return dict(self._analysis.summary)

    def validate(self) -> Validation:
        """Check the schedule for impossible starts, cores used twice, memory over capacity… (`batloc
        validate`, under the run's memory model)."""
        if self.platform is None or self.workload is None:
            raise BatlocError(f"{self.folder}: its run.json names no platform or workload to validate against")
        return Validation(*validate_run(self.prefix, self.workload, self.platform,
                                        self.meta.get("scheduler") or {}))

    def __repr__(self):
        return f"<batloc run {self.name}: {self.scheduler}, {self.folder}>"


def run(platform, workload, scheduler: str, options: dict | None = None, output_dir=None, progress: bool = True,
        in_process: bool = True, **engine_options) -> Run:
    """Simulate `workload` on `platform` under `scheduler`; the `Run`, once it ended and was validated.

    `platform`, `workload`: a file's path or what `platform(...)` / `workload(...)` return (saved in the run's
    folder). `scheduler`: a name robin takes ("lea", "lea-bf", "fcfs"), a pybatsim stock scheduler
    ("easyBackfill") or a scheduler file; `options`: its options ({"cache": "lru"}). `output_dir`: the run's
    folder (default: a new temporary one). The engine runs the scheduler in its own process (`--in-process`;
    `in_process=False`: over ZeroMQ, as robin does by default); `engine_options` are `batloc-batsim`'s flags
    as keywords (`reply_timeout=60`, `master_host="master_host0"`, `lenient_call_me_later=True`). `progress`:
    the run's simulated time on stderr, one line redrawn (in a terminal or a notebook).

    Raises BatlocError, in one line, when the run cannot start, fails, or its schedule is found impossible
    (its outputs are kept: `Run(folder)` reads them); KeyboardInterrupt when interrupted.
    """
    out = Path(output_dir).expanduser().resolve() if output_dir else Path(tempfile.mkdtemp(prefix="batloc-run-"))
    desc = {"output-dir": str(out), "platform": input_path(platform, out, "platform"),
            "workload": input_path(workload, out, "workload"), "scheduler": scheduler_entry(scheduler, options),
            "in-process": bool(in_process), "engine-args": engine_flags(engine_options)}
    if not in_process:
        desc["ready-timeout"] = READY_TIMEOUT
    try:
        spec = robin_runs.single_run(desc)
    except rd.DescriptionError as exc:
        raise BatlocError(str(exc)) from None
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if progress else (lambda text: None)
    kernel.prepare([spec.meta.get("scheduler") or {}], say, say, STOP)
    try:
        outcome = run_alone(spec, lambda text: None, quiet=not progress)
    except FolderInUse as exc:
        raise BatlocError(str(exc)) from None
    except OSError as exc:
        raise BatlocError(f"cannot write into {out}: {exc.strerror or exc}") from None
    if STOP.is_set():
        raise KeyboardInterrupt(f"run {out} {STOP.reason}")
    if outcome.invalid:
        raise BatlocError(f"run {out}: invalid schedule: {violations_line(outcome.validation)} (outputs kept; "
                          f"every violation in {out / 'log' / 'validate.txt'})")
    if not outcome.success:
        raise BatlocError(f"run {out} failed: {outcome.reason}{_said(outcome)} (logs in {out / 'log'})")
    return Run(out)


def scheduler_entry(scheduler, options=None) -> dict:
    """The scheduler as a robin description names it: a batloc policy with its options, or a pybatsim command
    (a stock name, a file of one's own) with its options as -o."""
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise BatlocError(f"scheduler: a name (lea, lea-bf, easyBackfill) or a file's path, not {scheduler!r}")
    if options is not None and not isinstance(options, Mapping):   # a JSON text failed in dict() with a ValueError
        raise BatlocError(f"scheduler options: a dict such as {{'cache': 'lru'}}, not {type(options).__name__} "
                          f"{excerpt(options)}")
    options = dict(options or {})
    try:
        json.dumps(options)
    except (TypeError, ValueError) as exc:
        raise BatlocError(f"scheduler options must be JSON values: {exc}") from None
    path, _ = resolve(scheduler)
    if path is not None and ("/" in scheduler or "." in scheduler):
        file = Path(scheduler).expanduser()
        if not batloc_policy(scheduler):
            if not file.is_file():
                raise BatlocError(f"scheduler: no file {scheduler}")
            return _command(rd.safe_name(file.stem), shlex.quote(str(file.resolve())), options)
        scheduler = file.stem   # batloc's own policy file, by its name
    elif path is None:
        return _command(rd.safe_name(scheduler), shlex.quote(scheduler), options)
    return {"name": scheduler, "options": options}


def _command(name, scheduler, options):
    command = f"pybatsim {scheduler}" + (f" -o {shlex.quote(json.dumps(options, sort_keys=True))}" if options else "")
    return {"name": name, "command": command}


def engine_flags(options: dict) -> list[str]:
    """`batloc-batsim`'s flags from keywords (`reply_timeout=60` → --reply-timeout 60; True: a flag given; a
    list: a repeated flag), each checked against the engine's own parser."""
    from batloc.engine.cli import parser

    actions = parser()._option_string_actions
    flags = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        action = actions.get(flag)
        if action is None or flag in RESERVED:
            why = "set by batloc.api.run itself" if action is not None else "not an option of batloc-batsim"
            raise BatlocError(f"engine option {key}: {why} (see batloc-batsim --help)")
        if action.nargs == 0:
            if not isinstance(value, bool):
                raise BatlocError(f"engine option {key} is a flag: True or False, not {value!r}")
            flags += [flag] if value else []
            continue
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            flags += [flag, str(item)]
    return flags


def _said(outcome) -> str:
    """The engine's or scheduler's own last line (its one-line error), if its log holds one."""
    for key in ("batsim", "sched"):
        for path in outcome.logs.get(key, ())[1:]:   # (stdout, stderr)
            lines = [line for line in _text(path).splitlines() if line.strip()]
            if lines:
                return f": {lines[-1].strip()}"
    return ""


def _text(path) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _read(reader, path):
    """`reader(path)`, what it cannot read said in one line (the readers' own messages name the file)."""
    try:
        return reader(path)
    except (OSError, ValueError) as exc:
        text = str(exc).strip()
        line = text.splitlines()[0] if text else type(exc).__name__
        raise BatlocError(line if str(path) in line else f"{path}: cannot read: {line}") from None
