"""A platform spec from the options users give: `batloc platform generate`'s flags and `batloc.api.platform`'s
keywords, one reading for both. Quantities are numbers (bytes, bytes/s, seconds) or text as users type them
("128GB", "0.1GB/s", "5ms"; ``units``)."""

from . import rackham
from .generator import PlatformSpec
from .units import parse_bandwidth, parse_bytes, parse_duration


def parse_memory_mix(text):
    """'450x128GB,32x256GB' → ((450, 128e9), (32, 256e9))."""
    mix = []
    for part in text.split(","):
        count, sep, size = part.strip().partition("x")
        if not sep or not count.strip().isdigit():
            raise ValueError(f"cannot read memory mix part {part!r} (expected COUNTxSIZE, e.g. 32x256GB)")
        mix.append((int(count), parse_bytes(size)))
    return tuple(mix)


def platform_spec(nodes=rackham.NODES, cores=rackham.CORES, memory="128GB", node_bw="0.1GB/s", backbone_bw=None,
                  latency=0.0, sharing="FATPIPE", name="cluster", memory_mix=None, io_routes=False,
                  node_routes=False, pfs_access="shared") -> PlatformSpec:
    """The checked spec (ValueError in one line). `memory_mix`: (count, memory) pairs or their text, in place of
    `nodes` and `memory`; `backbone_bw` "auto": a quarter of the node links' sum (Rackham's rule)."""
    if memory_mix is not None:
        mix = parse_memory_mix(memory_mix) if isinstance(memory_mix, str) else tuple(
            (_whole(count, "a memory mix's node count"), _quantity(size, parse_bytes)) for count, size in memory_mix)
    else:
        mix = ((_whole(nodes, "nodes"), _quantity(memory, parse_bytes)),)
    node_bandwidth = _quantity(node_bw, parse_bandwidth)
    backbone = None
    if backbone_bw is not None:
        backbone = (rackham.default_backbone(sum(count for count, _ in mix), node_bandwidth) if backbone_bw == "auto"
                    else _quantity(backbone_bw, parse_bandwidth))
    spec = PlatformSpec(memory_mix=mix, cores=_whole(cores, "cores"), node_bandwidth=node_bandwidth,
                        backbone_bandwidth=backbone, latency=_quantity(latency, parse_duration),
                        sharing=str(sharing).upper(), name=str(name), io_routes=bool(io_routes),
                        pfs_access=str(pfs_access), node_routes=bool(node_routes))
    spec.validate()
    return spec


def _whole(value, what) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    return value


def _quantity(value, parse) -> float:
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    return float(value) if isinstance(value, (int, float)) else parse(value)
