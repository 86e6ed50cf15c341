"""The platform as the scheduler sees it: nodes made of cores, one memory per node.

Built from SIMULATION_BEGINS' resource lists (contract §1, §6): cores carry the
property ``node``; node memories are storage hosts named ``<node>_mem`` with
``node``, ``memory_bytes`` and ``bandwidth``; Lustre is the storage named
``lustre``. Ids are taken as given — never id arithmetic. Node index order is
the order of node names sorted.
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
    "plus a storage host named 'lustre'")


@dataclass(frozen=True)
class NodeInfo:
    index: int
    name: str
    core_ids: tuple          # resource ids of the node's cores, ascending
    mem_id: int              # resource id of the node's memory storage
    memory_bytes: float
    bandwidth: float         # bytes/s from Lustre to this node's memory


class PlatformView:
    def __init__(self, nodes, lustre_id):
        self.nodes = list(nodes)
        self.lustre_id = lustre_id
        self.by_name = {n.name: n for n in self.nodes}
        self.node_of_core = {cid: n.index for n in self.nodes for cid in n.core_ids}
        self.max_cores = max(len(n.core_ids) for n in self.nodes)
        self.bandwidth = np.array([n.bandwidth for n in self.nodes], dtype=float)
        self.memory = np.array([n.memory_bytes for n in self.nodes], dtype=float)
        self.mem_ids = [n.mem_id for n in self.nodes]

    def __len__(self):
        return len(self.nodes)

    def misfit(self, job_id, file, size):
        """Why no node's memory can hold `job_id`'s `file` of `size` bytes, or None if one can."""
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
            node = props.get("node")
            if node is None:
                raise PlatformError(
                    f"compute resource {res.get('name')!r} (id {res.get('id')}) has no 'node' "
                    f"property; {CONTRACT_HINT}")
            cores_by_node.setdefault(str(node), []).append(int(res["id"]))
        if not cores_by_node:
            raise PlatformError(f"the platform has no compute resources; {CONTRACT_HINT}")

        mems, lustre_id = {}, None
        for res in storage:
            name = res.get("name", "")
            if name == "lustre":
                lustre_id = int(res["id"])
            elif name.endswith("_mem"):
                props = res.get("properties") or {}
                mems[str(props.get("node", name[:-4]))] = res
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
        return cls(nodes, lustre_id)


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
