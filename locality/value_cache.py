"""Khanna et al.'s ``value`` memory policy (§4.4, Eq. 7), next to the models of ``cache``.

A node's memory holds files up to its capacity. To admit a new file it evicts
files that no running or waiting job on the node uses, by increasing

    Value(f) = AccessFreq(f) x size(f) / NumCopies(f)

(AccessFreq = cluster-wide starts of jobs using f so far; NumCopies = nodes
holding or loading f), ties least recently used first. Both counts are
cluster-wide, so every node's ``ValueCache`` reads one shared ``FileCensus``,
which its owner keeps up to date from what the caches return (the same
``(case, evicted)`` answers as ``cache.NodeCache``, whose interface this
class follows so that a scheduler can hold either).
"""

from batloc.locality.cache import Resident


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


class ValueCache:
    model = "value"

    def __init__(self, capacity: float, census: FileCensus):
        self.capacity = float(capacity)
        self.census = census
        self.files = {}          # file -> Resident
        self._seq = 0
        self.overflows = []      # (time, file, used_bytes) when a load could not fit

    def status(self, file):
        r = self.files.get(file)
        if r is None:
            return "absent"
        return "loaded" if r.loaded else "loading"

    def used_bytes(self):
        return sum(r.size for r in self.files.values())

    def orphans(self):
        return [(f, r.size) for f, r in self.files.items() if r.users == 0 and r.loaded]

    def start_job(self, file, size, now, load_end=None):
        """As ``NodeCache.start_job``: (case, evicted files)."""
        if file is None:
            return "none", []
        r = self.files.get(file)
        evicted = []
        if r is not None:
            case = "hit" if r.loaded else "wait"
        else:
            case = "miss"
            evicted = self._make_room(float(size), now, file)
            self._seq += 1
            r = self.files[file] = Resident(float(size), False, now if load_end is None else load_end,
                                            0, now, self._seq)
        r.users += 1
        r.last_use = now
        return case, evicted

    def load_done(self, file, now):
        r = self.files.get(file)
        if r is not None:
            r.loaded = True
            r.load_end = now

    def end_job(self, file, now):
        r = self.files.get(file) if file is not None else None
        if r is None:
            return []
        r.users = max(0, r.users - 1)
        if r.users == 0:
            r.last_use = max(r.last_use, now)
            if not r.loaded:          # its only user left before the load ended
                del self.files[file]
                return [file]
        return []

    def _make_room(self, size, now, file):
        used = self.used_bytes()
        if used + size <= self.capacity:
            return []
        victims = sorted((self.census.value(f, r.size), r.last_use, r.seq, f)
                         for f, r in self.files.items() if r.users == 0)
        evicted = []
        for *_, f in victims:
            if used + size <= self.capacity:
                break
            used -= self.files.pop(f).size
            evicted.append(f)
        if used + size > self.capacity:
            self.overflows.append((now, file, used + size))
        return evicted
