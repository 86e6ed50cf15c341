"""The conversion pipeline as plain functions: trace → job table → annotated, windowed Batsim JSON.

`batloc workload` (cli.py) maps its options onto these, and `batloc demo`
calls them directly. Steps, in order, for a trace (`convert`): read the
trace, split jobs wider than a node, add the overhead, give files, give
sessions, keep the trace's job numbers (as ids where they can be), cut the
evaluation window (or, without one, keep the first job off t = 0); then
`write` it. `synthesize` makes a
synthetic table instead of reading one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

from batloc.platforms import rackham
from batloc.platforms.reader import read_platform

from . import annotate
from .errors import WorkloadError
from .export import write_batsim
from .gonthier import at_authors_t0, read_gonthier
from .sacct import read_sacct
from .swf import read_swf
from .synth import SynthSpec, default_core_mix, generate
from .table import source_ids_as_ids, split_wide_jobs
from .window import extract_window, lead_in

READERS = {"swf": read_swf, "sacct": read_sacct, "gonthier": read_gonthier}


@dataclass
class Sizes:
    """What the workload needs from the platform: node count, cores and memory per node, nb_res."""

    nodes: int
    cores_per_node: int
    node_memory: float
    nb_res: int
    total_cores: int | None = None  # from a platform file, when one was given
    node_bandwidth: float = rackham.NODE_BANDWIDTH   # bytes/s from the file system to a node (`fit` file sizes)


def platform_sizes(platform=None, cores_per_node=None, node_memory=None, nodes=None, nb_res=None) -> Sizes:
    """Sizes from a platform file (default: Rackham), each overridable."""
    count, cores, memory, total = rackham.NODES, rackham.CORES, rackham.NODE_MEMORY, None
    bandwidth = rackham.NODE_BANDWIDTH
    if platform:
        summary = read_platform(platform)
        count, cores = len(summary.nodes), summary.cores_per_node
        # a plain Batsim platform has no node memory (infinite in its view): files sized as on Rackham
        memories = [n.memory_bytes for n in summary.nodes if n.memory_bytes and math.isfinite(n.memory_bytes)]
        # Heterogeneous clusters: size files on the most common node, as the paper does.
        memory = max(set(memories), key=memories.count) if memories else memory
        links = [n.bandwidth for n in summary.nodes if n.bandwidth and math.isfinite(n.bandwidth)]
        bandwidth = max(set(links), key=links.count) if links else bandwidth
        total = summary.total_cores
    cores = cores_per_node or cores
    count = nodes or count
    return Sizes(nodes=count, cores_per_node=cores, node_memory=node_memory or memory,
                 nb_res=nb_res or total or count * cores, total_cores=total, node_bandwidth=bandwidth)


@dataclass
class Window:
    """An evaluation window (paper, Fig. 1): `start` in the trace's seconds, or a date when it gives its epoch."""

    start: str | float
    length: float = 7 * 86400.0
    before: float = 0.0
    after: float = 0.0


def start_time(text, table) -> float:
    """Window start in the table's time: seconds, or a date (YYYY-MM-DD[THH:MM:SS], UTC)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        date = datetime.fromisoformat(text)
    except ValueError:
        raise WorkloadError(f"cannot read window start {text!r} (seconds, or YYYY-MM-DD[THH:MM:SS])") from None
    epoch = table.attrs.get("epoch")
    if epoch is None:
        raise WorkloadError(f"window start {text!r} is a date, but the trace does not give its epoch; "
                            "give seconds instead")
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    return date.timestamp() - epoch


def cut_window(table, window: Window | None):
    """The table restricted to `window` with its context (unchanged when None)."""
    if window is None or window.start is None:
        return table
    return extract_window(table, start_time(window.start, table), window.length, window.before, window.after)


def convert(trace, fmt, sizes: Sizes, *, strict=False, default_walltime=None, sharing="paper",
            sharing_window=800.0, keys=("user", "cores"), sessions=annotate.SESSION_WINDOW, overhead=0.0,
            window: Window | None = None, history_node=False, file_size="fit"):
    """Read a trace and annotate it; returns (table, IssueLog of the lines dropped or repaired).

    `fmt`: swf, sacct or gonthier. `sharing`: a rule of `annotate.RULES`, or
    "keep" for Gonthier traces that carry their files. `file_size`: `fit`
    (the paper's size, capped so that a cold load fits in the time each job had
    to spare in the trace, at `sizes.node_bandwidth`) or `paper` (the paper's
    size whatever the walltime: `batloc study paper`). `sessions`: the session
    window in seconds (0: no session field). `history_node` (gonthier only):
    times from the authors' t0, the jobs running then keeping their node
    (`gonthier.at_authors_t0`); t0 is 0, with no lead-in and no window.
    """
    if fmt not in READERS:
        raise ValueError(f"unknown trace format {fmt!r} (expected {', '.join(READERS)})")
    options = {"strict": strict}
    if fmt != "gonthier":
        options["default_walltime"] = default_walltime
    table, log = READERS[fmt](trace, **options)
    table = split_wide_jobs(table, sizes.cores_per_node)
    table.attrs["provenance"]["read"] = log.counts()
    table = source_ids_as_ids(table)
    if history_node:
        if fmt != "gonthier":
            raise WorkloadError("--history-node reads the authors' format only (from-gonthier)")
        if window is not None and window.start is not None:
            raise WorkloadError("--history-node starts the workload at the authors' t0: give no window")
        table = at_authors_t0(table, sizes.nodes)
    if overhead:
        table = annotate.add_overhead(table, overhead)
    if sharing != "keep":
        if file_size not in annotate.FILE_SIZES:
            raise ValueError(f"unknown file size rule {file_size!r} (expected {' or '.join(annotate.FILE_SIZES)})")
        table = annotate.annotate_files(table, sharing, sharing_window, keys, sizes.cores_per_node,
                                        sizes.node_memory, sizes.node_bandwidth if file_size == "fit" else None)
    elif "input_file" not in table:
        raise WorkloadError(f"{trace}: jobs carry no data/data_size; choose --sharing paper or consecutive")
    if sessions:
        table = annotate.annotate_sessions(table, sessions)
    if window is None or window.start is None:
        return (table if history_node else lead_in(table)), log
    table = cut_window(table, window)
    if not table["evaluated"].any():
        raise WorkloadError(f"{trace}: no job submitted in the evaluation window")
    return table, log


def synth_spec(sizes: Sizes, core_mix=None, **params) -> SynthSpec:
    """A SynthSpec on `sizes` (nodes, cores, memory); core mix default: Rackham-like up to a node."""
    spec = SynthSpec(nodes=sizes.nodes, cores_per_node=sizes.cores_per_node, node_memory=sizes.node_memory,
                     **params)
    spec.core_mix = core_mix or default_core_mix(spec.cores_per_node)
    return spec


def synthesize(spec: SynthSpec, sessions=annotate.SESSION_WINDOW):
    """A synthetic table (`synth.generate`), with sessions unless `sessions` is 0."""
    table = generate(spec)
    if sessions:
        table = annotate.annotate_sessions(table, sessions)
    return table


def write(table, output, nb_res) -> int:
    """Write the table as Batsim JSON; returns the number of jobs written."""
    return write_batsim(table, output, nb_res)
