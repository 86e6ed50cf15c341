"""The platform as Batsim resources: SimGrid hosts numbered and classified per the contract.

Numbered as Batsim 4.2 does (``batloc.platforms.numbering``, contract §1):
compute hosts first by name, then `role=storage` hosts by name; the master
host gets no id.
"""

import math
import os
import xml.etree.ElementTree as ET

from batloc.platforms.numbering import COMPUTE, MASTER, STORAGE, number_hosts

from .errors import EngineError

SIMGRID_CONFIG = [
    # the paper's load model: S bytes over B bytes/s take S/B (+ latency), no TCP correction factors
    "--cfg=network/model:CM02",
    # SimGrid otherwise adds 5 % acknowledgement cross-traffic on SHARED links
    "--cfg=network/crosstraffic:0",
    "--log=root.thresh:warning",
    "--log=xbt_cfg.thresh:warning",
]


# Batsim's roles ("compute_node" is its own name for a compute host)
ROLES = (COMPUTE, "compute_node", STORAGE, MASTER)
# the contract's numeric properties of storage hosts (§6), read by schedulers and the staging proxy
CONTRACT_NUMBERS = ("memory_bytes", "bandwidth")


class Resource:
    __slots__ = ("id", "name", "host", "kind", "properties")

    def __init__(self, rid, name, host, kind, properties):
        self.id = rid
        self.name = name
        self.host = host
        self.kind = kind
        self.properties = properties

    def describe(self):
        return {"id": self.id, "name": self.name, "state": "idle", "properties": dict(self.properties)}


class Platform:
    def __init__(self, path, resources, master, varies=True):
        self.path = path
        self.resources = resources
        self.master = master
        self.varies = varies   # whether a speed, bandwidth or state may change over time (a profile)
        self.compute = [r for r in resources if r.kind == "compute"]
        self.storage = [r for r in resources if r.kind == "storage"]


def _host_properties(host):
    getter = getattr(host, "get_properties", None)
    if getter is not None:
        return {str(k): str(v) for k, v in getter().items()}
    return {}


def _check_numbers(path, engine, hosts, props):
    """SimGrid accepts NaN, infinite or negative speeds and bandwidths; they would freeze or garble the clock."""
    for name in sorted(hosts):
        speed = hosts[name].speed
        if not (math.isfinite(speed) and speed > 0):
            raise EngineError(f"{path}: host {name!r}: speed must be a finite number > 0, got {speed!r} flop/s")
        role = props[name].get("role", COMPUTE)
        if role not in ROLES:
            raise EngineError(f"{path}: host {name!r}: unknown role {role!r} (known: {', '.join(ROLES)})")
        for key in CONTRACT_NUMBERS if role == STORAGE else ():
            if key in props[name]:
                try:
                    value = float(props[name][key])
                except ValueError:
                    value = math.nan
                if not (math.isfinite(value) and value > 0):
                    raise EngineError(f"{path}: host {name!r}: property {key} must be a finite number > 0, "
                                      f"got {props[name][key]!r}")
    for link in sorted(engine.all_links, key=lambda l: l.name):
        if not (math.isfinite(link.bandwidth) and link.bandwidth > 0):
            raise EngineError(f"{path}: link {link.name!r}: bandwidth must be a finite number > 0, "
                              f"got {link.bandwidth!r} B/s")
        if not (math.isfinite(link.latency) and link.latency >= 0):
            raise EngineError(f"{path}: link {link.name!r}: latency must be a finite number >= 0, got {link.latency!r} s")


def varies(path):
    """Whether the platform gives a host or link a profile (`speed_file`, `bandwidth_file`, …, a `<trace>`)."""
    for element in ET.parse(path).iter():
        if element.tag in ("trace", "trace_connect", "include") or any(
                k.endswith("_file") for k in element.attrib):
            return True
    return False


def check_platform_file(path):
    """Catch what SimGrid would report badly (or abort on): missing file, malformed XML."""
    if not os.path.exists(path):
        raise EngineError(f"platform file not found: {path}")
    if not os.access(path, os.R_OK):
        raise EngineError(f"cannot read platform file {path}")
    try:
        ET.parse(path)
    except ET.ParseError as e:
        line, col = e.position
        raise EngineError(f"{path}:{line}:{col + 1}: platform XML error: {e.msg if hasattr(e, 'msg') else e}") from None
    except OSError as e:   # a directory, say
        raise EngineError(f"cannot read platform file {path}: {e.strerror}") from None


def load_platform(engine, path):
    """Load `path` into the SimGrid `engine` and return the Batsim view of it."""
    check_platform_file(path)
    try:
        engine.load_platform(path)
    except Exception as e:  # SimGrid raises its own types; the message is what matters
        raise EngineError(f"{path}: SimGrid cannot load this platform: {e}") from None
    hosts = {host.name: host for host in engine.all_hosts}
    props = {name: _host_properties(host) for name, host in hosts.items()}
    _check_numbers(path, engine, hosts, props)
    masters = sorted(name for name, p in props.items() if p.get("role") == MASTER)
    if not masters:
        # Batsim needs a master host; a platform without one is not a Batsim platform.
        raise EngineError(f"{path}: no host has the property role=master (Batsim's convention)")
    if len(masters) > 1:
        raise EngineError(f"{path}: hosts {', '.join(masters)} all have role=master; Batsim needs exactly one")
    resources = [Resource(rid, name, hosts[name], kind, props[name])
                 for rid, name, kind in number_hosts((name, p.get("role", "compute")) for name, p in props.items())]
    if not any(r.kind == "compute" for r in resources):
        raise EngineError(f"{path}: the platform has no compute host")
    return Platform(os.path.abspath(path), resources, hosts[masters[0]], varies(path))
