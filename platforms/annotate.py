"""`batloc platform annotate`: batloc's node memories and file system added to a copy of a Batsim platform.

A plain Batsim platform (Batsim's own `cluster512.xml`, `small_platform.xml`, …)
runs unchanged under pybatsim's stock schedulers and everything that reads
jobs only (robin, the report, the validator). batloc's file-aware schedulers and
the staging proxy also need what contract §1 and §6 describe: each node's memory
as a storage host ``<node>_mem`` (``memory_bytes``, ``bandwidth``) and the file
system ``lustre`` with a route to every such memory, because a load is a
``data_staging`` job between those two storages (contract §3).

The copy keeps every host, link, route and property of the original byte for
byte: the original top-level zone becomes one of two zones under a new top-level
``Full`` zone; the other, ``batloc_memory``, holds ``lustre`` and one memory per
node, each reached from ``lustre`` over its own node link (and an optional
shared backbone). Nodes are as batloc reads any platform: the compute hosts that
share a ``node`` property, and a compute host without one is a node of its own
(Batsim's reading: one host, one resource). One zone route joins
``batloc_memory`` to the original zone, from a router that every storage of it
reaches over a link that times nothing (FATPIPE, 10^12 B/s, no latency) to the
master host: real Batsim runs a staging job from its first host (a storage)
and that actor reports to the server on the master, so every storage needs a
route to the master, which must not cross a node link (1 byte there would
share a load's bandwidth). The master is the route's gateway itself: SimGrid
4.1 (batloc's engine) crashes computing a route whose gateway is a host
inside a ``<cluster>``, where SimGrid 3.34 (Batsim's) does not.
"""

import re
from xml.sax.saxutils import quoteattr

from batloc.reading import PLATFORM_BYTES, Refused, read_bytes

from .reader import PlatformError, read_resources

try:
    from .reader import platform_hosts      # every host as Batsim reads the file, <cluster> ones included
except ImportError:                          # a reader of <host> elements only
    import xml.etree.ElementTree as ET

    def platform_hosts(path):
        try:
            return [(e.get("id", ""), {}) for e in ET.parse(path).iter("host")]
        except (OSError, ET.ParseError) as exc:
            raise PlatformError(f"{path}: cannot read platform: {exc}") from None

ZONE = "batloc_memory"
TOP = "batloc"
LUSTRE = "lustre"
GATEWAY_LINK, GATEWAY_BANDWIDTH = "batloc_gateway_link", 1e12
ROUTER = "batloc_router"
BACKBONE = "batloc_backbone"
SHARING_POLICIES = ("FATPIPE", "SHARED")

