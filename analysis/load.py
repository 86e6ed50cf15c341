"""Read one run's outputs and its inputs into pandas DataFrames.

First stage of the analysis pipeline (outputs + workload annotations →
per-job table → per-session/per-run tables → figures → report). Everything
here only reads files; no metric is computed.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from batloc.locality.workflow import DEPENDENT_KEY, job_files
from batloc.outputs import ENCODING, JOBS_COLUMNS
from batloc.platforms.reader import read_resources
from batloc.reading import DESCRIPTION_BYTES, WORKLOAD_BYTES, read_bytes
from batloc.workloads.errors import WorkloadError
from batloc.workloads.source import read_json

from . import run_folder

JOB_COLUMNS = list(JOBS_COLUMNS)

_JOB_DTYPES = {
    "job_id": str,
    "workload_name": str,
    "profile": str,
    "final_state": str,
    "allocated_resources": str,
    "metadata": str,
}
_TIME_COLUMNS = ["submission_time", "starting_time", "execution_time", "finish_time"]


def read_jobs(path) -> pd.DataFrame:
    """`<prefix>_jobs.csv` (Batsim 4 columns, contract §5) with a `full_id` column.

    Rejected jobs have empty time fields: they stay, as NaN, so callers can
    count them. Quoted fields (``batloc.outputs``) read back as written: pandas
    reads that quoting by default.
    """
    df = pd.read_csv(path, dtype=_JOB_DTYPES, keep_default_na=False, na_values={c: [""] for c in _TIME_COLUMNS},
                     encoding=ENCODING)
    missing = [c for c in JOB_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a Batsim jobs.csv (no column {', '.join(missing)})")
    for col in _TIME_COLUMNS + ["requested_number_of_resources"]:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df["full_id"] = df["workload_name"] + "!" + df["job_id"]
    return df


def read_decisions(path) -> pd.DataFrame | None:
    """`<prefix>_decisions.csv` (contract §6), one row per job, or None if absent.

    A scheduler may log a job twice if it re-plans it; the last row is the
    decision that actually started it.
    """
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(
        path,
        dtype={"job_id": str, "policy": str, "node": str, "alloc": str, "input_file": str, "cache": str, "staging_job": str},
        keep_default_na=False,
        na_values={"time": [""], "planned_start": [""], "score": [""], "input_size": [""], "cores": [""]},
        encoding=ENCODING,
    )
    df["time"] = pd.to_numeric(df["time"], errors="coerce")
    # The staging proxy's `full` rows (contract §6): the job held its cores from then, waiting for room
    # in a node's memory before its own row; that wait is file wait (metrics).
    full = df["cache"] == "full"
    since = df[full].groupby("job_id")["time"].min()
    # a job that never got the room (killed at its window's end while waiting) keeps one `full` row, without
    # a claim time: it held its cores from its first `full` row until its kill
    never = df[full & ~df["job_id"].isin(df.loc[~full, "job_id"])].drop_duplicates("job_id", keep="last")
    df = pd.concat([df[~full], never.assign(time=float("nan"))]).drop_duplicates("job_id", keep="last")
    df = df.reset_index(drop=True)
    df["held_since"] = df["job_id"].map(since)
    return df


@dataclass
class Workload:
    jobs: pd.DataFrame  # one row per job: job_id (str), subtime, res, walltime, user, input_file, input_size, evaluated[, session]
    provenance: dict = field(default_factory=dict)
    nb_res: int | None = None
    profiles: dict = field(default_factory=dict)  # profile name → Batsim profile object


def read_workload(path) -> Workload:
    """Batsim JSON workload with batloc's custom job fields (contract §2, §6), read within the workload's bound
    (``batloc.reading``); ValueError names a file refused or unreadable."""
    try:
        data = read_json(path, WORKLOAD_BYTES, "workload")
    except WorkloadError as exc:
        raise ValueError(str(exc)) from None
    records = data.get("jobs", [])
    dependent = data.get(DEPENDENT_KEY) or []
    if dependent or any("inputs" in j for j in records):
        # workflows (contract §2b): dependent jobs are workload jobs too; a job's input_size is
        # the bytes of every file it reads (its ReferenceFlow loads them all)
        records = [_with_files(j) for j in records + dependent]
    jobs = pd.DataFrame.from_records(records)
    if jobs.empty:
        jobs = pd.DataFrame(columns=["id", "subtime", "res"])
    jobs = jobs.rename(columns={"id": "job_id"})
    jobs["job_id"] = jobs["job_id"].astype(str)
    defaults = {"user": "", "input_file": "", "input_size": 0.0, "evaluated": True, "walltime": -1.0}
    for col, default in defaults.items():
        if col not in jobs.columns:
            jobs[col] = default
    jobs["input_size"] = pd.to_numeric(jobs["input_size"], errors="coerce").fillna(0.0)
    jobs["evaluated"] = jobs["evaluated"].fillna(True).astype(bool)
    jobs["user"] = jobs["user"].fillna("").astype(str)
    return Workload(jobs=jobs, provenance=data.get("batloc", {}) or {}, nb_res=data.get("nb_res"),
                    profiles=data.get("profiles") or {})


def _with_files(job):
    if "inputs" not in job:
        return job
    files = job_files(job, f"job {job.get('id')}")
    return {**job, "input_file": ";".join(f for f, _ in files), "input_size": sum(s for _, s in files)}


def read_platform_bandwidths(path, roles=None) -> dict[str, float]:
    """Node name → bandwidth (bytes/s) from the `bandwidth` property of `<node>_mem` hosts (contract §6).
    `roles`: the run's -m/-r as `read_resources`' keywords (run_folder.platform_roles), here and below."""
    bandwidths = {}
    for res in read_resources(path, **(roles or {})).storage:
        props = res["properties"]
        if "bandwidth" in props and "node" in props:
            bandwidths[props["node"]] = float(props["bandwidth"])
    return bandwidths


def read_platform_cores(path, roles=None) -> int:
    """Number of compute cores: the platform's compute resources, as Batsim counts them (contract §1)."""
    return len(read_resources(path, **(roles or {})).compute)


