"""Write SimGrid platform XML in batloc's layout (docs/contract.md §1 and §6).

A top-level `<zone routing="Full">` holding one zone per node (its cores
`nNNN_cCC` and its memory storage `nNNN_mem`), a zone for the `lustre` storage
and one for `master`; one link per node, an optional shared backbone and the
master's link; and zone routes lustre → every node (through the node link and
the backbone, arriving at the node's memory) and every node and lustre → master
(through the master's link). Real Batsim runs each job from its first host and
that actor reports to the server on `master`, so every host needs a route to
it; a zone per node gives those routes with a routing table of (nodes + 2)²
entries, where one flat Full zone holding every host needed (hosts)² (0.85 GB
for Rackham) and a flat Dijkstra zone without them crashes Batsim 4.2.1.
Names are zero-padded because SimGrid (hence Batsim) numbers hosts in name
order; padding keeps that order equal to node order.

Latency defaults to 0 s: the paper's load time is exactly size / bandwidth,
and SimGrid adds a route's latency to every transfer.
"""

import math
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from batloc.reading import PLATFORM_HOSTS

SHARING_POLICIES = ("FATPIPE", "SHARED")
# How jobs share the parallel file system (lustre's `pfs_access`, contract §7):
# max-min sharing as SimGrid computes it, or one job's I/O at a time, FIFO.
PFS_ACCESS = ("shared", "exclusive")
# Zone names: SimGrid zones and hosts share one namespace; node zones are named after their node.
MASTER_ZONE, LUSTRE_ZONE = "master_zone", "lustre_zone"
# The master's link carries only Batsim's own messages (1 byte each, from a job's first host to the
# server): far faster than any node link, FATPIPE and without latency, so that it times nothing.
MASTER_LINK, MASTER_LINK_BANDWIDTH = "master_link", 1e12
# The top-level zone's id, also written in the file's first comment
NAME = re.compile(r"[ -~]+")


@dataclass(frozen=True)
class PlatformSpec:
    """A cluster of single-node-job nodes fed from one parallel file system.

    `memory_mix` lists (node count, bytes per node) in node order, so that a
    heterogeneous cluster is described group by group.
    """

    memory_mix: tuple  # ((count, memory_bytes), ...)
    cores: int = 20
    node_bandwidth: float = 0.1e9  # bytes/s per node link
    backbone_bandwidth: float | None = None  # bytes/s; None: no backbone link
    latency: float = 0.0  # seconds, per link
    sharing: str = "FATPIPE"  # node links
    name: str = "cluster"
    core_speed: str = "1Gf"
    # For profiles that do I/O from the job's own cores (parallel_homogeneous_pfs;
    # contract §7): lustre carries the backbone's bandwidth. The routes lustre ->
    # every core exist in every platform (a node's zone is entered at its memory).
    io_routes: bool = False
    pfs_access: str = "shared"
    # Routes between nodes' memories (a workflow's output read from its producer's
    # node, contract §2b): one zone route per pair of nodes, over both nodes' links
    # (no backbone), in the same Full table. nodes x (nodes - 1) / 2 more lines (15 MB
    # for Rackham). Off, the layout is unchanged, byte for byte.
    node_routes: bool = False
    description: str = field(default="", compare=False)

    @property
    def nodes(self) -> int:
        return sum(count for count, _ in self.memory_mix)

    def node_memories(self):
        for count, memory in self.memory_mix:
            for _ in range(count):
                yield memory

    def validate(self):
        if self.nodes < 1:
            raise ValueError("a platform needs at least one node")
        # NaN passes every comparison and inf is written "inf": neither is a size SimGrid or a scheduler reads
        for count, memory in self.memory_mix:
            if count < 0:
                raise ValueError(f"node counts must be >= 0, got {count}")
            if not 0 < memory < math.inf:   # named: "memories" in a sentence about counts hid which flag was wrong
                raise ValueError(f"node memory must be finite and > 0, got {memory:g} bytes")
        if self.cores < 1:
            raise ValueError("nodes need at least one core")
        # every host is a line of XML and a SimGrid host: refused before a 10-million-line file is written
        hosts = self.nodes * (self.cores + 1) + 2
        if hosts > PLATFORM_HOSTS:
            raise ValueError(f"{self.nodes} nodes x {self.cores} cores make {hosts} hosts (with the node memories), "
                             f"more than {PLATFORM_HOSTS}, the bound batloc loads (Rackham has 10 207)")
        if not 0 < self.node_bandwidth < math.inf:
            raise ValueError("node bandwidth must be finite and > 0")
        if self.backbone_bandwidth is not None and not 0 < self.backbone_bandwidth < math.inf:
            raise ValueError("backbone bandwidth must be finite and > 0")
        if not 0 <= self.latency < math.inf:
            raise ValueError("latency must be finite and >= 0")
        if not NAME.fullmatch(self.name) or "--" in self.name:
            # the name goes into an XML comment (which "--" would end) and the ASCII file
            raise ValueError(f"the platform name {self.name!r} must be printable ASCII without '--' "
                             "(letters, digits, '_', '.', '-' are safe)")
        if self.sharing not in SHARING_POLICIES:
            raise ValueError(f"sharing policy must be one of {', '.join(SHARING_POLICIES)}")
        if self.pfs_access not in PFS_ACCESS:
            raise ValueError(f"pfs access must be one of {', '.join(PFS_ACCESS)}")
        if self.name in (MASTER_ZONE, LUSTRE_ZONE) or _is_node_name(self.name):
            raise ValueError(f"the platform name {self.name!r} is taken by one of its zones; choose another")


