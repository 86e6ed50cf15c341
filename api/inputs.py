"""Platforms and workloads built from Python objects: `platform(...)`, `workload(...)`.

Both return an object that `run` and `sweep` take as they take a file's path,
and that `save` writes where you choose. A platform is `batloc platform
generate`'s (``platforms.generator``: the contract's layout, §6), its options
named as that command's flags; a workload is either your jobs (a list of dicts
or a DataFrame, with the contract's fields, ``workloads.records``) or a
synthetic trace (``workloads.synth``, as `batloc workload synth` makes it).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from batloc.platforms.generator import PlatformSpec, render, write
from batloc.platforms.options import platform_spec
from batloc.platforms.units import parse_duration
from batloc.reading import PLATFORM_HOSTS
from batloc.robin.description import safe_name
from batloc.workloads import pipeline
from batloc.workloads.errors import WorkloadError
from batloc.workloads.records import COLUMNS, from_records
from batloc.workloads.synth import SynthSpec

from .errors import BatlocError


class Input:
    """An input built in Python, a file once saved (`save`); `run` and `sweep` write an unsaved one into their
    output folder (`write`), and use a saved one's file."""

    SUFFIX = ""
    name = "input"

    def __init__(self):
        self.path: Path | None = None

    def save(self, path) -> Path:
        """Write it to `path`; the absolute path (later runs use this file)."""
        self.path = self.write(path)
        return self.path

    def write(self, path) -> Path:
        """Write it to `path`, the object left as it was (a run's own copy)."""
        path = Path(path).expanduser().resolve()
        try:
            self._write(path)
        except WorkloadError as exc:   # it names the file
            raise BatlocError(str(exc)) from None
        except OSError as exc:
            raise BatlocError(f"cannot write {path}: {exc.strerror or exc}") from None
        return path

    def _write(self, path):
        raise NotImplementedError

    def _saved(self) -> str:
        return f", saved as {self.path}" if self.path else ""


class Platform(Input):
    """A SimGrid platform in batloc's layout (`platform(...)`)."""

    SUFFIX = ".xml"

    def __init__(self, spec: PlatformSpec):
        super().__init__()
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def nodes(self) -> int:
        return self.spec.nodes

    @property
    def cores(self) -> int:
        """Compute cores in all (nodes × cores per node)."""
        return self.spec.nodes * self.spec.cores

    @property
    def xml(self) -> str:
        return render(self.spec)

    def _write(self, path):
        write(self.spec, path)

    def __repr__(self):
        return (f"<batloc platform {self.name}: {self.nodes} nodes x {self.spec.cores} cores, node links "
                f"{self.spec.node_bandwidth:g} B/s{self._saved()}>")


class Workload(Input):
    """A file-annotated Batsim workload (`workload(...)`); `jobs` shows it in the contract's field names."""

    SUFFIX = ".json"

    def __init__(self, table, nb_res: int, name: str = "workload"):
        super().__init__()
        self.table = table      # the workload pipeline's job table (workloads.export.write_batsim)
        self.nb_res = int(nb_res)
        self.name = name

    @property
    def jobs(self):
        """One row per job: id, subtime, res, walltime, delay, user, input_file, input_size, evaluated[, …]."""
        present = {column: key for key, column in COLUMNS.items() if column in self.table}
        return self.table[list(present)].rename(columns=present).reset_index(drop=True)

    def __len__(self):
        return len(self.table)

    def _write(self, path):
        pipeline.write(self.table, path, self.nb_res)

    def __repr__(self):
        return f"<batloc workload {self.name}: {len(self)} jobs, nb_res {self.nb_res}{self._saved()}>"


def platform(nodes: int = 4, cores: int = 20, memory="128GB", node_bw="0.1GB/s", backbone_bw=None, latency=0.0,
             sharing: str = "FATPIPE", name: str = "cluster", memory_mix=None, io_routes: bool = False,
             node_routes: bool = False, pfs_access: str = "shared") -> Platform:
    """A cluster of `nodes` nodes of `cores` cores fed from one parallel file system, as `batloc platform
    generate` writes it (its flags, as keywords: `node_bw` is --node-bw, …).

    Sizes, bandwidths and durations are numbers (bytes, bytes/s, seconds) or text as the command takes them
    ("128GB", "0.1GB/s", "5ms"); `memory_mix` lists (count, memory) groups of nodes in order, or is the
    command's text ("450x128GB,32x256GB") and then replaces `nodes` and `memory`; `backbone_bw` may be
    "auto" (a quarter of the node links' sum, as Rackham's).
    """
    try:
        return Platform(platform_spec(nodes=nodes, cores=cores, memory=memory, node_bw=node_bw,
                                      backbone_bw=backbone_bw, latency=latency, sharing=sharing, name=name,
                                      memory_mix=memory_mix, io_routes=io_routes, node_routes=node_routes,
                                      pfs_access=pfs_access))
    except (ValueError, TypeError) as exc:
        raise BatlocError(f"platform: {exc}") from None


