"""The Rackham variants committed in platforms/*.xml (paper, Section V-A).

`rackham.xml` is the paper's model: 486 homogeneous 20-core nodes with
128 GB, each fed from Lustre at 0.1 GB/s over its own FATPIPE link (a load
takes size / bandwidth whatever else runs). The other files relax one
assumption each, for sensitivity studies.
"""

from pathlib import Path

from .generator import PlatformSpec, write

NODES = 486
CORES = 20
NODE_MEMORY = 128e9
NODE_BANDWIDTH = 0.1e9
# The authors' description of the real cluster: a few nodes have more memory.
HETERO_MIX = ((450, 128e9), (32, 256e9), (4, 1024e9))


def default_backbone(nodes: int = NODES, node_bandwidth: float = NODE_BANDWIDTH) -> float:
    """A quarter of the sum of node links: contention appears once a quarter of nodes load at once."""
    return nodes * node_bandwidth / 4


def variants(backbone_bandwidth: float | None = None) -> dict:
    """File name → spec for every committed Rackham platform."""
    base = dict(cores=CORES, node_bandwidth=NODE_BANDWIDTH)
    backbone = default_backbone() if backbone_bandwidth is None else backbone_bandwidth
    return {
        "rackham.xml": PlatformSpec(
            memory_mix=((NODES, NODE_MEMORY),), sharing="FATPIPE", name="rackham",
            description="the paper's model, 486 x 20 cores, 128 GB, 0.1 GB/s FATPIPE node links", **base),
        "rackham-shared.xml": PlatformSpec(
            memory_mix=((NODES, NODE_MEMORY),), sharing="SHARED", name="rackham-shared",
            description="as rackham.xml with SHARED node links (concurrent loads on a node share its link)",
            **base),
        "rackham-backbone.xml": PlatformSpec(
            memory_mix=((NODES, NODE_MEMORY),), sharing="SHARED", backbone_bandwidth=backbone,
            name="rackham-backbone",
            description="SHARED node links plus a shared Lustre backbone (all loads contend)", **base),
        "rackham-hetero.xml": PlatformSpec(
            memory_mix=HETERO_MIX, sharing="FATPIPE", name="rackham-hetero",
            description="the real memory mix: 450 x 128 GB, 32 x 256 GB, 4 x 1024 GB", **base),
    }


def write_all(directory, backbone_bandwidth: float | None = None) -> list:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, spec in variants(backbone_bandwidth).items():
        write(spec, directory / filename)
        written.append(directory / filename)
    return written


def committed_dir() -> Path:
    return Path(__file__).resolve().parent