def reference_bandwidth(platform=None, bandwidth=None, roles=None) -> float:
    """The bandwidth used in every job's ReferenceFlow on this platform.

    ReferenceFlow is the flow on an empty cluster, so it depends on the job
    and the platform, never on the schedule; on an empty cluster a job would
    get the fastest link, hence the maximum (equal to every node's on the
    homogeneous Rackham platforms). An explicit `bandwidth` wins.
    """
    if bandwidth is not None:
        return float(bandwidth)
    if platform is not None:
        bws = read_platform_bandwidths(platform, roles)
        if bws:
            return max(bws.values())
    return math.inf  # no information: the load term drops out of the reference


class NoPlatform(ValueError):
    """A stretch asked of a run whose jobs read files, with no platform (nor bandwidth) to time their loads."""


def require_platform(workload: Workload, jobs: pd.DataFrame, platform=None, bandwidth=None, run="the run") -> None:
    """NoPlatform when jobs of the run (`jobs`: its jobs.csv) that ended read files and neither the platform nor
    a bandwidth is known: the stretch would leave their loads out of the reference flows (`reference_bandwidth`
    is then infinite), and a job killed while loading, after 0 s of execution, would have an infinite one. A
    run of `batloc-batsim` has no run.json to name its platform."""
    if platform is not None or bandwidth is not None:
        return
    ended = jobs.loc[jobs["finish_time"].notna(), "job_id"]
    if (workload.jobs.loc[workload.jobs["job_id"].isin(ended), "input_size"] > 0).any():
        raise NoPlatform(f"{run}: its jobs read files, and the stretch counts their loads at the platform's "
                         "bandwidth: no platform is known (none given, none in a robin run.json beside it); give "
                         "the platform")


