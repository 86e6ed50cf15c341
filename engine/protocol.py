"""Reading and writing Batsim messages: JSON bytes on the wire, interval sets, SIMULATION_BEGINS's content.

orjson when available (several times faster on the many small messages of a
run), the standard library otherwise; both give the same numbers.
"""

import json

from .errors import EngineError

try:
    import orjson

    def encode(message):
        try:
            return orjson.dumps(message)
        except TypeError:   # an integer beyond 64 bits (a workload's own field): the standard library writes it
            return json.dumps(message, separators=(",", ":")).encode()

    decode = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, this keeps the engine usable without it
    def encode(message):
        return json.dumps(message, separators=(",", ":")).encode()

    decode = json.loads


def batsim_doubles(value):
    """`value` with every float as Batsim 4.2.1 writes it: its JSON writer prints a double with "%6f"
    (``protocol.hpp``), six decimals, whatever the input held (a job's subtime 57.245384205516594 reaches the
    scheduler as 57.245384, before the clock that the message's `now`, also printed so, tells). The same
    object when nothing changes; integers stay integers, as in Batsim's documents."""
    if type(value) is float:
        return float(f"{value:.6f}")
    if type(value) is dict:
        out = None
        for key, item in value.items():
            new = batsim_doubles(item)
            if new is not item and out is None:
                out = dict(value)
            if out is not None:
                out[key] = new
        return value if out is None else out
    if type(value) is list:
        new = [batsim_doubles(item) for item in value]
        return value if all(a is b for a, b in zip(new, value)) else new
    return value


def simulation_begins(platform, workloads, opt):
    """The SIMULATION_BEGINS data: resources, Batsim's config keys, and every workload's profiles."""
    return {
        "nb_resources": len(platform.resources),
        "nb_compute_resources": len(platform.compute),
        "nb_storage_resources": len(platform.storage),
        "allow_compute_sharing": False,
        "allow_storage_sharing": True,
        "config": {
            "redis-enabled": False,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": opt.forward_profiles,
            "dynamic-jobs-enabled": opt.dynamic_jobs,
            "dynamic-jobs-acknowledged": opt.ack_dynamic,
            "profile-reuse-enabled": opt.profile_reuse,
            "forward-unknown-events": False,
        },
        "compute_resources": [r.describe() for r in platform.compute],
        "storage_resources": [r.describe() for r in platform.storage],
        "workloads": {w.name: w.path for w in workloads},
        "profiles": {w.name: batsim_doubles(w.profiles) for w in workloads},
    }


def parse_intervals(text, limit):
    """'0-3 5 7-8' → [0, 1, 2, 3, 5, 7, 8] (Batsim's interval-set notation), every id below `limit`.

    Ids are checked before ranges are expanded, so '0-2000000000' is refused, not allocated.
    """
    if not isinstance(text, str):
        raise EngineError(f"an allocation is a string like '0-3 5', got {text!r}")
    parts = text.replace(",", " ").split()
    if parts and all(p.isdigit() for p in parts):  # the common "3 4 5" form, without ranges
        bounds = [(int(p), int(p)) for p in parts]
    else:
        bounds = []
        try:
            for part in parts:
                lo, _, hi = part.partition("-")
                lo = int(lo)
                hi = int(hi) if hi else lo
                if hi < lo or lo < 0:
                    raise ValueError
                bounds.append((lo, hi))
        except ValueError:
            raise EngineError(f"cannot read allocation {text!r} (expected e.g. '0-3 5')") from None
    if not bounds:
        raise EngineError("empty allocation")
    top = max(hi for _, hi in bounds)
    if top >= limit:
        raise EngineError(f"resource {top} does not exist (the platform has ids 0-{limit - 1})")
    ids = []
    for lo, hi in bounds:
        ids.extend(range(lo, hi + 1))
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
