"""The actual state as flat arrays, the form the compiled pass reads.

``ClusterState`` (``state.py``) stays the one place where events change the
state, through the shared locality model (``NodeCache``, ``StagingBook``); after
each event it copies what changed on that node here (``hold``/``release`` for
cores, ``mirror`` for the node's windows and memory). Per node k:

- ``node_f[k]``: bandwidth, memory, earliest planned end of a held core,
  earliest estimated end of a load in flight, number of windows, number of
  files in memory, number of free cores (columns ``BW, MEM, MIN_END,
  MIN_LOADING, N_HELD, N_MEM, N_FREE``);
- cores: ``core_end`` the planned end of the job holding each core (-inf: free;
  +inf: padding past the node's core count), ``core_held``;
- ``held[k, i]``: the windows of the jobs holding cores, in start order:
  start, file available, end, size, file id, file still loading (``START,
  AVAIL, END, SIZE, FILE, LOADING``); a job reading several files has one
  row per file (the array grows past one row per core then);
- ``mem[k, i]``: the files in memory, in the cache's insertion order: size,
  last use, file id, loaded, users, LRU sequence (``M_SIZE, M_LAST, M_FILE,
  M_LOADED, M_USERS, M_SEQ``);
- ``file_bits[f]``: a bitmap of the nodes whose memory holds or loads file f.

Records are rows of float arrays (ids and counts are exact in a float)
rather than one array per field: CPython passes a call of more than 30
arguments as ``f(*args)``, and numba then builds a tuple and counts a
reference per array at every call; the compiled functions take few arrays.
Files are numbered in order of first appearance (``FileIds``). Arrays that
grow (files per node, file ids) are reallocated: ``arrays()`` must be called
again after an event.
"""

import numpy as np

# Columns of node_f, held, mem.
BW, MEM, MIN_END, MIN_LOADING, N_HELD, N_MEM, N_FREE = range(7)
START, AVAIL, END, SIZE, FILE, LOADING = range(6)
M_SIZE, M_LAST, M_FILE, M_LOADED, M_USERS, M_SEQ = range(6)


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
        self.node_f = np.zeros((n, 7))
        self.node_f[:, BW] = platform.bandwidth
        self.node_f[:, MEM] = platform.memory
        self.node_f[:, MIN_END] = np.inf
        self.node_f[:, MIN_LOADING] = np.inf
        self.bw_max = float(np.max(platform.bandwidth))
        ncores = np.array([len(nd.core_ids) for nd in platform.nodes], dtype=np.int64)
        self.node_f[:, N_FREE] = ncores
        pad = np.arange(m)[None, :] >= ncores[:, None]
        self.core_end = np.where(pad, np.inf, -np.inf)
        self.core_held = np.zeros((n, m), dtype=np.bool_)
        self.held = np.zeros((n, m, 6))              # at most one window per held core
        self.mem_cap = 0
        self._grow_memory(max(4, 2 * m))
        self.file_bits = np.zeros((64, self.words), dtype=np.uint64)
        self.dirty = []                               # nodes changed since the last pass
        self._is_dirty = np.zeros(n, dtype=np.bool_)

    def _grow_memory(self, cap):
        mem = np.zeros((self.n, cap, 6))
        if self.mem_cap:
            mem[:, :self.mem_cap] = self.mem
        self.mem, self.mem_cap = mem, cap

    def ensure_files(self, count):
        """Room in the file bitmaps for ids below ``count``."""
        rows = self.file_bits.shape[0]
        if count > rows:
            bits = np.zeros((max(count, 2 * rows), self.words), dtype=np.uint64)
            bits[:rows] = self.file_bits
            self.file_bits = bits

    def arrays(self):
        """The arrays the compiled pass takes, in its order."""
        return self.node_f, self.core_end, self.core_held, self.held, self.mem, self.file_bits

    def take_dirty(self):
        """The nodes changed since the last call, as an array (and forget them)."""
        nodes = np.array(self.dirty, dtype=np.int64)
        self._is_dirty[nodes] = False
        self.dirty = []
        return nodes

    def _changed(self, node):
        if not self._is_dirty[node]:
            self._is_dirty[node] = True
            self.dirty.append(node)

    # ---- events (called by ClusterState) --------------------------------
    def hold(self, node, positions, end):
        self.core_end[node, positions] = end
        self.core_held[node, positions] = True
        self._min_end(node)

    def release(self, node, positions):
        self.core_end[node, positions] = -np.inf
        self.core_held[node, positions] = False
        self._min_end(node)

    def _min_end(self, node):
        held = self.core_held[node]
        self.node_f[node, MIN_END] = self.core_end[node][held].min() if held.any() else np.inf
        self.node_f[node, N_FREE] = np.count_nonzero(self.core_end[node] == -np.inf)
        self._changed(node)

    def mirror(self, node, windows, cache, file_ends=None):
        """Copy node's windows (jobs holding cores, in start order) and memory;
        ``file_ends`` (file -> end), if given, replaces the windows' ends (R10's per-file windows)."""
        # One array assignment per table, not one per row: numpy's per-item cost dominates at these sizes.
        fid = self.files.id_of
        files = cache.files
        loading_end = np.inf
        held = []
        for w in windows:
            # a window of several files (a workflow's task) is one row per file, each
            # available from its own load's end: the pass reads held rows file by file
            reads = w.reads.items() if w.reads is not None else ((w.file, (w.size, w.avail)),)
            for f, (size, avail) in reads:
                r = files.get(f) if f is not None else None
                loading = r is not None and not r.loaded
                end = file_ends.get(f, w.end) if file_ends is not None else w.end
                held.append((w.start, avail, end, size, fid(f), loading))
                if loading and avail < loading_end:
                    loading_end = avail
        if len(held) > self.held.shape[1]:
            grown = np.zeros((self.n, max(len(held), 2 * self.held.shape[1]), 6))
            grown[:, :self.held.shape[1]] = self.held
            self.held = grown
        if held:
            self.held[node, :len(held)] = held
        self.node_f[node, N_HELD] = len(held)
        self.node_f[node, MIN_LOADING] = loading_end

        word, bit = node >> 6, np.uint64(1 << (node & 63))
        old = self.mem[node, :int(self.node_f[node, N_MEM]), M_FILE].astype(np.int64)
        self.file_bits[old, word] &= ~bit        # a file is at most once in a memory: no index repeats
        if len(files) > self.mem_cap:
            self._grow_memory(max(len(files), 2 * self.mem_cap))
        ids = [fid(f) for f in files]
        self.ensure_files(len(self.files))
        if ids:
            self.mem[node, :len(ids)] = [(r.size, r.last_use, f, r.loaded, r.users, r.seq)
                                         for f, r in zip(ids, files.values())]
            self.file_bits[ids, word] |= bit
        self.node_f[node, N_MEM] = len(ids)
        self._changed(node)