@dataclass
class RunFiles:
    """Where one run's files are, and what robin recorded about it."""

    name: str
    directory: Path
    prefix: Path
    meta: dict
    problem: str | None = None  # why its run.json cannot be used (one line naming it), None if fine

    @property
    def jobs_csv(self) -> Path:
        return Path(f"{self.prefix}_jobs.csv")

    @property
    def decisions_csv(self) -> Path:
        return Path(f"{self.prefix}_decisions.csv")

    @property
    def predictions_csv(self) -> Path:
        return Path(f"{self.prefix}_predictions.csv")

    def input_path(self, key: str) -> Path | None:
        # robin records absolute paths; a hand-written run.json may be relative to its run
        return run_folder.input_path(self.directory, self.meta, key)

    @property
    def scheduler(self) -> str:
        sched = self.meta.get("scheduler") or {}
        return str(sched.get("name") or self.name)

    @property
    def policy(self) -> str | None:
        """The batloc policy robin ran (run.json), None for a scheduler given as a command."""
        return (self.meta.get("scheduler") or {}).get("policy")

    @property
    def options(self) -> dict:
        """The scheduler options robin recorded (run.json), e.g. {"backfilling": true}."""
        return dict((self.meta.get("scheduler") or {}).get("options") or {})

    @property
    def against(self) -> str | None:
        """The run it is compared with, as its sweep declared it (`against:`), None by default."""
        value = self.meta.get("against")
        return str(value) if value else None

    @property
    def backfilling(self) -> bool:
        """Whether it backfills: robin's record, else a policy's option (older run.json)."""
        if "backfilling" in self.meta:
            return bool(self.meta["backfilling"])
        return bool(self.options.get("backfilling"))

    @property
    def staged(self) -> bool:
        return bool((self.meta.get("scheduler") or {}).get("staging"))

    @property
    def walltime_includes_load(self) -> bool | None:
        """The walltime rule it ran under: True, the load counted against the walltime (the paper's);
        False, the walltime from the execution on; None when it loads no file (a plain command)."""
        if "walltime_includes_load" in self.meta and (self.policy or self.staged):
            return bool(self.meta["walltime_includes_load"])
        sched = self.meta.get("scheduler") or {}
        if self.policy:
            return bool(self.options.get("walltime_includes_load", True))
        if self.staged:   # a proxy before the rule was chosen counted the walltime from the execution
            return bool(sched.get("walltime_includes_load", False))
        return None

    @property
    def group(self) -> tuple[str, str]:
        """(platform, workload) labels: runs are compared only within a group."""
        plat = self.input_path("platform")
        wl = self.input_path("workload")
        return (plat.stem if plat else "-", wl.stem if wl else "-")


def discover_runs(output_dir) -> list[RunFiles]:
    """Every `*_jobs.csv` under output_dir is one run; robin's `run.json` beside it gives its metadata."""
    output_dir = Path(output_dir)
    runs = []
    for jobs_csv in sorted(output_dir.rglob("*_jobs.csv")):
        if "log" in jobs_csv.relative_to(output_dir).parts:
            continue
        directory = jobs_csv.parent
        meta_path = directory / "run.json"
        meta, problem = read_run_json(meta_path)
        prefix = Path(str(jobs_csv)[: -len("_jobs.csv")])
        name = str(meta.get("name") or (directory.name if directory != output_dir else prefix.name))
        runs.append(RunFiles(name=name, directory=directory, prefix=prefix, meta=meta, problem=problem))
    return runs


def read_run_json(path) -> tuple[dict, str | None]:
    """robin's run.json as a dict ({} when absent), and a one-line problem when it cannot be read."""
    path = Path(path)
    if not path.exists():
        return {}, None
    try:
        meta = json.loads(read_bytes(path, DESCRIPTION_BYTES, "run.json").decode("utf-8"))   # a FIFO is not waited on
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path}: unreadable run.json ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    if not isinstance(meta, dict):
        return {}, f"{path}: run.json is not a JSON object"
    return meta, None


def read_compute_nodes(path, roles=None) -> dict[int, str]:
    """Compute resource id → its node's name: the `node` property (contract §6), else the host's own name
    (a plain Batsim platform: one host, one node; `locality.platform_view`)."""
    return {int(res["id"]): str(res["properties"].get("node", res["name"]))
            for res in read_resources(path, **(roles or {})).compute}


