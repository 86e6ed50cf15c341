"""WfCommons instances (WfFormat JSON) -> batloc workflows in a Batsim workload (contract §2b).

  batloc workload from-wfcommons 1000genome.json montage.json -o wf.json \\
      --background week.json --start 2d --every 6h --copies 2 --size-scale 1000

Each instance becomes a workflow: a task is a single-node job of its
``coreCount`` cores (at least 1, and at least its files' (read and written) share of a node's
memory, as the paper's rule of cores/20 x 128 GB has it, so that the files of
the jobs running on a node fit in its memory; at most ``--max-cores``) running for its
``runtimeInSeconds`` x ``--runtime-scale`` (a ``delay`` profile, at least 1 µs: Batsim
refuses a delay of 0); it reads its
``inputFiles`` and writes its ``outputFiles`` (sizes x ``--size-scale``). A
task without parents is a job of the workload's ``jobs``, submitted at its
workflow's arrival; the others are ``dependent_jobs``, submitted when their
last parent completes. A file some task writes is an output (its id prefixed
by the workflow's, so that copies do not share it); every other file is an
input on Lustre, shared by every copy that reads it (a reference genome, a
sky survey's tiles). Walltime: ``--walltime-factor`` x (run time + its
files' load at ``--bandwidth``), at least ``--min-walltime``.

Arrivals fold the workflows into a cluster's background load (a workload
from ``batloc workload synth`` or a trace): workflow i arrives at ``--start``
+ i x ``--every``; job ids continue after the background's. Schema versions
1.4 (``workflow.tasks`` with ``files``) and 1.5-1.6 (``specification`` /
``execution``) are read.
"""

import json
import math
from dataclasses import dataclass, field

from batloc.locality.workflow import DEPENDENT_KEY, WorkflowError, check, topological
from batloc.reading import INSTANCE_BYTES, excerpt

from .errors import WorkloadError
from .export import profile_name, written_whole
from .source import read_json

MIN_DELAY = 1e-6     # s: the protocol's resolution; Batsim needs a delay > 0


@dataclass
class Task:
    id: str
    name: str
    parents: list
    runtime: float
    cores: float = 1.0
    inputs: list = field(default_factory=list)      # file ids
    outputs: list = field(default_factory=list)


@dataclass
class Instance:
    name: str
    tasks: list          # Task, in the instance's order
    sizes: dict          # file id -> bytes


