"""Read back what a batloc-layout platform offers: nodes, cores, memory, bandwidth.

Used by `batloc platform show` and by workload statistics (offered load needs
the core count). Works on any SimGrid XML following docs/contract.md §1; it
reads host properties only, as schedulers do.
"""

from dataclasses import dataclass
import xml.etree.ElementTree as ET


class PlatformError(Exception):
    """A platform file that cannot be read or does not follow the contract."""


@dataclass
class NodeInfo:
    name: str
    cores: int
    memory_bytes: float | None
    bandwidth: float | None


@dataclass
class PlatformSummary:
    path: str
    nodes: list  # [NodeInfo] in name order

    @property
    def total_cores(self) -> int:
        return sum(n.cores for n in self.nodes)

    @property
    def cores_per_node(self) -> int:
        return max((n.cores for n in self.nodes), default=0)

    def describe(self) -> str:
        mix = {}
        for n in self.nodes:
            key = (n.cores, n.memory_bytes, n.bandwidth)
            mix[key] = mix.get(key, 0) + 1
        lines = [f"{self.path}: {len(self.nodes)} nodes, {self.total_cores} cores"]
        for (cores, memory, bw), count in sorted(mix.items(), key=lambda kv: kv[0]):
            mem = f"{memory / 1e9:g} GB" if memory else "no memory storage"
            band = f"{bw / 1e9:g} GB/s" if bw else "bandwidth unknown"
            lines.append(f"  {count} x {cores} cores, {mem}, {band}")
        return "\n".join(lines)


def read_platform(path) -> PlatformSummary:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise PlatformError(f"{path}: cannot read platform: {exc}") from None
    cores, memory, bandwidth = {}, {}, {}
    for host in root.iter("host"):
        props = {p.get("id"): p.get("value") for p in host.findall("prop")}
        node = props.get("node")
        if node is None:
            continue
        if props.get("role") == "storage":
            try:
                memory[node] = float(props["memory_bytes"]) if "memory_bytes" in props else None
                bandwidth[node] = float(props["bandwidth"]) if "bandwidth" in props else None
            except ValueError:
                raise PlatformError(f"{path}: host {host.get('id')}: non-numeric memory_bytes/bandwidth") from None
        else:
            cores[node] = cores.get(node, 0) + int(host.get("core", "1"))
    if not cores:
        raise PlatformError(f"{path}: no compute host carries a 'node' property (see docs/contract.md §1)")
    nodes = [NodeInfo(name, cores[name], memory.get(name), bandwidth.get(name)) for name in sorted(cores)]
    return PlatformSummary(str(path), nodes)
