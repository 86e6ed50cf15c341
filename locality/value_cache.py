"""Khanna et al.'s ``value`` memory policy (§4.4, Eq. 7), next to the models of ``cache``.

A node's memory holds files up to its capacity. To admit a new file it evicts
files that no running or waiting job on the node uses, by increasing

    Value(f) = AccessFreq(f) x size(f) / NumCopies(f)

(AccessFreq = cluster-wide starts of jobs using f so far; NumCopies = nodes
holding or loading f), ties least recently used first. Both counts are
cluster-wide, so every node's ``ValueCache`` reads one shared ``FileCensus``,
which its owner keeps up to date from what the caches return (the same
``(case, evicted)`` answers as ``cache.NodeCache``: a ``ValueCache`` is the
``lru`` model with another order of eviction, so a scheduler holds either).
"""

from batloc.locality.cache import NodeCache


class FileCensus:
    """Cluster-wide counts behind Eq. 7: accesses per file and the nodes holding it."""

    def __init__(self):
        self.accesses = {}       # file -> number of job starts using it
        self.holders = {}        # file -> set of node indices holding or loading it

    def accessed(self, file):
        if file is not None:
            self.accesses[file] = self.accesses.get(file, 0) + 1

    def add(self, file, node):
        if file is not None:
            self.holders.setdefault(file, set()).add(node)

    def drop(self, files, node):
        for f in files:
            nodes = self.holders.get(f)
            if nodes is not None:
                nodes.discard(node)
                if not nodes:
                    del self.holders[f]

    def nodes(self, file):
        return self.holders.get(file, ())

    def value(self, file, size):
        copies = len(self.holders.get(file, ())) or 1
        return self.accesses.get(file, 0) * size / copies


class ValueCache(NodeCache):
    """LRU's bookkeeping (a file in use is never evicted), Eq. 7's order of eviction."""

    policy = "value"

    def __init__(self, capacity: float, census: FileCensus):
        # model stays "lru": NodeCache then makes room to admit a file, in eviction_key's order.
        super().__init__(capacity, "lru")
        self.census = census

    def eviction_key(self, file, resident):
        """Eq. 7's order: least valuable first, then least recently used."""
        return self.census.value(file, resident.size), resident.last_use, resident.seq
