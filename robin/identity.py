"""What a run's results depend on, by content: so that "complete" means "complete for these inputs".

A run is complete when its run.json says it succeeded with the same
configuration (paths, scheduler, options, engine arguments: ``RunSpec.config_hash``)
*and* the same file contents: the platform, the workload, and the scheduler's
files (a batloc policy: the sources of ``batloc.schedulers``, as one digest;
a command: the arguments that name files). Editing a workload in place therefore re-runs
the runs that read it (or, with ``robin --refuse-changed``, stops naming it).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path

CHUNK = 1 << 20


class Digests:
    """sha256 of files, each read once per robin invocation (a workload feeds many runs)."""

    def __init__(self):
        self._known: dict[str, str] = {}

    def of(self, path) -> str:
        """A file's sha256; a folder's covers the names and contents of its Python sources."""
        key = str(path)
        if key not in self._known:
            h = hashlib.sha256()
            try:
                if os.path.isdir(path):
                    for source in sorted(p for p in Path(path).rglob("*.py") if "__pycache__" not in p.parts):
                        h.update(str(source.relative_to(path)).encode() + b"\0")
                        self._feed(h, source)
                else:
                    self._feed(h, path)
                self._known[key] = h.hexdigest()
            except OSError as exc:
                self._known[key] = f"unreadable: {exc.strerror}"
        return self._known[key]

    @staticmethod
    def _feed(h, path):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(CHUNK), b""):
                h.update(block)


DIGESTS = Digests()


def scheduler_files(scheduler: dict, package_dir: Path) -> list[Path]:
    """The files a scheduler's decisions depend on, besides its options (which the config hash holds)."""
    if scheduler.get("policy"):
        return [package_dir]    # the policy's file and the family code it runs on
    return command_files(scheduler.get("command") or "")


def command_files(command: str) -> list[Path]:
    """The arguments of a command that name existing files (a scheduler script, its options file)."""
    try:
        args = shlex.split(command)
    except ValueError:
        return []
    found = []
    if args and (os.path.isabs(args[0]) or os.sep not in args[0]):
        args = args[1:]     # the program: an interpreter, pybatsim (a user's ./script stays)
    for a in args:
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if value and not value.startswith("-") and os.path.isfile(value):
            found.append(Path(value).resolve())
    return found


def inputs(files: dict[str, list[Path]]) -> dict:
    """{role: {path: sha256}} for run.json, e.g. {"workload": {"/abs/week.json": "ab12…"}}."""
    return {role: {str(p): DIGESTS.of(p) for p in paths} for role, paths in files.items()}


def changed(recorded: dict, current: dict) -> list[str]:
    """The files whose content differs from what a finished run recorded, as 'role path' strings."""
    out = []
    for role, files in current.items():
        before = (recorded or {}).get(role) or {}
        for path, digest in files.items():
            if before.get(path) != digest:
                out.append(f"{role} {path}")
        out += [f"{role} {path} (no longer read)" for path in before if path not in files]
    return out


def stamps(files: dict[str, list[Path]]) -> dict:
    """{path: (size, mtime)} of every file, cheap enough to take before and after each run."""
    out = {}
    for paths in files.values():
        for p in paths:
            try:
                st = os.stat(p)
                out[str(p)] = (st.st_size, st.st_mtime_ns)
            except OSError:
                out[str(p)] = None
    return out


def changed_while_running(recorded: dict, before: dict, files: dict[str, list[Path]]) -> list[str]:
    """The files a run read that were written while it ran: their stamp moved and their content is not the one
    `recorded` (its sha256 as the run started), as 'role path' strings."""
    moved = {path for path, stamp in stamps(files).items() if stamp != before.get(path)}
    if not moved:
        return []
    fresh = Digests()     # not the invocation's cache, which holds the contents as they were
    return [f"{role} {path}" for role, paths in files.items() for path in map(str, paths)
            if path in moved and fresh.of(path) != (recorded.get(role) or {}).get(path)]
