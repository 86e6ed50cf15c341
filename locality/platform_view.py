"""The platform as the scheduler sees it: nodes made of cores, one memory per node.

Built from SIMULATION_BEGINS' resource lists (contract §1, §6): cores carry the
property ``node``; node memories are storage hosts named ``<node>_mem`` with
``node``, ``memory_bytes`` and ``bandwidth``; Lustre is the storage named
``lustre``. Ids are taken as given — never id arithmetic. Node index order is
the order of node names sorted.

A plain Batsim platform has neither: a compute host without ``node`` is a node
of its own (Batsim's reading: one host, one resource), and a platform with no
node memory and no ``lustre`` at all is *memoryless*: its nodes can run jobs
without input files only (``memoryless``, ``NO_MEMORY``), until `batloc platform
annotate` writes a copy that has them. A platform with some of them is held to
the contract (``CONTRACT_HINT``).
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np


class PlatformError(ValueError):
    """The platform does not follow the batloc contract."""


CONTRACT_HINT = (
    "the batloc contract (docs/contract.md §1 and §6) expects, for every node "
    "nNNN, cores with property node=nNNN and one storage host named 'nNNN_mem' "
    "(role=storage) with properties node, memory_bytes and bandwidth (bytes/s), "
    "plus a storage host named 'lustre' (`batloc platform annotate` adds them to a copy of a Batsim platform)")


NO_MEMORY = (
    "the platform has no node memories (no storage host '<node>_mem' with properties memory_bytes and "
    "bandwidth, and no storage 'lustre': contract §1, §6), so no input file can be loaded; "
    "`batloc platform annotate PLATFORM -o COPY --memory SIZE --node-bw BW` writes a copy that has them")


@dataclass(frozen=True)
class NodeInfo:
    index: int
    name: str
    core_ids: tuple          # resource ids of the node's cores, ascending
    mem_id: Optional[int]    # resource id of the node's memory storage (None: memoryless platform)
    memory_bytes: float      # +inf on a memoryless platform, where no job has a file to load
    bandwidth: float         # bytes/s from Lustre to this node's memory (+inf: memoryless)


class PlatformView:
    def __init__(self, nodes, lustre_id, backbone=math.inf):
        self.nodes = list(nodes)
        self.lustre_id = lustre_id
        # bytes/s that every load from Lustre shares (`lustre`'s property `bandwidth`: the backbone's,
        # contract §6); +inf without one: each load then takes its node link alone
        self.backbone = backbone
        self.memoryless = lustre_id is None      # no node memory, no file system: jobs without files only
        self.by_name = {n.name: n for n in self.nodes}
        self.node_of_core = {cid: n.index for n in self.nodes for cid in n.core_ids}
        self.max_cores = max(len(n.core_ids) for n in self.nodes)
        self.bandwidth = np.array([n.bandwidth for n in self.nodes], dtype=float)
        self.memory = np.array([n.memory_bytes for n in self.nodes], dtype=float)
        self.mem_ids = [n.mem_id for n in self.nodes]

    def __len__(self):
        return len(self.nodes)

    def misfit(self, job_id, file, size):
        """Why no node's memory can hold `job_id`'s `file` of `size` bytes, or None if one can (a memoryless
        platform holds no file: the callers refuse such a job first, with ``NO_MEMORY``)."""
        largest = float(self.memory.max())
        if size <= largest:
            return None
        return (f"job {job_id} rejected: its file {file} ({size:.6g} bytes) exceeds the memory of every node "
                f"(largest {largest:.6g} bytes)")

    @classmethod
    def from_resources(cls, compute, storage, bandwidth_override: Optional[float] = None):
        cores_by_node = {}
        for res in compute:
            props = res.get("properties") or {}
            # Batsim's reading where batloc's property is absent: one host, one node
            node = props.get("node", res.get("name"))
            cores_by_node.setdefault(str(node), []).append(int(res["id"]))
        if not cores_by_node:
            raise PlatformError("the platform has no compute host (every host is the master or a storage)")

        mems, lustre_id, backbone = {}, None, math.inf
        for res in storage:
            name = res.get("name", "")
            if name == "lustre":
                lustre_id = int(res["id"])
                shared = (res.get("properties") or {}).get("bandwidth")
                if shared is not None:
                    backbone = _positive(res, "bandwidth", shared)
            elif name.endswith("_mem"):
                props = res.get("properties") or {}
                mems[str(props.get("node", name[:-4]))] = res
        if not mems and lustre_id is None:
            return cls([NodeInfo(index, name, tuple(sorted(cores_by_node[name])), None, math.inf, math.inf)
                        for index, name in enumerate(sorted(cores_by_node))], None)
        if not mems:
            raise PlatformError(f"the platform has no node memory storage ('<node>_mem'); {CONTRACT_HINT}")
        if lustre_id is None:
            raise PlatformError(f"the platform has no storage host named 'lustre'; {CONTRACT_HINT}")

        nodes = []
        for index, name in enumerate(sorted(cores_by_node)):
            mem = mems.get(name)
            if mem is None:
                raise PlatformError(f"node {name!r} has cores but no storage '{name}_mem'; {CONTRACT_HINT}")
            props = mem.get("properties") or {}
            if "memory_bytes" not in props:
                raise PlatformError(f"storage {mem.get('name')!r} lacks a numeric 'memory_bytes'; {CONTRACT_HINT}")
            memory = _positive(mem, "memory_bytes", props["memory_bytes"])
            if bandwidth_override is not None:
                bw = _positive(None, "bandwidth", bandwidth_override)
            elif "bandwidth" in props:
                bw = _positive(mem, "bandwidth", props["bandwidth"])
            else:
                raise PlatformError(
                    f"storage {mem.get('name')!r} lacks a numeric 'bandwidth' property and no "
                    f"'bandwidth' option was given; {CONTRACT_HINT}")
            nodes.append(NodeInfo(index, name, tuple(sorted(cores_by_node[name])), int(mem["id"]), memory, bw))
        return cls(nodes, lustre_id, backbone)


def _positive(host, prop, text):
    """A node's memory or bandwidth as a float: finite and > 0, since NaN or inf would poison every plan."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        where = f"host {host.get('name')!r}: property" if host is not None else "the override of"
        raise PlatformError(f"{where} {prop} must be a finite number > 0, got {text!r}")
    return value
