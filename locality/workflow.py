"""Workflows in a workload (contract §2b): the files a job reads and writes, and its parents.

A job may read several files (``input_file``, then each of ``inputs``), write
``outputs``, and belong to a ``workflow``. A job that depends on others lists
them in ``parents`` and lives in the workload's top-level ``dependent_jobs``,
not in ``jobs``: Batsim would submit every job of ``jobs`` at its subtime, and
ignores top-level keys it does not know. The scheduler reads them from the
workload file (SIMULATION_BEGINS names it) and registers each one
(REGISTER_JOB) when its last parent completes (``DependencyBook``).

A file written by a job (an *output*) is read only by its descendants: it
exists from its producer's end. Every other file is an input on Lustre.
``check`` holds a workload to these rules and names the first job at fault.
Pure Python: the converter, the schedulers, the validator and the analysis
read workflows through this one module.
"""

import math
import mmap
import json
from dataclasses import dataclass, field

from batloc.reading import WORKLOAD_BYTES, Refused, read_bytes

DEPENDENT_KEY = "dependent_jobs"


class WorkflowError(ValueError):
    """A workflow the workload cannot hold: the message names the job and the field."""


def _file_list(job, key, where):
    value = job.get(key, [])
    if not isinstance(value, list):
        raise WorkflowError(f"{where}: {key} must be a list of {{\"file\", \"size\"}} objects")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str) or item["file"] == "":
            raise WorkflowError(f"{where}: {key}[{i}] must be an object with a file id (a non-empty string)")
        size = item.get("size")
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size < 0:
            raise WorkflowError(f"{where}: {key}[{i}] ({item['file']}): size must be a finite number of bytes "
                                f">= 0, got {size!r}")
        out.append((item["file"], float(size)))
    return out


def job_files(job, where="job"):
    """The files a job reads, in order: its ``input_file``, then its ``inputs`` (each once)."""
    listed = []
    if job.get("input_file") is not None and job.get("input_size") is not None:
        listed.append((str(job["input_file"]), float(job["input_size"])))
    listed += _file_list(job, "inputs", where)
    sizes, out = {}, []
    for f, s in listed:
        if f in sizes:
            if sizes[f] != s:
                raise WorkflowError(f"{where}: reads {f} twice with two sizes ({sizes[f]:.6g} and {s:.6g} bytes)")
            continue
        sizes[f] = s
        out.append((f, s))
    return out


def job_outputs(job, where="job"):
    return _file_list(job, "outputs", where)


def parents(job, where="job"):
    value = job.get("parents", [])
    if not isinstance(value, list) or any(isinstance(p, bool) or not isinstance(p, (int, str)) for p in value):
        raise WorkflowError(f"{where}: parents must be a list of job ids")
    return [str(p) for p in value]


def dependents(doc, where="workload"):
    """The workload document's dependent jobs (its ``dependent_jobs``; [] without)."""
    value = doc.get(DEPENDENT_KEY, [])
    if not isinstance(value, list) or any(not isinstance(j, dict) for j in value):
        raise WorkflowError(f"{where}: {DEPENDENT_KEY} must be a list of job objects")
    return value


def may_hold_dependents(path):
    """Whether the workload file may list dependent jobs: a byte search (no parse) for the key,
    so that a scheduler reading a workload of a million independent jobs pays milliseconds."""
    with open(path, "rb") as fh:
        try:
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(f'"{DEPENDENT_KEY}"'.encode()) >= 0
        except ValueError:        # an empty file cannot be mapped
            return False