def read_instance(path):
    """An Instance from a WfFormat file; WorkloadError names the file and the task at fault."""
    doc = read_json(path, INSTANCE_BYTES, "WfCommons instance")
    wf = doc.get("workflow") if isinstance(doc, dict) else None
    if not isinstance(wf, dict):
        raise WorkloadError(f"{path}: not a WfCommons instance (no 'workflow' object)")
    name = str(doc.get("name") or path)
    try:
        if "specification" in wf:
            instance = _instance_15(name, wf)
        elif "tasks" in wf:
            instance = _instance_14(name, wf)
        else:
            raise WorkloadError(f"{path}: not a WfCommons instance (no workflow.specification or workflow.tasks)")
        # here, in the instance's own task ids: the converted workload's check names only its job numbers
        topological({t.id: {"parents": t.parents} for t in instance.tasks})
    except WorkflowError as exc:
        raise WorkloadError(f"{path}: {str(exc).replace('job ', 'task ', 1)}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise WorkloadError(f"{path}: {exc}") from None
    return instance


def _number(value, what):
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {excerpt(value)}")
    return x


def _instance_15(name, wf):
    spec = wf["specification"]
    sizes = {str(f["id"]): _number(f["sizeInBytes"], f"file {f['id']}: sizeInBytes") for f in spec.get("files", [])}
    runs = {str(t["id"]): t for t in (wf.get("execution") or {}).get("tasks", [])}
    tasks = []
    for t in spec["tasks"]:
        tid = str(t["id"])
        run = runs.get(tid)
        if run is None:
            raise ValueError(f"task {tid} has no execution entry (its runtimeInSeconds)")
        for f in list(t.get("inputFiles", [])) + list(t.get("outputFiles", [])):
            if str(f) not in sizes:
                raise ValueError(f"task {tid}: file {f} is not in specification.files")
        tasks.append(Task(tid, str(t.get("name", tid)), [str(p) for p in t.get("parents", [])],
                          _number(run["runtimeInSeconds"], f"task {tid}: runtimeInSeconds"),
                          _number(run.get("coreCount", 1) or 1, f"task {tid}: coreCount"),
                          [str(f) for f in t.get("inputFiles", [])], [str(f) for f in t.get("outputFiles", [])]))
    return Instance(name, tasks, sizes)


def _instance_14(name, wf):
    tasks, sizes = [], {}
    by_name = {}
    for t in wf["tasks"]:
        tid = str(t.get("id") or t["name"])
        by_name[str(t["name"])] = tid
    for t in wf["tasks"]:
        tid = str(t.get("id") or t["name"])
        runtime = t.get("runtimeInSeconds", t.get("runtime"))
        task = Task(tid, str(t["name"]), [by_name.get(str(p), str(p)) for p in t.get("parents", [])],
                    _number(runtime, f"task {tid}: runtime"), _number(t.get("cores", 1) or 1, f"task {tid}: cores"))
        for f in t.get("files", []):
            fid = str(f.get("id") or f["name"])
            size = f.get("sizeInBytes")
            if size is None:       # 1.0-1.3: `size` in KB
                size = _number(f["size"], f"task {tid}: file {fid}: size") * 1000
            sizes[fid] = _number(size, f"task {tid}: file {fid}: sizeInBytes")
            (task.outputs if f.get("link") == "output" else task.inputs).append(fid)
        tasks.append(task)
    return Instance(name, tasks, sizes)


@dataclass
class Scaling:
    runtime_scale: float = 1.0
    size_scale: float = 1.0
    max_cores: int = 20
    walltime_factor: float = 2.0
    min_walltime: float = 60.0
    bandwidth: float = 0.1e9          # bytes/s, for walltimes (Rackham's node link)
    node_memory: float = 128e9        # bytes: a task asks for its files' share of it in cores


def workflow_jobs(inst, wf_id, arrival, first_id, scaling, user=None):
    """(static jobs, dependent jobs, profiles) of one workflow of `inst`, arriving at `arrival`,
    its jobs numbered from `first_id`."""
    ids = {t.id: str(first_id + i) for i, t in enumerate(inst.tasks)}
    written = {f for t in inst.tasks for f in t.outputs}

    def named(f):
        return f"{wf_id}/{f}" if f in written else f

    static, dependent, profiles = [], [], {}
    for t in inst.tasks:
        for p in t.parents:
            if p not in ids:
                raise WorkloadError(f"{inst.name}: task {t.id}: parent {p} is not a task of the instance")
        # Batsim 4.2.1 refuses a delay profile of 0 s ("non-strictly-positive 'delay'"; recipes' instances
        # hold such tasks): the protocol's least time, 1 µs, instead
        delay = max(round(t.runtime * scaling.runtime_scale, 6), MIN_DELAY)
        pname = profile_name(delay)
        profiles[pname] = {"type": "delay", "delay": delay}
        reads = [{"file": named(f), "size": inst.sizes[f] * scaling.size_scale} for f in dict.fromkeys(t.inputs)]
        writes = [{"file": named(f), "size": inst.sizes[f] * scaling.size_scale} for f in dict.fromkeys(t.outputs)]
        volume = sum(r["size"] for r in reads)
        if volume > scaling.node_memory:
            raise WorkloadError(f"{inst.name}: task {t.id} reads {volume:.6g} bytes, more than a node's memory "
                                f"({scaling.node_memory:.6g}): lower --size-scale")
        load = volume / scaling.bandwidth
        # what it reads and what it writes are in its node's memory together at its end
        held = volume + sum(w["size"] for w in writes)
        if held > scaling.node_memory:
            raise WorkloadError(f"{inst.name}: task {t.id} reads and writes {held:.6g} bytes, more than a node's "
                                f"memory ({scaling.node_memory:.6g}): lower --size-scale")
        share = math.ceil(held / (scaling.node_memory / scaling.max_cores) - 1e-9)
        walltime = max(scaling.min_walltime, math.ceil(scaling.walltime_factor * (delay + load)))
        job = {"id": ids[t.id], "subtime": arrival, "res": int(min(scaling.max_cores, max(1, math.ceil(t.cores), share))),
               "walltime": walltime, "profile": pname, "user": user or f"wf-{inst.name}", "evaluated": True,
               "workflow": wf_id, "task": t.name, "task_id": t.id, "inputs": reads, "outputs": writes}
        if t.parents:
            job["parents"] = [ids[p] for p in dict.fromkeys(t.parents)]
            dependent.append(job)
        else:
            static.append(job)
    return static, dependent, profiles


def build(instances, background=None, start=0.0, every=3600.0, copies=1, scaling=None, nb_res=None):
    """The workload document: the background's jobs and the workflows' (each instance `copies` times,
    in turn), workflow i arriving at start + i x every."""
    scaling = scaling or Scaling()
    doc = {"nb_res": nb_res, "jobs": [], DEPENDENT_KEY: [], "profiles": {}, "batloc": {}}
    if background is not None:
        doc["jobs"] = list(background.get("jobs", []))
        doc["profiles"] = dict(background.get("profiles", {}))
        doc["nb_res"] = nb_res or background.get("nb_res")
        doc["batloc"] = {"background": background.get("batloc", {})}
        doc[DEPENDENT_KEY] = list(background.get(DEPENDENT_KEY, []))
    used = [int(j["id"]) for j in doc["jobs"] + doc[DEPENDENT_KEY] if str(j["id"]).isdigit()]
    next_id = max(used, default=0) + 1
    workflows = []
    order = [inst for _ in range(copies) for inst in instances]
    for i, inst in enumerate(order):
        wf_id = f"wf{i}"
        arrival = start + i * every
        static, dependent, profiles = workflow_jobs(inst, wf_id, arrival, next_id, scaling)
        next_id += len(inst.tasks)
        for pname, prof in profiles.items():
            old = doc["profiles"].get(pname)
            if old is not None and old != prof:
                raise WorkloadError(f"profile {pname} of {inst.name} differs from the background's")
            doc["profiles"][pname] = prof
        doc["jobs"] += static
        doc[DEPENDENT_KEY] += dependent
        workflows.append({"id": wf_id, "instance": inst.name, "arrival": arrival, "tasks": len(inst.tasks),
                          "roots": len(static)})
    doc["jobs"].sort(key=lambda j: float(j["subtime"]))
    if doc["nb_res"] is None:
        doc["nb_res"] = max((int(j["res"]) for j in doc["jobs"]), default=1)
    doc["batloc"]["workflows"] = workflows
    doc["batloc"]["wfcommons"] = {"runtime_scale": scaling.runtime_scale, "size_scale": scaling.size_scale,
                                  "start": start, "every": every, "copies": copies}
    try:
        check(doc, "the converted workload")
    except WorkflowError as exc:
        raise WorkloadError(str(exc)) from None
    return doc


def write(doc, path):
    """The document as a Batsim workload, one job per line."""
    with written_whole(path) as out:
        out.write("{\n")
        for key in ("nb_res", "batloc", "profiles"):
            out.write(f"{json.dumps(key)}: {json.dumps(doc[key])},\n")
        for key in ("jobs", DEPENDENT_KEY):
            out.write(f"{json.dumps(key)}: [\n")
            out.write(",\n".join(json.dumps(j) for j in doc[key]))
            out.write("\n]" + ("," if key == "jobs" else "") + "\n")
        out.write("}\n")
