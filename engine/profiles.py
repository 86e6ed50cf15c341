"""Profiles: checking their fields, and turning one into the phases a job goes through.

A phase is either a `Delay` (kept in the engine's own timer heap) or `Work`
(executions and transfers that SimGrid's flow model must time). Jobs walk
through their phases with a generator, so `sequence` nests for free.
"""

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
    "parallel_homogeneous": ("cpu", "com"),
    "parallel_homogeneous_total": ("cpu", "com"),
    "parallel_homogeneous_pfs": (),
    "data_staging": ("nb_bytes",),
    "sequence": ("seq",),
    "composed": ("seq",),
}
KNOWN_TYPES = tuple(_FIELDS)


def check_profile(profile, where, profiles):
    """Raise EngineError naming `where` if the profile cannot be run."""
    if not isinstance(profile, dict) or "type" not in profile:
        raise EngineError(f"{where}: a profile is an object with a 'type'")
    ptype = profile["type"]
    if ptype not in _FIELDS:
        raise EngineError(f"{where}: unknown profile type {ptype!r} (known: {', '.join(KNOWN_TYPES)})")
    for field in _FIELDS[ptype]:
        if field not in profile:
            raise EngineError(f"{where}: a {ptype} profile needs the field {field!r}")
    for field in ("delay", "cpu", "com", "nb_bytes", "bytes_to_read", "bytes_to_write"):
        if field in profile:
            value = profile[field]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise EngineError(f"{where}: {field} must be a non-negative number, got {value!r}")
    if "ret" in profile and (isinstance(profile["ret"], bool) or not isinstance(profile["ret"], int)):
        raise EngineError(f"{where}: ret must be an integer return code")
    if ptype in ("sequence", "composed"):
        seq = profile["seq"]
        if not isinstance(seq, list) or not seq:
            raise EngineError(f"{where}: seq must be a non-empty list of profile names")
        for name in seq:
            if profiles is not None and name not in profiles:
                raise EngineError(f"{where}: seq names profile {name!r}, which is not defined")
        repeat = profile.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise EngineError(f"{where}: repeat must be a positive integer")


def phases(profile, profiles, hosts, storage):
    """Yield the phases of `profile` run on `hosts`; `storage(label)` maps a storage label to a host."""
    ptype = profile["type"]
    if ptype == "delay":
        yield Delay(float(profile["delay"]))
    elif ptype in ("sequence", "composed"):
        for _ in range(profile.get("repeat", 1)):
            for name in profile["seq"]:
                yield from phases(profiles[name], profiles, hosts, storage)
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        cpu, com, n = float(profile["cpu"]), float(profile["com"]), len(hosts)
        if ptype == "parallel_homogeneous_total":
            cpu = cpu / n
            com = com / (n * (n - 1)) if n > 1 else 0.0
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


def parse_intervals(text):
    """'0-3 5 7-8' → [0, 1, 2, 3, 5, 7, 8] (Batsim's interval-set notation)."""
    if isinstance(text, str):
        parts = text.split()
        if parts and all(p.isdigit() for p in parts):  # the common "3 4 5" form, without ranges
            return [int(p) for p in parts]
    ids = []
    try:
        for part in str(text).replace(",", " ").split():
            lo, _, hi = part.partition("-")
            lo = int(lo)
            hi = int(hi) if hi else lo
            if hi < lo:
                raise ValueError
            ids.extend(range(lo, hi + 1))
    except ValueError:
        raise EngineError(f"cannot read allocation {text!r} (expected e.g. '0-3 5')") from None
    if not ids:
        raise EngineError("empty allocation")
    return ids


def format_intervals(ids):
    """[0, 1, 2, 3, 5] → '0-3 5', as Batsim writes allocations."""
    out = []
    ids = sorted(ids)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(out)
