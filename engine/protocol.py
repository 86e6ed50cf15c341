"""Reading and writing Batsim messages: JSON bytes on the wire, interval sets, SIMULATION_BEGINS's content.

orjson when available (several times faster on the many small messages of a
run), the standard library otherwise; both give the same numbers.
"""

import json
import re

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


# RapidJSON 1.1's powers of ten (internal/pow10.h): the C literals 1e+0 ... 1e+308, each correctly rounded
_POW10 = [float(f"1e{n}") for n in range(309)]
# A number RapidJSON's default parser may read otherwise than a correctly rounded one: 16 significant digits or
# more (17 characters with the point), or an exponent. Other numbers read the same both ways.
LONG_NUMBER = re.compile(rb"[0-9.]{17,}|[0-9.][eE][-+]?[0-9]")
# The same test without the regex (which costs 7 times orjson's parse of a scheduler's answer): each byte mapped
# to its class (digit d, point p, e or E, sign s, other x), then plain substring searches
def _classes(**members):
    table = bytearray(b"x" * 256)
    for cls, chars in members.items():
        for c in chars.encode():
            table[c] = ord(cls)
    return bytes(table)


_RUNS = _classes(d="0123456789.")
_CLASSES = _classes(d="0123456789", p=".", e="eE", s="+-")


def has_long_number(raw):
    """Whether LONG_NUMBER matches somewhere in `raw` (bytes)."""
    if b"d" * 17 in raw.translate(_RUNS):
        return True
    classes = raw.translate(_CLASSES)
    return b"ded" in classes or b"ped" in classes or b"desd" in classes or b"pesd" in classes


def rapidjson_float(text):
    """A JSON number with a fraction or an exponent as Batsim 4.2.1 reads it: RapidJSON's default parser
    (``reader.h`` ParseNumber, ``StrtodNormalPrecision``; Batsim parses every document without
    kParseFullPrecisionFlag), which keeps at most 17 significant digits, rounds the significand to a double, then
    multiplies or divides it by an exact power of ten: so "100000000000.00003" reads one double above the
    nearest one (10^16 + 3 rounds to 10^16 + 4 before the division). Identical to a correct reading for numbers
    of 15 significant digits or fewer."""
    n, i = len(text), 0
    minus = text[0] == "-"
    if minus:
        i = 1
    u, big, use64, sig = 0, 0, False, 0
    if text[i] == "0":
        i += 1
    else:
        u = ord(text[i]) - 48
        i += 1
        limit, last = (214748364, 8) if minus else (429496729, 5)
        while i < n and "0" <= text[i] <= "9":
            if u >= limit and (u != limit or ord(text[i]) - 48 > last):
                big, use64 = u, True
                break
            u = u * 10 + ord(text[i]) - 48
            sig += 1
            i += 1
    d, use_double = 0.0, False
    if use64:
        limit, last = (0x0CCCCCCCCCCCCCCC, 8) if minus else (0x1999999999999999, 5)
        while i < n and "0" <= text[i] <= "9":
            if big >= limit and (big != limit or ord(text[i]) - 48 > last):
                d, use_double = float(big), True
                break
            big = big * 10 + ord(text[i]) - 48
            sig += 1
            i += 1
    if use_double:
        while i < n and "0" <= text[i] <= "9":
            d = d * 10 + (ord(text[i]) - 48)
            i += 1
    exp_frac = 0
    if i < n and text[i] == ".":
        i += 1
        if not use_double:
            if not use64:
                big = u
            while i < n and "0" <= text[i] <= "9":
                if big > 0x1FFFFFFFFFFFFF:   # 2^53 - 1: the significand no longer fits a double exactly
                    break
                big = big * 10 + ord(text[i]) - 48
                exp_frac -= 1
                if big != 0:
                    sig += 1
                i += 1
            d, use_double = float(big), True
        while i < n and "0" <= text[i] <= "9":
            if sig < 17:
                d = d * 10.0 + (ord(text[i]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    sig += 1
            i += 1
    exp = 0
    if i < n and text[i] in "eE":
        if not use_double:
            d, use_double = float(big if use64 else u), True
        i += 1
        exp_minus = text[i] == "-"
        if text[i] in "+-":
            i += 1
        exp = int(text[i:])
        if exp_minus:
            exp = -exp
    p = exp + exp_frac
    if p < -308:
        d = _fast_path(_fast_path(d, -308), p + 308)
    else:
        d = _fast_path(d, p)
    return -d if minus else d


def _fast_path(significand, exp):
    if exp < -308:
        return 0.0
    if exp >= 0:
        return significand * _POW10[exp] if exp <= 308 else float("inf")
    return significand / _POW10[-exp]


def decode_batsim(raw):
    """A JSON document (bytes) with its numbers read as Batsim reads them (``rapidjson_float``): correctly
    rounded by orjson unless a number is long enough for RapidJSON to read it otherwise."""
    if not has_long_number(raw):
        return decode(raw)
    return json.loads(raw, parse_float=rapidjson_float)


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
