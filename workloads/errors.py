"""Errors and the per-line log of what a trace adapter dropped or repaired.

Real traces hold cancelled jobs, missing fields and the odd corrupt line. By
default each such line is skipped or repaired and logged with its line number,
so a user can check what was done; with `strict` the first one is an error.
"""

from collections import Counter
from dataclasses import dataclass

from batloc.outputs import open_for_writing, quoted, text


class WorkloadError(Exception):
    """A user-facing error; the message names the file (and line when there is one)."""


@dataclass(frozen=True)
class Issue:
    path: str
    line: int
    action: str  # "dropped" or "repaired"
    reason: str  # short category, e.g. "cancelled before start"
    detail: str = ""

    def __str__(self):
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.path}:{self.line}: {self.action} ({self.reason}){detail}"


class IssueLog:
    """Collects dropped/repaired lines; raises at the first one when strict."""

    def __init__(self, path, strict=False):
        self.path = str(path)
        self.strict = strict
        self.issues = []

    def _add(self, line, action, reason, detail):
        issue = Issue(self.path, line, action, reason, detail)
        if self.strict:
            raise WorkloadError(f"{self.path}:{line}: {reason}{': ' + detail if detail else ''}")
        self.issues.append(issue)

    def drop(self, line, reason, detail=""):
        self._add(line, "dropped", reason, detail)

    def repair(self, line, reason, detail=""):
        self._add(line, "repaired", reason, detail)

    def no_jobs(self, format_name) -> WorkloadError:
        """The error for a file that yielded no job at all: usually the wrong format."""
        if not self.issues:
            return WorkloadError(f"{self.path}: no job lines found (is this {format_name}?)")
        first = self.issues[0]
        return WorkloadError(f"{self.path}: no usable job: all {len(self.issues)} job line(s) dropped, "
                             f"first at line {first.line} ({first.reason}{': ' + first.detail if first.detail else ''}); "
                             f"is this {format_name}?")

    def counts(self) -> dict:
        """{"dropped": {reason: n}, "repaired": {reason: n}} with sorted keys, for provenance."""
        out = {"dropped": Counter(), "repaired": Counter()}
        for issue in self.issues:
            out[issue.action][issue.reason] += 1
        return {action: dict(sorted(c.items())) for action, c in out.items()}

    def write_csv(self, path):
        with open_for_writing(path) as out:
            out.write("file,line,action,reason,detail\n")
            for i in self.issues:
                out.write(f"{text(i.path)},{i.line},{i.action},{text(i.reason)},{quoted(i.detail)}\n")