def _jobs_csv_of(run) -> tuple[Path, dict]:
    """A run folder, an export prefix or a jobs.csv → (its jobs.csv, its run.json or {})."""
    run = Path(run)
    if run.is_dir():
        try:    # the folder's own outputs, as `batloc validate` and the report read them
            jobs = Path(f"{run_folder.own_prefix(run, read_run_json(run / 'run.json')[0])}_jobs.csv")
        except run_folder.FolderError as exc:
            raise FileNotFoundError(str(exc)) from None
    else:
        jobs = run if run.name.endswith("_jobs.csv") else Path(f"{run}_jobs.csv")
    meta, _ = read_run_json(jobs.parent / "run.json")
    return jobs, meta


def jobset(run, platform=None, workload=None):
    """One run as an evalys JobSet of its workload's jobs on the platform's compute cores.

    `run` is a run folder (robin's, with run.json), an export prefix or a
    jobs.csv. Staging jobs (which run on storage resources) and jobs that
    never ran (rejected, unfinished) are left out, and the resources are the
    compute cores of the platform (`platform`, else the run's run.json),
    so evalys' utilisation and MaxProcs count cores only.

    With the workload known (`workload`, else run.json), and the platform too
    when its jobs read files (NoPlatform otherwise: the stretch times their
    loads at its bandwidth), the frame's
    `stretch` is the report's (flow / (input size / bandwidth + run time),
    metrics.per_job), `evaluated` marks the jobs of the evaluation window and
    `batsim_stretch` keeps jobs.csv's own (turnaround / execution time, which
    a job killed while loading, after 0 s of execution, sends to millions): so
    ``js.df.loc[js.df["evaluated"], "stretch"].mean()`` is the report's mean
    stretch. Without it, `stretch` is jobs.csv's and there is no `evaluated`.
    """
    from evalys.jobset import JobSet
    from procset import ProcSet

    from batloc.locality.staging import STAGE_WORKLOAD

    jobs_path, meta = _jobs_csv_of(run)

    def recorded(value, key):
        if value is None and meta.get(key):
            value = Path(meta[key])
            value = value if value.is_absolute() else jobs_path.parent / value
        return value

    roles = run_folder.platform_roles(meta) if platform is None else None   # the run's own -m/-r with its platform
    platform, workload = recorded(platform, "platform"), recorded(workload, "workload")
    raw = read_jobs(jobs_path)
    df = raw[(raw["workload_name"] != STAGE_WORKLOAD) & (raw["allocated_resources"].str.len() > 0)]
    df = df.dropna(subset=["starting_time", "finish_time"]).drop(columns="full_id").reset_index(drop=True)
    if workload is not None:
        df = _with_report_stretch(df, raw, jobs_path, Path(workload), platform, roles)
    df["allocated_resources"] = df["allocated_resources"].map(ProcSet.from_str)
    if platform is not None:
        cores = read_platform_cores(platform, roles)
    else:
        cores = max((p.max + 1 for p in df["allocated_resources"] if len(p)), default=1)
    with warnings.catch_warnings():   # evalys 4.0 renames a column in place, which pandas 3 deprecates
        warnings.filterwarnings("ignore", message="The inplace keyword")
        return JobSet(df, resource_bounds=(0, cores - 1))


def _with_report_stretch(df, raw, jobs_path: Path, workload: Path, platform, roles=None) -> pd.DataFrame:
    """df with the report's per-job stretch and evaluated flag (metrics.per_job), jobs.csv's as batsim_stretch."""
    from . import metrics

    wl = read_workload(workload)
    require_platform(wl, raw, platform, run=str(jobs_path))
    decisions = read_decisions(Path(str(jobs_path)[: -len("_jobs.csv")] + "_decisions.csv"))
    table = metrics.per_job(raw, wl, decisions, reference_bandwidth(platform, roles=roles)).set_index("job_id")
    df = df.rename(columns={"stretch": "batsim_stretch"})
    df["stretch"] = df["job_id"].map(table["stretch"])
    df["evaluated"] = df["job_id"].map(table["evaluated"]).fillna(False).astype(bool)
    return df
