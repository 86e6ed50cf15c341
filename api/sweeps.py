"""A comparison from Python: `sweep(...)` → `Sweep`, robin's sweep and report.

`sweep` writes the sweep description `robin` reads (platforms × workloads ×
schedulers, a baseline, options) and runs it with robin's own machinery
(``robin.sweep.execute_sweep``: runs complete for the same inputs are kept,
every run validated, then `batloc report`); `Sweep` reads what it wrote.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from batloc.robin import description as rd
from batloc.robin import runs as robin_runs
from batloc.robin.process import STOP
from batloc.robin.sweep import SweepError, execute_sweep

from .errors import BatlocError
from .inputs import input_path
from .runs import Run, scheduler_entry

# robin's sweep keys (robin.description) that `sweep` takes as keywords, `_` for `-`
DESCRIPTION_KEYS = ("walltime-includes-load", "engine", "engine-args", "in-process", "pybatsim-verbosity",
                    "scheduler-address", *rd.TIMEOUT_KEYS)
# Over ZeroMQ, the seconds robin waits for a scheduler to listen (batloc.api.runs.READY_TIMEOUT)
READY_TIMEOUT = 120.0


class Sweep:
    """What a sweep wrote in its folder: the report's summary table, its figures, the runs."""

    def __init__(self, folder, run_folders=None, failed=()):
        self.folder = Path(folder).expanduser().resolve()
        folders = run_folders if run_folders is not None else sorted(
            p.parent for p in (self.folder / "runs").glob("*/run.json"))
        self.runs = [Run(f) for f in folders if (Path(f) / "run.json").exists() and Path(f).name not in failed]
        self.failed = sorted(failed)     # names of the runs that failed or were found invalid (robin said why)

    @property
    def report(self) -> Path:
        """report.html (open it in a browser)."""
        return self.folder / "report.html"

    @property
    def summary(self) -> pd.DataFrame:
        """The report's summary table, one row per run (summary.csv: seconds, bytes)."""
        path = self.folder / "summary.csv"
        if not path.exists():
            raise BatlocError(f"{self.folder}: no summary.csv (the report was not written)")
        return pd.read_csv(path)

    @property
    def figures(self) -> list[Path]:
        """The report's figures (PNG; an SVG of each beside it)."""
        return sorted((self.folder / "figures").glob("*.png"))

    def __repr__(self):
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return f"<batloc sweep {self.folder}: {len(self.runs)} runs{failed}>"


def sweep(platforms, workloads, schedulers, output_dir, baseline: str | None = None, jobs: int = 1,
          progress: bool = True, force: bool = False, report: bool = True, **options) -> Sweep:
    """Every platform × workload × scheduler, then the report comparing them; the `Sweep`.

    `platforms`, `workloads`: one or a list of files' paths or `platform(...)` / `workload(...)` objects
    (saved in OUTPUT_DIR/inputs). `schedulers`: names as `run` takes them ("fcfs", "lea-bf", "easyBackfill",
    a file), or (name, options) pairs, or robin's mappings ({"name": "lea-lru", "policy": "lea",
    "options": {"cache": "lru"}}). `baseline`: the scheduler the report compares the others with (default:
    fcfs). `jobs`: runs at once. `force`: redo runs already complete (a sweep run again skips them).
    `options`: robin's sweep keys as keywords (`walltime_includes_load=False`, `ready_timeout=120`,
    `engine="batsim"`, `in_process=False`, `engine_args=[...]`, `simulation_timeout=...`); the engine runs
    the schedulers in process unless told otherwise.

    Raises BatlocError in one line when the sweep cannot run or no report could be written; runs that failed
    are named in `failed` (robin said why on stderr), the report compares the others.
    """
    out = Path(output_dir).expanduser().resolve()
    inputs = out / "inputs"
    desc = {"output-dir": str(out),
            "platforms": [input_path(p, inputs, "platform") for p in _listed(platforms)],
            "workloads": [input_path(w, inputs, "workload") for w in _listed(workloads)],
            "schedulers": [_entry(s) for s in _listed(_names(schedulers))]}
    if baseline is not None:
        desc["baseline"] = baseline
    for key, value in options.items():
        name = key.replace("_", "-")
        if name not in DESCRIPTION_KEYS:
            raise BatlocError(f"sweep: unknown option {key} (robin's: "
                              f"{', '.join(k.replace('-', '_') for k in DESCRIPTION_KEYS)})")
        desc[name] = value
    embedded = rd.engine_command(desc.get("engine")) == rd.engine_command(None)
    desc.setdefault("in-process", embedded)
    if not desc["in-process"]:
        desc.setdefault("ready-timeout", READY_TIMEOUT)
    say = (lambda text: print(text, flush=True)) if progress else (lambda text: None)
    try:
        specs = robin_runs.sweep_runs(desc)[1]   # refused here in one line, before anything is written
        status = execute_sweep(desc, jobs, force, report, say, quiet=not progress)
    except (rd.DescriptionError, SweepError) as exc:
        raise BatlocError(f"sweep: {exc}") from None
    if STOP.is_set():
        raise KeyboardInterrupt(f"sweep {out} {STOP.reason}")
    failed = [s.name for s in specs if _status(s.output_dir) != "success"]
    if status != 0 and not failed:
        raise BatlocError(f"sweep {out}: no report written (robin said why above)")
    if report and not (out / "summary.csv").exists():
        raise BatlocError(f"sweep {out}: no report written: every run failed ({', '.join(failed)})")
    return Sweep(out, [s.output_dir for s in specs], failed)


def _listed(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _names(schedulers):
    """"fcfs,lea" as robin's --schedulers reads it: no scheduler's name holds a comma (robin.description)."""
    if isinstance(schedulers, str) and "," in schedulers:
        return [name.strip() for name in schedulers.split(",") if name.strip()]
    return schedulers


def _entry(scheduler):
    if isinstance(scheduler, dict):
        return scheduler
    if isinstance(scheduler, (list, tuple)) and len(scheduler) == 2:
        return scheduler_entry(*scheduler)
    return scheduler_entry(scheduler)


def _status(folder: Path) -> str | None:
    from batloc.analysis.load import read_run_json

    meta, _ = read_run_json(folder / "run.json")
    return meta.get("status")

