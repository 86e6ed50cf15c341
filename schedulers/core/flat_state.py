"""The actual state as flat arrays, the form the compiled pass reads.

``ClusterState`` (``state.py``) stays the one place where events change the
state, through the shared locality model (``NodeCache``, ``StagingBook``); after
each event it copies what changed on that node here (``hold``/``release`` for
cores, ``mirror`` for the node's windows and memory). Per node:

- cores: ``core_end`` the planned end of the job holding each core (-inf: free;
  +inf: padding past the node's core count), ``core_held``;
- windows of the jobs holding cores (``aw_*``, in start order): start, file
  available, end, file id, size, and whether that file is still loading;
- memory (``cf_*``, in the cache's insertion order): file id, size, loaded,
  users, last use, LRU sequence number;
- ``file_bits[f]``: a bitmap of the nodes whose memory holds or loads file f.

Files are numbered in order of first appearance (``FileIds``). Arrays that
grow (files per node, file ids) are reallocated, never resized in place, so
``arrays()`` must be called again after an event.
"""

from collections import namedtuple

import numpy as np

Actual = namedtuple("Actual", [
    "ncores", "bw", "mem",
    "core_end", "core_held",
    "aw_start", "aw_avail", "aw_end", "aw_size", "aw_file", "aw_loading", "aw_count",
    "cf_file", "cf_size", "cf_loaded", "cf_users", "cf_last_use", "cf_seq", "cf_count",
    "file_bits"])


class FileIds:
    """File names <-> dense ids, in order of first appearance (-1: no file)."""

    def __init__(self):
        self.ids = {}
        self.names = []

    def __len__(self):
        return len(self.names)

    def id_of(self, name):
        if name is None:
            return -1
        fid = self.ids.get(name)
        if fid is None:
            fid = self.ids[name] = len(self.names)
            self.names.append(name)
        return fid


class FlatState:
    def __init__(self, platform):
        n, m = len(platform), platform.max_cores
        self.n, self.m = n, m
        self.words = (n + 63) // 64
        self.files = FileIds()
        ncores = np.array([len(nd.core_ids) for nd in platform.nodes], dtype=np.int64)
        self.ncores = ncores
        self.bw = np.ascontiguousarray(platform.bandwidth, dtype=np.float64)
        self.mem = np.ascontiguousarray(platform.memory, dtype=np.float64)
        pad = np.arange(m)[None, :] >= ncores[:, None]
        self.core_end = np.where(pad, np.inf, -np.inf)
        self.core_held = np.zeros((n, m), dtype=np.bool_)
        # At most one window per held core.
        self.aw_start, self.aw_avail, self.aw_end, self.aw_size = (np.zeros((n, m)) for _ in range(4))
        self.aw_file = np.full((n, m), -1, dtype=np.int64)
        self.aw_loading = np.zeros((n, m), dtype=np.bool_)
        self.aw_count = np.zeros(n, dtype=np.int64)
        self._alloc_cache(max(4, 2 * m))
        self.cf_count = np.zeros(n, dtype=np.int64)
        self.file_bits = np.zeros((64, self.words), dtype=np.uint64)
        self._arrays = None

    def _alloc_cache(self, cap, old=None):
        n = self.n
        new = {"cf_file": np.full((n, cap), -1, dtype=np.int64), "cf_size": np.zeros((n, cap)),
               "cf_loaded": np.zeros((n, cap), dtype=np.bool_), "cf_users": np.zeros((n, cap), dtype=np.int64),
               "cf_last_use": np.zeros((n, cap)), "cf_seq": np.zeros((n, cap), dtype=np.int64)}
        for name, arr in new.items():
            if old is not None:
                arr[:, :old] = getattr(self, name)[:, :old]
            setattr(self, name, arr)
        self.cf_cap = cap
        self._arrays = None

    def ensure_files(self, count):
        """Room in the file bitmaps for ids below ``count``."""
        rows = self.file_bits.shape[0]
        if count > rows:
            bits = np.zeros((max(count, 2 * rows), self.words), dtype=np.uint64)
            bits[:rows] = self.file_bits
            self.file_bits = bits
            self._arrays = None

    def arrays(self):
        if self._arrays is None:
            self._arrays = Actual(*(getattr(self, f) for f in Actual._fields))
        return self._arrays

    # ---- events (called by ClusterState) --------------------------------
    def hold(self, node, positions, end):
        self.core_end[node, positions] = end
        self.core_held[node, positions] = True

    def release(self, node, positions):
        self.core_end[node, positions] = -np.inf
        self.core_held[node, positions] = False

    def mirror(self, node, windows, cache):
        """Copy node's windows (jobs holding cores, in start order) and memory."""
        fid = self.files.id_of
        files = cache.files
        for i, w in enumerate(windows):
            self.aw_start[node, i] = w.start
            self.aw_avail[node, i] = w.avail
            self.aw_end[node, i] = w.end
            self.aw_size[node, i] = w.size
            self.aw_file[node, i] = fid(w.file)
            r = files.get(w.file) if w.file is not None else None
            self.aw_loading[node, i] = r is not None and not r.loaded
        self.aw_count[node] = len(windows)

        word, bit = node >> 6, np.uint64(1 << (node & 63))
        for f in self.cf_file[node, :self.cf_count[node]].tolist():
            self.file_bits[f, word] &= ~bit
        if len(files) > self.cf_cap:
            self._alloc_cache(max(len(files), 2 * self.cf_cap), old=self.cf_cap)
        ids = [fid(f) for f in files]
        self.ensure_files(len(self.files))
        for i, (f, r) in enumerate(zip(ids, files.values())):
            self.cf_file[node, i] = f
            self.cf_size[node, i] = r.size
            self.cf_loaded[node, i] = r.loaded
            self.cf_users[node, i] = r.users
            self.cf_last_use[node, i] = r.last_use
            self.cf_seq[node, i] = r.seq
            self.file_bits[f, word] |= bit
        self.cf_count[node] = len(ids)
