"""The one reader of platform files for batloc's tools: hosts → Batsim resources → platform view.

`read_resources` gives what the engine's SIMULATION_BEGINS gives a scheduler
(compute and storage resources with their properties, ids in Batsim 4.2's
numbering: `numbering.number_hosts`), so the tools see the platform exactly
as the schedulers do; `read_view` builds the schedulers' own `PlatformView`
from them (nodes, core ids, node memories, Lustre). `batloc platform show`,
the workload tools, the validator and the analysis all read platforms here.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from batloc.locality.platform_view import PlatformError, PlatformView

from batloc.reading import Refused, excerpt

from .numbering import COMPUTE, RoleError, batsim_roles, number_hosts
from .radical import CLUSTERS, check_count, host_count, numbers
from .routes import unreached
from .xml_text import doctype_missing, platform_text

__all__ = ["PlatformError", "Resources", "PlatformSummary", "platform_hosts", "platform_text", "read_resources",
           "read_view", "read_platform"]


@dataclass
class Resources:
    """SIMULATION_BEGINS-like resource lists: dicts with id, name, state and string properties."""

    path: str
    compute: list
    storage: list


def platform_hosts(path):
    """Every host of a platform file as (name, {property: value}), <cluster> and <cabinet> hosts included
    (named prefix + number + suffix, each with the cluster's properties), in file order."""
    hosts, count = [], 0
    try:
        # iterparse + clear: a Rackham file holds ~10 000 hosts
        for _, elem in ET.iterparse(io.BytesIO(platform_text(path))):
            if elem.tag == "host" or elem.tag in CLUSTERS:
                count += host_count([elem])
                check_count(path, count)   # before a radical is expanded
                if any(speed.strip().startswith("-") for speed in elem.get("speed", "").split(",")):
                    raise PlatformError(f"{path}: {elem.tag} {excerpt(elem.get('id', ''))} has a negative speed "
                                        f"{excerpt(elem.get('speed'))} (SimGrid refuses it, and so does the engine)")
                props = {p.get("id"): p.get("value") for p in elem.findall("prop")}
                if elem.tag == "host":
                    hosts.append((elem.get("id", ""), props))
                else:
                    prefix, suffix = elem.get("prefix", ""), elem.get("suffix", "")
                    hosts.extend((f"{prefix}{i}{suffix}", dict(props)) for i in numbers(elem.get("radical", "")))
                elem.clear()
    except Refused as exc:
        raise PlatformError(str(exc)) from None
    except (OSError, ET.ParseError, ValueError) as exc:
        message = str(exc)
        raise PlatformError(message if message.startswith(f"{path}: ") else f"{path}: cannot read platform: {exc}") \
            from None
    return hosts


def read_resources(path, master_host=None, roles=None) -> Resources:
    """Every host but the master as a Batsim resource, numbered as Batsim 4.2 numbers them; the master is
    the host with role=master or the one named `master_host` (Batsim's -m, default master_host)."""
    listed = platform_hosts(path)
    hosts = dict(listed)
    if len(hosts) < len(listed):
        seen = set()
        twice = next(name for name, _ in listed if name in seen or seen.add(name))
        raise PlatformError(f"{path}: host {excerpt(twice)} is declared twice (SimGrid refuses a second host of one "
                            "name, and so does the engine)")
    try:
        role_of, _ = batsim_roles(((name, props.get("role")) for name, props in hosts.items()), master_host, roles)
    except RoleError as exc:
        raise PlatformError(f"{path}: {exc}") from None
    compute, storage = [], []
    for rid, name, kind in number_hosts(role_of.items()):
        props = dict(hosts[name])
        if role_of[name] is not None:
            props["role"] = role_of[name]
        resource = {"id": rid, "name": name, "state": "idle", "properties": props}
        (compute if kind == COMPUTE else storage).append(resource)
    return Resources(str(path), compute, storage)


def read_view(path, bandwidth_override: float | None = None) -> PlatformView:
    """The platform as the schedulers see it; a file that breaks the contract is a PlatformError naming it."""
    resources = read_resources(path)
    try:
        return PlatformView.from_resources(resources.compute, resources.storage, bandwidth_override)
    except PlatformError as exc:
        raise PlatformError(f"{path}: {exc}") from None


@dataclass
class PlatformSummary:
    path: str
    view: PlatformView
    resources: Resources | None = None

    @property
    def nodes(self) -> list:
        """The view's nodes (``locality.platform_view.NodeInfo``), in name order."""
        return self.view.nodes

    @property
    def total_cores(self) -> int:
        return sum(len(n.core_ids) for n in self.nodes)

    @property
    def cores_per_node(self) -> int:
        return self.view.max_cores

    def describe(self) -> str:
        mix = {}
        for n in self.nodes:
            key = (len(n.core_ids), n.memory_bytes, n.bandwidth)
            mix[key] = mix.get(key, 0) + 1
        lines = [f"{self.path}: {len(self.nodes)} nodes, {self.total_cores} cores"]
        if self.view.memoryless:
            own = self.resources is not None and not any("node" in r["properties"] for r in self.resources.compute)
            storages = [r["name"] for r in self.resources.storage] if self.resources is not None else []
            lines[0] += (" (Batsim's compute hosts: one host, one node, as no host has batloc's property node)"
                         if own else "")
            if storages:
                lines.append(f"  storages: {', '.join(storages[:5])}" + (" ..." if len(storages) > 5 else ""))
            for (cores, _, _), count in sorted(mix.items(), key=lambda kv: kv[0]):
                lines.append(f"  {count} x {cores} {'core' if cores == 1 else 'cores'}, no node memory")
            lines.append(f"  no node memories and no lustre: stock schedulers run it as it is; batloc's file-aware "
                         f"schedulers and the staging proxy run jobs without input files only (`batloc platform "
                         f"annotate {self.path} -o COPY` adds memories, contract §1)")
            return "\n".join(lines)
        for (cores, memory, bw), count in sorted(mix.items(), key=lambda kv: kv[0]):
            lines.append(f"  {count} x {cores} cores, {memory / 1e9:g} GB, {bw / 1e9:g} GB/s")
        return "\n".join(lines)


def read_platform(path, master_host=None, roles=None) -> PlatformSummary:
    """Nodes, cores, memory and bandwidth of a platform (`batloc platform show`, workload tools): batloc's
    layout, or a plain Batsim platform (one node per host, no memory: ``PlatformView``); `master_host` and
    `roles` as Batsim's -m and -r (None: not given). A platform the engine refuses for lack of routes to the
    master (``routes``) is refused here too."""
    resources = read_resources(path, master_host, roles)
    missing = doctype_missing(path, platform_text(path))   # what the engine refuses, `show` does not pass
    if missing:
        raise PlatformError(missing)
    _check_routes(path, master_host, roles)
    try:
        view = PlatformView.from_resources(resources.compute, resources.storage)
    except PlatformError as exc:
        raise PlatformError(f"{path}: {exc}") from None
    return PlatformSummary(str(path), view, resources)


def _check_routes(path, master_host=None, roles=None):
    hosts = dict(platform_hosts(path))
    try:
        _, master = batsim_roles(((name, props.get("role")) for name, props in hosts.items()), master_host, roles)
    except RoleError:
        return   # read_resources said it already
    found = unreached(platform_text(path), master)
    if found:
        zone, routing, missing = found
        raise PlatformError(f"{path}: no route from host {excerpt(missing[0])} to the master {excerpt(master)} in zone "
                            f"{excerpt(zone)} "
                            f"(routing={routing}; {len(missing)} host(s) lack one): Batsim's job-end messages take "
                            "it, and SimGrid crashes without it (batloc's flat layout before 2026-11: regenerate "
                            "the platform with `batloc platform generate`; contract §1)")