# What the tag scanner skips: comments, CDATA, processing instructions, the DOCTYPE
_OPAQUE = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>", re.S)
_TAG = re.compile(r"<(/?)([A-Za-z_][\w:.-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*?)(/?)>")
_ID = re.compile(r"""\bid\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _num(value):
    """A number as SimGrid reads it, without float noise (1e+11 → 100000000000)."""
    return f"{value:.17g}" if value != int(value) else str(int(value))


def _top_zone(text, path):
    """(start, end, tag, id) of the platform's top-level zone element in `text`."""
    masked = _OPAQUE.sub(lambda m: " " * len(m.group(0)), text)
    depth, start, found = 0, None, []
    for m in _TAG.finditer(masked):
        closing, tag, attrs, empty = m.group(1), m.group(2), m.group(3), m.group(4)
        if closing:
            depth -= 1
            if depth == 1 and start is not None and tag == start[1]:
                found.append((start[0], m.end(), start[1], start[2]))
                start = None
            continue
        if depth == 1 and tag in ("zone", "AS"):
            ident = _ID.search(attrs)
            ident = next((g for g in ident.groups() if g is not None), "") if ident else ""
            if empty:
                found.append((m.start(), m.end(), tag, ident))
            else:
                start = (m.start(), tag, ident)
        if not empty:
            depth += 1
    if len(found) != 1:
        raise PlatformError(f"{path}: expected one top-level <zone> (or <AS>) inside <platform>, found {len(found)}")
    return found[0]


def _nodes(resources):
    """{node: [compute host names]} as batloc reads the platform: a host's `node` property, else its name."""
    nodes = {}
    for res in resources.compute:
        node = (res.get("properties") or {}).get("node") or res["name"]
        nodes.setdefault(str(node), []).append(res["name"])
    return nodes


def _master(path, resources):
    """The master host's name: the one host Batsim gives no resource id."""
    numbered = {r["name"] for r in resources.compute + resources.storage}
    others = [name for name, _ in platform_hosts(path) if name not in numbered]
    if len(others) != 1:
        raise PlatformError(f"{path}: cannot tell the master host (hosts without a resource id: "
                            f"{', '.join(others) or 'none'})")
    return others[0]


def annotate(path, output, memory, bandwidth, latency=0.0, sharing="FATPIPE", backbone=None,
             master_host=None, roles=None):
    """Write `path` with batloc's memories and file system to `output`; returns {node: [hosts]}. `master_host`
    and `roles` (Batsim's -m and -r) tell which host is the master; the copy's runs need them too."""
    if not memory > 0 or not bandwidth > 0:
        raise ValueError("--memory and --node-bw must be > 0")
    if backbone is not None and not backbone > 0:
        raise ValueError("--backbone-bw must be > 0")
    if latency < 0:
        raise ValueError("--latency must be >= 0")
    if sharing not in SHARING_POLICIES:
        raise ValueError(f"--sharing must be one of {', '.join(SHARING_POLICIES)}")
    resources = read_resources(path, master_host, roles)
    if not resources.compute:
        raise PlatformError(f"{path}: no compute host: every host is the master or has role=storage")
    nodes = _nodes(resources)
    taken = {r["name"] for r in resources.compute + resources.storage}
    for name in sorted(taken):
        if name == LUSTRE or name.endswith("_mem") or name in (ZONE, TOP):
            raise PlatformError(f"{path}: host {name!r} already has a name batloc's annotation gives "
                                f"(lustre, <node>_mem, {ZONE}): is the platform annotated already?")
    try:
        text = read_bytes(path, PLATFORM_BYTES, "platform").decode("utf-8")
    except Refused as exc:
        raise PlatformError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformError(f"{path}: cannot read platform: {exc}") from None
    text = text.lstrip()       # SimGrid reads a file whose first line is blank; XML wants <?xml first
    start, end, tag, ident = _top_zone(text, path)
    if not ident:
        raise PlatformError(f"{path}: the top-level <{tag}> has no id")
    route_tag = "ASroute" if tag == "AS" else "zoneRoute"
    gateway = _master(path, resources)

    def host(name, props):
        inner = "".join(f"<prop id={quoteattr(k)} value={quoteattr(str(v))}/>" for k, v in props)
        return f"<host id={quoteattr(name)} speed=\"1Gf\">{inner}</host>"

    lustre_props = [("role", "storage")] + ([("bandwidth", _num(backbone))] if backbone else [])
    memory_zone = [f"  <{tag} id=\"{ZONE}\" routing=\"Full\">", f"    {host(LUSTRE, lustre_props)}"]
    for node in sorted(nodes):
        memory_zone.append("    " + host(f"{node}_mem", [("role", "storage"), ("node", node),
                                                         ("memory_bytes", _num(memory)),
                                                         ("bandwidth", _num(bandwidth))]))
    for node in sorted(nodes):
        memory_zone.append(f"    <link id={quoteattr(node + '_link')} bandwidth=\"{_num(bandwidth)}Bps\" "
                           f"latency=\"{_num(latency)}s\" sharing_policy=\"{sharing}\"/>")
    if backbone:
        memory_zone.append(f"    <link id=\"{BACKBONE}\" bandwidth=\"{_num(backbone)}Bps\" latency=\"0s\" "
                           "sharing_policy=\"SHARED\"/>")
    memory_zone.append(f"    <link id=\"{GATEWAY_LINK}\" bandwidth=\"{_num(GATEWAY_BANDWIDTH)}Bps\" latency=\"0s\" "
                       "sharing_policy=\"FATPIPE\"/>")
    memory_zone.append(f"    <router id=\"{ROUTER}\"/>")
    for node in sorted(nodes):
        links = f"<link_ctn id={quoteattr(node + '_link')}/>" + (f"<link_ctn id=\"{BACKBONE}\"/>" if backbone else "")
        memory_zone.append(f"    <route src=\"{LUSTRE}\" dst={quoteattr(node + '_mem')}>{links}</route>")
    for name in [LUSTRE] + [f"{node}_mem" for node in sorted(nodes)]:
        memory_zone.append(f"    <route src={quoteattr(name)} dst=\"{ROUTER}\"><link_ctn id=\"{GATEWAY_LINK}\"/></route>")
    memory_zone.append(f"  </{tag}>")
    joins = [f"  <{route_tag} src=\"{ZONE}\" dst={quoteattr(ident)} gw_src=\"{ROUTER}\" gw_dst={quoteattr(gateway)}>"
             f"<link_ctn id=\"{GATEWAY_LINK}\"/></{route_tag}>"]     # SimGrid forbids an empty one
    head = (f"<!-- batloc platform annotate: {len(nodes)} node memories of {_num(memory)} bytes and "
            f"'{LUSTRE}' added around the original top-level zone (docs/contract.md section 1) -->\n")
    out = (text[:start] + head + f"<{tag} id=\"{TOP}\" routing=\"Full\">\n" + text[start:end] + "\n"
           + "\n".join(memory_zone + joins) + f"\n</{tag}>" + text[end:])
    with open(output, "w", encoding="utf-8") as f:
        f.write(out)
    return nodes
