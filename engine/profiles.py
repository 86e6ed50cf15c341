"""Profiles: checking their fields, and turning one into the phases a job goes through.

A phase is either a `Delay` (kept in the engine's own timer heap) or `Work`
(executions and transfers that SimGrid's flow model must time). Jobs walk
through their phases with a generator, so `sequence` nests for free.
"""

from . import usage_trace
from .checks import integer, number
from batloc.reading import excerpt

from .errors import EngineError


class Delay:
    __slots__ = ("seconds",)

    def __init__(self, seconds):
        self.seconds = seconds


class Work:
    """Executions (host, flops) and transfers (src host, dst host, bytes) that end together."""

    __slots__ = ("execs", "comms")

    def __init__(self, execs=(), comms=()):
        self.execs = [e for e in execs if e[1] > 0]
        self.comms = [c for c in comms if c[2] > 0]


_FIELDS = {
    "delay": ("delay",),
    "parallel": ("cpu", "com"),
    "parallel_homogeneous": ("cpu", "com"),
    "parallel_homogeneous_total": ("cpu", "com"),
    "parallel_homogeneous_pfs": (),
    "data_staging": ("nb_bytes",),
    "sequence": ("seq",),
    "composed": ("seq",),
    "usage_trace": ("trace",),
}
KNOWN_TYPES = tuple(_FIELDS)
# Batsim 4.2.1's other profile types (profiles.cpp), and why the engine cannot run them
UNSUPPORTED = {
    "smpi": "it replays MPI traces with SimGrid's SMPI, which SimGrid's Python bindings do not offer",
    "send": "Batsim's scheduler-message profiles (send, recv) are not implemented",
    "recv": "Batsim's scheduler-message profiles (send, recv) are not implemented",
}


def check_profile(profile, where, profiles):
    """Raise EngineError naming `where` if the profile cannot be run."""
    if not isinstance(profile, dict) or "type" not in profile:
        raise EngineError(f"{where}: a profile is an object with a 'type'")
    ptype = profile["type"]
    if isinstance(ptype, str) and ptype in UNSUPPORTED:
        raise EngineError(f"{where}: profile type {excerpt(ptype)} is not supported: {UNSUPPORTED[ptype]}")
    if not isinstance(ptype, str) or ptype not in _FIELDS:
        raise EngineError(f"{where}: unknown profile type {excerpt(ptype)} (known: {', '.join(KNOWN_TYPES)})")
    for field in _FIELDS[ptype]:
        if field not in profile:
            raise EngineError(f"{where}: a {ptype} profile needs the field {field!r}")
    if ptype == "parallel":
        _check_parallel(profile, where)
        return
    for field in ("delay", "cpu", "com", "nb_bytes", "bytes_to_read", "bytes_to_write"):
        if field in profile:
            number(profile[field], field, where, minimum=0)
    if ptype == "delay" and float(profile["delay"]) == 0:
        # Batsim 4.2.1 aborts on it (profiles.cpp: "non-strictly-positive 'delay'"): a workload the engine
        # ran would not run on Batsim. A job of no work is a parallel_homogeneous of cpu 0 and com 0.
        raise EngineError(f"{where}: delay must be > 0 (Batsim 4.2.1 refuses a delay of 0 s; a job that does "
                          f"nothing is a parallel_homogeneous profile with cpu 0 and com 0)")
    if ptype == "usage_trace" and not isinstance(profile["trace"], str):
        raise EngineError(f"{where}: trace must be a file name (a string), got {excerpt(profile['trace'])}")
    for field in ("from", "to", "storage"):
        if field in profile and not isinstance(profile[field], str):
            raise EngineError(f"{where}: {field} must be a storage label (a string), got {excerpt(profile[field])}")
    if "ret" in profile:
        integer(profile["ret"], "ret (the return code)", where)
    if ptype in ("sequence", "composed"):
        seq = profile["seq"]
        if not isinstance(seq, list) or not seq:
            raise EngineError(f"{where}: seq must be a non-empty list of profile names")
        for name in seq:
            if not isinstance(name, str) or (profiles is not None and name not in profiles):
                raise EngineError(f"{where}: seq names profile {excerpt(name)}, which is not defined")
        integer(profile.get("repeat", 1), "repeat", where, minimum=1)
        if profiles is not None:
            _check_acyclic(profile, where, profiles)


