"""Parse the sizes, bandwidths and durations that users type on command lines.

Decimal prefixes throughout (1 GB = 1e9 bytes), as the paper writes sizes and
bandwidths in GB and GB/s: only their ratio (load time) matters, so one
consistent convention is enough. Binary prefixes (GiB) are accepted too.
"""

import re

_PREFIX = {
    "": 1.0,
    "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
}

_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGTP]i?)?\s*(.*?)\s*$")

_DURATION = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9,
             "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def _split(text, what):
    match = _QUANTITY.match(str(text))
    if not match:
        raise ValueError(f"cannot read {what} {text!r}")
    return float(match.group(1)), match.group(2) or "", match.group(3)


def parse_bytes(text) -> float:
    """'128GB', '1TiB', '1.5e9' → bytes."""
    value, prefix, unit = _split(text, "size")
    if unit not in ("", "B"):
        raise ValueError(f"cannot read size {text!r} (expected e.g. 128GB, 1TiB)")
    return value * _PREFIX[prefix]


def parse_bandwidth(text) -> float:
    """'0.1GB/s', '100MBps', '1e8' → bytes per second."""
    value, prefix, unit = _split(text, "bandwidth")
    if unit not in ("", "B/s", "Bps", "B"):
        raise ValueError(f"cannot read bandwidth {text!r} (expected e.g. 0.1GB/s)")
    return value * _PREFIX[prefix]


def parse_duration(text) -> float:
    """'800', '800s', '5min', '7d', '2us' → seconds."""
    value, prefix, unit = _split(text, "duration")
    unit = prefix + unit  # 'm'/'ms' are units here, not prefixes
    if unit not in _DURATION:
        raise ValueError(f"cannot read duration {text!r} (expected e.g. 800s, 5min, 7d)")
    return value * _DURATION[unit]
