"""The platform as Batsim resources: SimGrid hosts numbered and classified per the contract.

Roles and numbers as Batsim 4.2.1 gives them (``batloc.platforms.numbering``,
contract §1): the master is the host with role=master or the one named by
-m/--master-host (default master_host); compute hosts first by name, then
`role=storage` hosts by name; the master host gets no id. Any file SimGrid
reads loads (``<cluster>``, nested zones, ``zoneRoute``, ``core=``); power
states and energy properties are ignored with one notice (no energy model).
"""

import math
import os
import sys
import xml.etree.ElementTree as ET

from batloc.platforms.numbering import STORAGE, RoleError, batsim_roles, kind_of, number_hosts
from batloc.platforms.radical import check_count, host_count
from batloc.platforms.xml_text import doctype_missing, platform_text
from batloc.reading import clipped

from .errors import EngineError
from .signals import ending_at_once

# Batsim 4.2.1's model (batsim.cpp), for workloads holding its compute tasks (`parallel`, `parallel_homogeneous`
# and `_total`): every job is one L07 parallel task; transfers sharing a link progress at the same pace
PTASK_MODEL = "--cfg=host/model:ptask_L07"
# batloc's own model otherwise: the paper's, S bytes over B bytes/s take exactly S/B (+ latency), no TCP
# correction factors, and SimGrid's 5 % acknowledgement cross-traffic on SHARED links off. (Both time a
# lone load alike; L07's floats differ by an ulp, which would regroup batloc's instants.)
SIMGRID_CONFIG = [
    "--cfg=network/model:CM02",
    "--cfg=network/crosstraffic:0",
    "--log=root.thresh:warning",
    "--log=xbt_cfg.thresh:warning",
]


# Host properties of Batsim's energy model (machines.cpp, the energy plugin), which the engine has not
ENERGY_PROPERTIES = ("wattage_per_state", "wattage_off", "sleep_pstates", "wattage_range")
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
    def __init__(self, path, resources, master, varies=True, hosts=None):
        self.path = path
        self.hosts = hosts or {}   # every SimGrid host by name, the master's included
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


def _check_numbers(path, engine, hosts, props, role_of):
    """SimGrid accepts NaN, infinite or negative speeds and bandwidths; they would freeze or garble the clock."""
    for name in sorted(hosts):
        speed = hosts[name].speed
        if not (math.isfinite(speed) and speed > 0):
            raise EngineError(f"{path}: host {name!r}: speed must be a finite number > 0, got {speed!r} flop/s")
        for key in CONTRACT_NUMBERS if kind_of(role_of[name]) == STORAGE else ():
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


def varies(path, master=None):
    """Whether the platform gives a host or link a profile (`speed_file`, `bandwidth_file`, …, a `<trace>`).

    With `master`, one pass also checks that Batsim's server can hear from the master itself: in a zone
    without routing SimGrid has no route from a host to itself and aborts (Batsim 4.2.1 as well)."""
    found = False
    for element in ET.fromstring(platform_text(path)).iter():
        if element.tag in ("trace", "trace_connect", "include") or any(k.endswith("_file") for k in element.attrib):
            found = True
        if master is not None and element.tag in ("zone", "AS") and element.get("routing") == "None" and any(
                child.tag == "host" and child.get("id") == master for child in element):
            raise EngineError(f"{path}: the master host {master!r} is in zone {element.get('id')!r} with "
                              "routing=None, where a host has no route to itself: Batsim's messages from the master "
                              "to its server cannot be sent (SimGrid aborts: \"There can't be route in an Empty "
                              "zone\", Batsim 4.2.1 too)")
    return found


def check_platform_file(path):
    """Catch what SimGrid would report badly, abort on or never end: missing file, not a regular file or over its
    bound (``batloc.reading``), malformed XML, more hosts than batloc loads."""
    if not os.path.exists(path):
        raise EngineError(f"platform file not found: {path}")
    if not os.access(path, os.R_OK):
        raise EngineError(f"cannot read platform file {path}")
    try:
        text = platform_text(path)
        root = ET.fromstring(text)
        check_count(path, host_count(root.iter()))
        missing = doctype_missing(path, text)
        if missing:
            raise EngineError(missing)
    except ET.ParseError as e:
        line, col = e.position
        raise EngineError(f"{path}:{line}:{col + 1}: platform XML error: {e.msg if hasattr(e, 'msg') else e}") from None
    except OSError as e:   # a directory, say
        raise EngineError(f"cannot read platform file {path}: {e.strerror}") from None
    except ValueError as e:   # batloc.reading's Refused, a bound, a radical that is not one
        message = str(e)
        raise EngineError(message if path in message else f"{path}: {message}") from None


def load_platform(engine, path, master_host=None, roles=None, limit=0, quiet=False):
    """Load `path` into the SimGrid `engine` and return the Batsim view of it: the master as Batsim 4.2.1 finds
    it (`master_host`: its -m; `roles`: its -r), `limit` compute hosts at most (its --mmax, 0: all)."""
    check_platform_file(path)
    try:
        with ending_at_once("SimGrid was building the platform"):   # in one call that holds the interpreter
            engine.load_platform(path)
    except Exception as e:  # SimGrid raises its own types; the message is what matters
        raise EngineError(f"{path}: SimGrid cannot load this platform: {_first_line(e)}") from None
    hosts = {host.name: host for host in engine.all_hosts}
    props = {name: _host_properties(host) for name, host in hosts.items()}
    try:
        role_of, master = batsim_roles(((name, p.get("role")) for name, p in props.items()), master_host, roles)
        numbered = number_hosts(role_of.items(), limit)
    except RoleError as e:
        raise EngineError(f"{path}: {e}") from None
    _check_numbers(path, engine, hosts, props, role_of)
    for name, role in role_of.items():
        if role is not None and role != props[name].get("role"):   # given on the command line, as Batsim does
            props[name]["role"] = role
    resources = [Resource(rid, name, hosts[name], kind, props[name]) for rid, name, kind in numbered]
    if not any(r.kind == "compute" for r in resources):
        raise EngineError(f"{path}: the platform has no compute host")
    profiles = varies(path, master)
    if not quiet:
        _energy_notice(path, hosts, props)
    return Platform(os.path.abspath(path), resources, hosts[master], profiles, hosts)


def _first_line(error):
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return clipped(lines[0], 300) if lines else type(error).__name__   # SimGrid may quote the file


def _energy_notice(path, hosts, props):
    """One notice for what Batsim reads only under --energy: power states (a list of speeds) and wattages."""
    found = sorted({key for p in props.values() for key in p if key in ENERGY_PROPERTIES})
    if any(host.pstate_count > 1 for host in hosts.values()):
        found.append("power states (several speeds per host)")
    if found:
        print(f"batloc-batsim: notice: {path}: {', '.join(found)} ignored: the engine has no energy model (hosts "
              "compute at their first speed, as Batsim does without --energy; energy columns are 0)", file=sys.stderr)