def _check_parallel(profile, where):
    """Batsim's ptask: `cpu` flops per host (n numbers), `com` bytes from host i to host j (n × n, row i)."""
    cpu, com = profile["cpu"], profile["com"]
    if not isinstance(cpu, list) or not cpu:
        raise EngineError(f"{where}: a parallel profile's cpu is a non-empty list of flops, one per host")
    if not isinstance(com, list) or len(com) != len(cpu) ** 2:
        raise EngineError(f"{where}: a parallel profile's com is a list of {len(cpu)} x {len(cpu)} byte amounts "
                          f"(host i to host j at i * {len(cpu)} + j), got {len(com) if isinstance(com, list) else excerpt(com)}")
    for i, value in enumerate(cpu):
        number(value, f"cpu[{i}]", where, minimum=0)
    for i, value in enumerate(com):
        number(value, f"com[{i}]", where, minimum=0)
    if "ret" in profile:
        integer(profile["ret"], "ret (the return code)", where)


def _check_acyclic(profile, where, profiles, path=(), done=None):
    """A sequence that contains itself, directly or not, would never end."""
    done = set() if done is None else done   # names already known to end
    for name in profile["seq"]:
        if name in path:
            raise EngineError(f"{where}: seq contains itself through {' -> '.join(path + (name,))}")
        inner = profiles.get(name)
        if name not in done and isinstance(inner, dict) and inner.get("type") in ("sequence", "composed") \
                and isinstance(inner.get("seq"), list):
            _check_acyclic(inner, where, profiles, path + (name,), done)
        done.add(name)


def phases(profile, profiles, hosts, storage, traces=None, trail=None, name=None):
    """Yield the phases of `profile` (named `name`) run on `hosts`; `storage(label)` maps a storage label to a host,
    `traces` a usage trace's `trace` field to its ranks' actions (``usage_trace.read_trace``).

    `trail` (a list) is kept as where the job is in its profile tree, which Batsim's JOB_KILLED tells: one
    [name, task index] per sequence level (Batsim's ``current_task_index``: iteration x length + index), then the
    phase's [name, phase]."""
    if trail is None:
        trail = []
    ptype = profile["type"]
    if ptype in ("sequence", "composed"):
        here = [name, -1]
        trail.append(here)
        depth = len(trail)
        seq = profile["seq"]
        for r in range(profile.get("repeat", 1)):
            for i, sub in enumerate(seq):
                here[1] = r * len(seq) + i
                yield from phases(profiles[sub], profiles, hosts, storage, traces, trail, sub)
                del trail[depth:]
        return
    for phase in _leaf(profile, hosts, storage, traces):
        trail.append([name, phase])
        yield phase


def _leaf(profile, hosts, storage, traces):
    ptype = profile["type"]
    if ptype == "delay":
        yield Delay(float(profile["delay"]))
    elif ptype == "usage_trace":
        yield usage_trace.phase(traces[profile["trace"]], hosts)
    elif ptype == "parallel":
        n = len(profile["cpu"])
        if len(hosts) != n:
            raise EngineError(f"its parallel profile is for {n} hosts, the allocation has {len(hosts)} (Batsim 4.2.1 "
                              "refuses it too)")
        com = profile["com"]
        yield Work(execs=[(h, float(f)) for h, f in zip(hosts, profile["cpu"])],
                   comms=[(a, b, float(com[i * n + j])) for i, a in enumerate(hosts) for j, b in enumerate(hosts)])
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        cpu, com, n = float(profile["cpu"]), float(profile["com"]), len(hosts)
        if ptype == "parallel_homogeneous_total":
            # Batsim 4.2.1 (task_execution.cpp) spreads both amounts over the n hosts: com / n per host pair
            cpu = cpu / n
            com = com / n
        yield Work(
            execs=[(h, cpu) for h in hosts],
            comms=[(a, b, com) for a in hosts for b in hosts if a is not b],
        )
    elif ptype == "parallel_homogeneous_pfs":
        pfs = storage(profile.get("storage", "pfs"))
        read, write = float(profile.get("bytes_to_read", 0)), float(profile.get("bytes_to_write", 0))
        yield Work(comms=[(pfs, h, read) for h in hosts] + [(h, pfs, write) for h in hosts])
    elif ptype == "data_staging":
        src, dst = storage(profile.get("from", "pfs")), storage(profile.get("to", "mem"))
        yield Work(comms=[(src, dst, float(profile["nb_bytes"]))])
    else:  # check_profile rejected it already; kept for profiles registered unchecked
        raise EngineError(f"unknown profile type {ptype!r}")
