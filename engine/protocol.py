"""Reading and writing Batsim messages: JSON bytes on the wire, and the content of SIMULATION_BEGINS.

orjson when available (several times faster on the many small messages of a
run), the standard library otherwise; both give the same numbers.
"""

try:
    import orjson

    def encode(message):
        return orjson.dumps(message)

    decode = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, this keeps the engine usable without it
    import json

    def encode(message):
        return json.dumps(message, separators=(",", ":")).encode()

    decode = json.loads


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
        "profiles": {w.name: w.profiles for w in workloads},
    }