SYNTH_KEYS = tuple(f.name for f in dataclasses.fields(SynthSpec)
                   if f.name not in ("nodes", "cores_per_node", "node_memory"))
DURATIONS = ("duration", "median_run_time", "max_walltime", "burst_span")
FLOATS = tuple(f.name for f in dataclasses.fields(SynthSpec) if isinstance(f.default, float))


def workload(jobs=None, *, platform=None, nb_res: int | None = None, name: str = "workload",
             sessions="5min", **synthetic) -> Workload:
    """Your jobs, or a synthetic trace.

    `jobs`: a list of dicts or a DataFrame, one job each, with the contract's fields (§2): `subtime`, `res`
    (cores), `walltime` (-1: none), `delay` (its computation, seconds), `input_file`, `input_size` (bytes),
    and optionally `id`, `user`, `evaluated`, `session`, `source_id`. `nb_res` defaults to the platform's
    cores, else the widest job's.

    Without jobs, a synthetic trace as `batloc workload synth` makes it, on `platform` (a `Platform`, a file;
    default: Rackham's sizes), with `synthetic`'s knobs: `duration`, `load`, `jobs_per_file`, `burstiness`,
    `core_mix`, `walltime_accuracy`, `users`, `median_run_time`, `max_walltime`, `burst_span`, `seed`
    (durations in seconds or as text, "2d"); `sessions` is the user-session window (0: none).
    """
    if nb_res is not None and (isinstance(nb_res, bool) or not isinstance(nb_res, int)
                               or not 1 <= nb_res <= PLATFORM_HOSTS):
        raise BatlocError(f"workload: nb_res must be a whole number in 1..{PLATFORM_HOSTS} (the platform's cores), "
                          f"not {nb_res!r}")
    try:
        if jobs is not None:
            if synthetic:
                raise BatlocError(f"workload: {', '.join(sorted(synthetic))} make a synthetic trace: give them "
                                  "without jobs")
            table = from_records(jobs)
            if nb_res is None:
                nb_res = _sizes(platform).nb_res if platform is not None else int(table["cores"].max())
            return Workload(table, nb_res, name)
        unknown = sorted(set(synthetic) - set(SYNTH_KEYS))
        if unknown:
            raise BatlocError(f"workload: unknown option(s) {', '.join(unknown)} (a synthetic trace takes "
                              f"{', '.join(SYNTH_KEYS)})")
        params = {k: (parse_duration(v) if k in DURATIONS and isinstance(v, str) else v)
                  for k, v in synthetic.items()}
        for key in FLOATS:   # as the command reads them: 3 jobs per file is 3.0 in the provenance too
            if isinstance(params.get(key), int) and not isinstance(params[key], bool):
                params[key] = float(params[key])
        sizes = _sizes(platform)
        spec = pipeline.synth_spec(sizes, params.pop("core_mix", None), **params)
        window = parse_duration(sessions) if isinstance(sessions, str) else float(sessions or 0)
        table = pipeline.synthesize(spec, window)
        return Workload(table, nb_res or spec.nodes * spec.cores_per_node, name)
    except (WorkloadError, ValueError, TypeError) as exc:
        raise BatlocError(f"workload: {exc}") from None


def _sizes(platform) -> pipeline.Sizes:
    """What a synthetic trace needs of the platform (nodes, cores, memory), read from its file."""
    if platform is None:
        return pipeline.platform_sizes()
    if isinstance(platform, Platform):
        if platform.path is not None:
            return pipeline.platform_sizes(platform.path)
        with tempfile.TemporaryDirectory() as folder:   # the reader is the one home for a platform's sizes
            path = Path(folder) / "platform.xml"
            write(platform.spec, path)
            return pipeline.platform_sizes(path)
    path = Path(platform).expanduser()
    if not path.is_file():
        raise BatlocError(f"workload: no platform file {platform}")
    return pipeline.platform_sizes(path)


def input_path(value, folder: Path, kind: str) -> str:
    """A run's platform or workload as the path robin takes: a file's path as given (robin finds the package's
    own, platforms/rackham.xml), or an object saved in `folder` unless it was saved already."""
    if isinstance(value, Input):
        if value.path is not None and value.path.is_file():
            return str(value.path)
        folder.mkdir(parents=True, exist_ok=True)
        return str(value.write(folder / f"{safe_name(value.name)}{value.SUFFIX}"))
    if isinstance(value, (str, Path)):
        return str(Path(value).expanduser())
    raise BatlocError(f"{kind}: a file's path or a batloc.api.{kind}(...), not {type(value).__name__}")

