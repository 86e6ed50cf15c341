"""What a group of runs compares on, in words: its platform and its workload, named in the report.

A group is labelled by its files' names (`rackham / week-1997-01-06`), which
say little on their own (the demo's were `platform / workload`); the report
states under each group what the platform is (nodes, cores, memory,
bandwidth) and where the workload comes from (trace or generator, jobs,
evaluated jobs), read from the files and the workload's provenance.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from .tables import number


def platform_text(path, meta=None) -> str:
    """'32 nodes × 20 cores, 128 GB and 0.1 GB/s each (640 cores)', from the platform file read with the run's
    -m/-r (run.json's `platform_options`, `meta`)."""
    from batloc.platforms.reader import read_platform

    from .run_folder import FolderError, platform_roles

    try:
        summary = read_platform(path, **platform_roles(meta or {}))
    except (OSError, ValueError, FolderError) as exc:
        return f"unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    mix = {}
    for n in summary.nodes:
        key = (len(n.core_ids), n.memory_bytes, n.bandwidth)
        mix[key] = mix.get(key, 0) + 1
    kinds = [f"{count} nodes × {cores} cores, " + (f"{memory / 1e9:g} GB, {bw / 1e9:g} GB/s from the file system"
                                                   if math.isfinite(memory) else "no node memory")
             for (cores, memory, bw), count in sorted(mix.items())]
    return "; ".join(kinds) + f" ({number(summary.total_cores, integer=True)} cores)"


def workload_text(provenance: dict, jobs: int, evaluated: int) -> str:
    """Where the workload comes from and what it holds, from its provenance (`batloc` object)."""
    source = provenance.get("source") or {}
    if not isinstance(source, dict):    # a free text (batloc workload synth --io writes one)
        source = {"format": str(source)}
    fmt = source.get("format")
    if fmt == "synthetic":
        params = source.get("params") or {}
        origin = (f"synthetic ({_days(params.get('duration'))} of submissions, offered load "
                  f"{params.get('load', '?')}, seed {params.get('seed', '?')})")
    elif fmt:
        name = source.get("path")
        origin = f"{fmt} trace" + (f" {Path(str(name)).name}" if name else "")
    else:
        origin = "of unknown origin"
    window = provenance.get("window") or {}
    if isinstance(window, dict) and window.get("length"):
        origin += (f", an evaluation window of {_days(window['length'])} with {_days(window.get('before'))} of "
                   f"context before and {_days(window.get('after'))} after")
    return (f"{origin}: {number(jobs, integer=True)} jobs, {number(evaluated, integer=True)} of them evaluated")


def _days(seconds) -> str:
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return "?"
    return f"{s / 86400:g} d" if s >= 86400 else f"{s / 3600:g} h"


def group_html(runs) -> str:
    """The platform and workload a group's runs compare on (their first run's files), as a note."""
    r = runs[0]
    meta = r.meta or {}
    plat, wl = meta.get("platform"), meta.get("workload")
    jobs = r.jobs
    evaluated = int(jobs["evaluated"].sum()) if jobs is not None else 0
    lines = []
    if plat:
        lines.append(f"Platform <code>{html.escape(Path(plat).name)}</code>: "
                     f"{html.escape(platform_text(plat, meta))}.")
    if wl:
        text = workload_text(meta.get("workload_provenance") or {}, len(jobs) if jobs is not None else 0, evaluated)
        lines.append(f"Workload <code>{html.escape(Path(wl).name)}</code>: {html.escape(text)}.")
    return "<p class='note'>" + " ".join(lines) + "</p>" if lines else ""