def _num(value: float) -> str:
    """Shortest exact text for a float, without exponent for integers (byte-stable)."""
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def _is_node_name(name: str) -> bool:
    return re.fullmatch(r"n[0-9]{3,}", name) is not None


def node_name(index: int, nodes: int) -> str:
    return f"n{index:0{max(3, len(str(nodes - 1)))}d}"


def core_name(node: str, core: int, cores: int) -> str:
    return f"{node}_c{core:0{max(2, len(str(cores - 1)))}d}"


def render(spec: PlatformSpec) -> str:
    """The platform as XML text; identical specs give identical bytes."""
    spec.validate()
    props = lambda pairs: "".join(  # noqa: E731
        f"<prop id={quoteattr(k)} value={quoteattr(str(v))}/>" for k, v in pairs
    )
    host = lambda name, pairs, extra="": (  # noqa: E731
        f"      <host id={quoteattr(name)} speed=\"{spec.core_speed}\"{extra}>{props(pairs)}</host>"
    )
    zone_route = lambda src, dst, gw_src, gw_dst, links: (  # noqa: E731
        f"    <zoneRoute src=\"{src}\" dst=\"{dst}\" gw_src=\"{gw_src}\" gw_dst=\"{gw_dst}\">"
        + "".join(f"<link_ctn id=\"{link}\"/>" for link in links) + "</zoneRoute>"
    )
    node_bw = _num(spec.node_bandwidth)
    latency = _num(spec.latency)
    names = [node_name(i, spec.nodes) for i in range(spec.nodes)]
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        f"<!-- batloc platform {spec.name}: {spec.description or 'generated by batloc platform'}. -->",
        f"<!-- {spec.nodes} nodes x {spec.cores} cores; node links {node_bw} B/s {spec.sharing}; "
        f"backbone {_num(spec.backbone_bandwidth) + ' B/s SHARED' if spec.backbone_bandwidth else 'none'}; "
        f"latency {latency} s. Layout: docs/contract.md section 6. -->",
        '<platform version="4.1">',
        f"  <zone id={quoteattr(spec.name)} routing=\"Full\">",
        f"    <zone id=\"{MASTER_ZONE}\" routing=\"Full\">",
        host("master", [("role", "master")]),
        "    </zone>",
        f"    <zone id=\"{LUSTRE_ZONE}\" routing=\"Full\">",
        host("lustre", _lustre_properties(spec)),
        "    </zone>",
    ]
    for name, memory in zip(names, spec.node_memories()):
        lines.append(f"    <zone id=\"{name}\" routing=\"Full\">")
        for core in range(spec.cores):
            lines.append(host(core_name(name, core, spec.cores), [("node", name)], ' core="1"'))
        lines.append(host(f"{name}_mem", [
            ("role", "storage"), ("node", name),
            ("memory_bytes", _num(memory)), ("bandwidth", node_bw),
        ]))
        lines.append("    </zone>")
    for name in names:
        lines.append(f"    <link id=\"{name}_link\" bandwidth=\"{node_bw}Bps\" latency=\"{latency}s\" "
                     f"sharing_policy=\"{spec.sharing}\"/>")
    if spec.backbone_bandwidth:
        lines.append(f"    <link id=\"backbone\" bandwidth=\"{_num(spec.backbone_bandwidth)}Bps\" "
                     f"latency=\"{latency}s\" sharing_policy=\"SHARED\"/>")
    lines.append(f"    <link id=\"{MASTER_LINK}\" bandwidth=\"{_num(MASTER_LINK_BANDWIDTH)}Bps\" latency=\"0s\" "
                 f"sharing_policy=\"FATPIPE\"/>")
    backbone = ["backbone"] if spec.backbone_bandwidth else []
    lines.append(zone_route(LUSTRE_ZONE, MASTER_ZONE, "lustre", "master", [MASTER_LINK]))
    for name in names:
        # lustre -> the node's memory, and on to its cores: the node link, then the backbone
        lines.append(zone_route(LUSTRE_ZONE, name, "lustre", f"{name}_mem", [f"{name}_link"] + backbone))
    for name in names:
        lines.append(zone_route(name, MASTER_ZONE, f"{name}_mem", "master", [MASTER_LINK]))
    if spec.node_routes:
        # one node's memory -> another's: both nodes' links, no backbone (Full routing composes nothing)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                lines.append(zone_route(a, b, f"{a}_mem", f"{b}_mem", [f"{a}_link", f"{b}_link"]))
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)


def _lustre_properties(spec: PlatformSpec):
    # Schedulers see host properties, not links: lustre carries the backbone's
    # bandwidth (as node memories carry their link's), which every load and I/O
    # phase shares (the planning family's load_model "shared", the I/O-aware
    # policies), and the access mode.
    props = [("role", "storage")]
    if spec.backbone_bandwidth:
        props.append(("bandwidth", _num(spec.backbone_bandwidth)))
    if spec.pfs_access != "shared":
        props.append(("pfs_access", spec.pfs_access))
    return props


def write(spec: PlatformSpec, path) -> None:
    text = render(spec)    # before the file is opened: a refused spec leaves the previous file as it was
    with open(path, "w", encoding="ascii", newline="\n") as out:
        out.write(text)
