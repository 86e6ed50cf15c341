"""Batsim 4.2's resource numbering (contract §1), in one place for every reader of a platform.

Compute hosts come first, ids 0…n-1 in ascending host name order; storage hosts
follow, ids n… in name order as well; the master host gets no id. pybatsim's
stock schedulers allocate consecutive free compute ids, so a storage numbered
between two nodes' cores would split every multi-node allocation.
"""

COMPUTE, STORAGE, MASTER = "compute", "storage", "master"


def kind_of(role):
    """A host's resource kind from its ``role`` property (absent: compute)."""
    if role == MASTER:
        return MASTER
    return STORAGE if role == STORAGE else COMPUTE


def number_hosts(hosts):
    """``hosts``: iterable of (name, role). Returns [(id, name, kind)] in id order, master left out."""
    compute, storage = [], []
    for name, role in hosts:
        kind = kind_of(role)
        if kind == COMPUTE:
            compute.append(name)
        elif kind == STORAGE:
            storage.append(name)
    ordered = [(n, COMPUTE) for n in sorted(compute)] + [(n, STORAGE) for n in sorted(storage)]
    return [(rid, name, kind) for rid, (name, kind) in enumerate(ordered)]
