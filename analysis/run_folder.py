"""A run folder's own files, and whether they are still the ones robin ran and validated.

`batloc validate`, `batloc report` and `load.jobset` read a robin run folder
the same way: its outputs are the folder's own ``*_jobs.csv`` (and the
``_decisions.csv`` beside it), never the files run.json's absolute
`export_prefix` names — a copy of a folder would otherwise be judged by its
original's files. robin records the sha256 of the outputs it validated in
run.json (``validation.outputs``), of the inputs the run read (``inputs``) and
of its configuration (``config_hash``: platform, workload, scheduler and its
options, engine); a file or a configuration changed since then is no longer
the run robin checked (contract §6).
No pandas here: robin validates every run through this.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

CHUNK = 1 << 20
JOBS_SUFFIX = "_jobs.csv"
DECISIONS_SUFFIX = "_decisions.csv"


class FolderError(Exception):
    """A run folder whose outputs cannot be found in it; the message is one line naming it."""


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def own_prefix(folder, meta: dict | None = None) -> Path:
    """The output prefix of the one ``*_jobs.csv`` directly in `folder`; FolderError when there is none
    (naming run.json's `export_prefix` when it points outside the folder) or several."""
    folder = Path(folder)
    found = sorted(folder.glob(f"*{JOBS_SUFFIX}"))
    if len(found) == 1:
        return Path(str(found[0])[: -len(JOBS_SUFFIX)])
    if found:
        raise FolderError(f"{folder}: {len(found)} *{JOBS_SUFFIX} files in the folder "
                          f"({', '.join(p.name for p in found[:3])}{', …' if len(found) > 3 else ''}): "
                          "give the output prefix of the one to read")
    elsewhere = (meta or {}).get("export_prefix")
    where = ""
    if elsewhere and Path(str(elsewhere)).parent.resolve() != folder.resolve():
        where = (f"; its run.json's export_prefix {elsewhere} is outside the folder: validate that prefix "
                 "with --workload and --platform")
    raise FolderError(f"{folder}: no *{JOBS_SUFFIX} in the folder{where}")


def input_path(folder, meta: dict, key: str) -> Path | None:
    """run.json's `platform` or `workload`: robin records absolute paths; a relative one is the folder's."""
    value = meta.get(key)
    if not value:
        return None
    p = Path(str(value))
    return p if p.is_absolute() else Path(folder) / p


def platform_roles(meta: dict) -> dict:
    """`read_resources`' keywords (master_host, roles) for a run's platform: the engine's -m/-r as robin
    recorded them in run.json's `platform_options` (a platform whose master only -m names cannot be read
    without it); FolderError names run.json when they cannot be read."""
    from batloc.platforms.numbering import RoleError, role_arguments

    try:
        return role_arguments((meta or {}).get("platform_options"))
    except RoleError as exc:
        raise FolderError(f"run.json: {exc}") from None


def output_files(prefix) -> list[Path]:
    """The outputs the validator reads: jobs.csv, and the decision log when there is one."""
    files = [Path(f"{prefix}{JOBS_SUFFIX}")]
    decisions = Path(f"{prefix}{DECISIONS_SUFFIX}")
    return files + [decisions] if decisions.exists() else files


def output_digests(prefix) -> dict:
    """{file name: sha256} of the outputs the validator reads, for run.json's `validation.outputs`."""
    return {p.name: file_sha256(p) for p in output_files(prefix) if p.exists()}


def changed_outputs(prefix, recorded) -> list[str]:
    """One line per output that is not the file robin validated (`recorded`: run.json's
    `validation.outputs`; nothing to compare without it, as in a run.json older than it)."""
    if not isinstance(recorded, dict):
        return []
    prefix = Path(prefix)
    now = {p.name: p for p in output_files(prefix)}
    out = []
    for name in sorted(set(recorded) | set(now)):
        path = prefix.parent / name
        if name not in recorded:
            out.append(f"{path} was not there when robin validated the run")
        elif not path.exists():
            out.append(f"{path} is missing: robin validated it after the run")
        elif file_sha256(path) != recorded[name]:
            out.append(f"{path} changed since robin validated it (its sha256 is not run.json's)")
    return out


# run.json's keys that define a run (robin's `config_hash`; ports and timings do not).
# `platform_options` (the engine's -m/-r) only when given, so the hash of a run without them is unchanged.
CONFIG_KEYS = ("platform", "workload", "scheduler", "engine", "engine_args", "platform_options")


def config_hash(meta: dict) -> str:
    """The hash of what defines a run, as robin records it in run.json's `config_hash`."""
    stable = {k: v for k, v in meta.items() if k in CONFIG_KEYS}
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]


def changed_config(meta: dict) -> list[str]:
    """One line when run.json's configuration (its platform, workload, scheduler and options, engine) is not
    the one robin ran: `config_hash` no longer matches it (nothing to compare without one)."""
    recorded = meta.get("config_hash")
    if not isinstance(recorded, str) or config_hash(meta) == recorded:
        return []
    return [f"run.json's configuration (platform, workload, scheduler, engine) is not the one robin ran: it was "
            f"edited since (its config_hash {recorded} is not its contents')"]


def changed_inputs(folder, meta: dict, keys=("platform", "workload")) -> list[str]:
    """One line per input (of `keys`) that is not the file the run read, by run.json's `inputs` digests."""
    recorded = meta.get("inputs")
    if not isinstance(recorded, dict):
        return []
    out = []
    for key in keys:
        path = input_path(folder, meta, key)
        digests = recorded.get(key)
        if path is None or not isinstance(digests, dict):
            continue
        if str(path) not in digests:
            out.append(f"run.json's {key} {path} is not the {key} the run read ({', '.join(digests) or 'none'})")
        elif not path.exists():
            out.append(f"{path}: the run's {key} is missing")
        elif file_sha256(path) != digests[str(path)]:
            out.append(f"{path}: the run's {key} changed since the run (its sha256 is not run.json's)")
    return out