def read_dependents(source, name="workload"):
    """(dependent jobs, the workload's profiles) of a workload file's path, or of its parsed
    document; ([], {}) when it has none. WorkflowError names the file and the job at fault."""
    if isinstance(source, dict):
        doc, where = source, name
    else:
        where = source
        try:
            if not may_hold_dependents(source):
                return [], {}
            doc = json.loads(read_bytes(source, WORKLOAD_BYTES, "workload").decode("utf-8"))
        except Refused as exc:
            raise WorkflowError(str(exc)) from None
        except OSError as exc:
            raise WorkflowError(f"{source}: cannot read the workload: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise WorkflowError(f"{source}: not a JSON workload ({exc})") from None
        if not isinstance(doc, dict):
            raise WorkflowError(f"{source}: not a Batsim workload (a JSON object)")
    check(doc, where)
    return dependents(doc, where), doc.get("profiles", {})


def check(doc, where="workload"):
    """Hold a workload document to the workflow rules (contract §2b); WorkflowError names the first fault.

    Returns {job id: job} over ``jobs`` and ``dependent_jobs``."""
    jobs = {}
    static = doc.get("jobs", [])
    deps = dependents(doc, where)
    for kind, group in (("jobs", static), (DEPENDENT_KEY, deps)):
        for j in group:
            if not isinstance(j, dict) or "id" not in j:
                raise WorkflowError(f"{where}: every job of {kind} needs an id")
            jid = str(j["id"])
            if jid in jobs:
                raise WorkflowError(f"{where}: job {jid}: its id is used twice (jobs and {DEPENDENT_KEY} share ids)")
            jobs[jid] = j
    profiles = doc.get("profiles", {})
    writer = {}
    for jid, j in jobs.items():
        w = f"{where}: job {jid}"
        for f, _ in job_outputs(j, w):
            if f in writer:
                raise WorkflowError(f"{w}: output {f} is also written by job {writer[f]}: a file has one producer")
            writer[f] = jid
        job_files(j, w)
    for j in static:
        if parents(j, f"{where}: job {j['id']}"):
            raise WorkflowError(f"{where}: job {j['id']} has parents but is in jobs: a job that depends on others "
                                f"belongs in {DEPENDENT_KEY} (Batsim would submit it at its subtime)")
    for j in deps:
        jid = str(j["id"])
        w = f"{where}: dependent job {jid}"
        ps = parents(j, w)
        if not ps:
            raise WorkflowError(f"{w}: a job of {DEPENDENT_KEY} needs parents")
        for p in ps:
            if p not in jobs:
                raise WorkflowError(f"{w}: parent {p} is not a job of the workload")
        if j.get("profile") not in profiles:
            raise WorkflowError(f"{w}: profile {j.get('profile')!r} is not defined in the workload's profiles")
    order = topological(jobs)
    ancestors = {}
    for jid in order:
        anc = set()
        for p in parents(jobs[jid]):
            anc.add(p)
            anc |= ancestors[p]
        ancestors[jid] = anc
        for f, _ in job_files(jobs[jid]):
            if f in writer and writer[f] not in anc:
                raise WorkflowError(f"{where}: job {jid} reads {f}, the output of job {writer[f]}, which is not "
                                    f"one of its ancestors: it could read the file before it is written")
    return jobs


def topological(jobs):
    """Job ids, every parent before its children (ties: the jobs' order); WorkflowError on a cycle."""
    children, missing = {}, {}
    for jid, j in jobs.items():
        ps = [p for p in parents(j) if p in jobs]
        missing[jid] = len(ps)
        for p in ps:
            children.setdefault(p, []).append(jid)
    ready = [jid for jid in jobs if missing[jid] == 0]
    order = []
    while ready:
        nxt = []
        for jid in ready:
            order.append(jid)
            for c in children.get(jid, ()):
                missing[c] -= 1
                if missing[c] == 0:
                    nxt.append(c)
        ready = nxt
    if len(order) != len(jobs):
        stuck = next(jid for jid in jobs if missing[jid] > 0)
        raise WorkflowError(f"job {stuck} depends on itself through its parents (a cycle)")
    return order


# ---- at run time: which dependent jobs are due ------------------------------------

def dependent_profile_name(profile, job_id):
    """The name a dependent job's profile is registered under: its own, never shared (Batsim 4.2.1
    keeps no profile that no static job uses, and deletes a dynamic one after its first job
    without profile reuse)."""
    return f"{profile}@{job_id.split('!', 1)[1]}"


@dataclass
class Dependent:
    """A dependent job waiting for its parents: its full id, its description, the parents left."""
    id: str
    workload: str
    description: dict
    waiting: set = field(default_factory=set)


class DependencyBook:
    """The dependent jobs of a run, submitted when their last parent completes.

    ``ended(full id, succeeded)`` says which become due: ``ready`` (every
    parent completed: register and schedule them) and ``doomed`` (a parent
    failed, was killed or rejected: register and reject them, and, in turn,
    their descendants), children before grandchildren."""

    def __init__(self):
        self.waiting = {}          # full id -> Dependent not yet due
        self.children = {}         # full id of a parent -> [full ids of its dependents]

    def add_workload(self, name, jobs):
        for j in jobs:
            d = Dependent(f"{name}!{j['id']}", name, j, {f"{name}!{p}" for p in parents(j)})
            self.waiting[d.id] = d
            for p in d.waiting:
                self.children.setdefault(p, []).append(d.id)

    def __len__(self):
        return len(self.waiting)

    def ended(self, job_id, succeeded):
        """Job `job_id` ended: (ready, doomed) Dependents, each now out of the book."""
        ready, doomed = [], []
        failed = [] if succeeded else [job_id]
        for c in self.children.pop(job_id, ()) if succeeded else ():
            d = self.waiting.get(c)
            if d is None:
                continue
            d.waiting.discard(job_id)
            if not d.waiting:
                ready.append(self.waiting.pop(c))
        while failed:
            for c in self.children.pop(failed.pop(0), ()):
                d = self.waiting.pop(c, None)
                if d is not None:
                    doomed.append(d)
                    failed.append(c)
        return ready, doomed
