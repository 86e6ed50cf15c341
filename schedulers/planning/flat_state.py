"""The actual state as flat arrays, the form the compiled pass reads.

``ClusterState`` (``state.py``) stays the one place where events change the
state, through the shared locality model (``NodeCache``, ``StagingBook``); after
each event it copies what changed on that node here (``hold``/``release`` for
cores, ``mirror`` for the node's windows and memory). Per node k:

- ``node_f[k]``: bandwidth, memory, earliest planned end of a held core,
  earliest estimated end of a load in flight, number of windows, number of
  files in memory, number of free cores, the backbone every load from
  Lustre shares under ``load_model: "shared"`` (+inf otherwise), and the
  number of outputs pinned by their write-back (columns
  ``BW, MEM, MIN_END, MIN_LOADING, N_HELD, N_MEM, N_FREE, BACKBONE, N_PINNED``);
- cores: ``core_end`` the planned end of the job holding each core (-inf: free;
  +inf: padding past the node's core count), ``core_held``, and ``core_sorted``
  each node's ``core_end`` sorted (its c-th free instant in the actual state is
  column c - 1: the walk's re-choice bounds every node by it);
- ``held[k, i]``: the windows of the jobs holding cores, in start order:
  start, file available, end, size, file id, file still loading (``START,
  AVAIL, END, SIZE, FILE, LOADING``: 0, or ``OWN_LOAD`` on the one row of the
  job that began the load from Lustre, 1 on the others); a job reading several
  files has one row per file (the array grows past one row per core then);
- ``mem[k, i]``: the files in memory, in the cache's insertion order: size,
  last use, file id, loaded, users, LRU sequence, and for an output pinned by
  its write-back (``write_back: staged``) that write-back's estimated end,
  else -inf (``M_SIZE, M_LAST, M_FILE, M_LOADED, M_USERS, M_SEQ, M_PIN``);
- ``file_bits[f]``: a bitmap of the nodes whose memory holds or loads file f.

Records are rows of float arrays (ids and counts are exact in a float)
rather than one array per field: CPython passes a call of more than 30
arguments as ``f(*args)``, and numba then builds a tuple and counts a
reference per array at every call; the compiled functions take few arrays.
Files are numbered in order of first appearance (``FileIds``). Arrays that
grow (files per node, file ids) are reallocated: ``arrays()`` must be called
again after an event.
"""

from array import array

import numpy as np

# Columns of node_f, held, mem.
BW, MEM, MIN_END, MIN_LOADING, N_HELD, N_MEM, N_FREE, BACKBONE, N_PINNED = range(9)
START, AVAIL, END, SIZE, FILE, LOADING = range(6)
OWN_LOAD = 2.0     # held[k, i, LOADING] of the row whose job began the load (one row per load from Lustre)
M_SIZE, M_LAST, M_FILE, M_LOADED, M_USERS, M_SEQ, M_PIN = range(7)
MEM_COLUMNS = 7


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
        self.node_f = np.zeros((n, 9))
        self.node_f[:, BW] = platform.bandwidth
        self.node_f[:, MEM] = platform.memory
        self.node_f[:, MIN_END] = np.inf
        self.node_f[:, MIN_LOADING] = np.inf
        self.node_f[:, BACKBONE] = np.inf
        self.bw_max = float(np.max(platform.bandwidth))
        ncores = np.array([len(nd.core_ids) for nd in platform.nodes], dtype=np.int64)
        self.node_f[:, N_FREE] = ncores
        pad = np.arange(m)[None, :] >= ncores[:, None]
        self.core_end = np.where(pad, np.inf, -np.inf)
        self.core_sorted = np.sort(self.core_end, axis=1)
        self.core_held = np.zeros((n, m), dtype=np.bool_)
        self.held = np.zeros((n, m, 6))              # at most one window per held core
        self.mem_cap = 0
        self._grow_memory(max(4, 2 * m))
        self.file_bits = np.zeros((64, self.words), dtype=np.uint64)
        self.dirty = []                               # nodes changed since the last pass
        self._is_dirty = np.zeros(n, dtype=np.bool_)
        self._mem_ids = [[] for _ in range(n)]        # the file ids of each node's memory, as mem holds them
        self._views = None

    def _grow_memory(self, cap):
        mem = np.zeros((self.n, cap, MEM_COLUMNS))
        if self.mem_cap:
            mem[:, :self.mem_cap] = self.mem
        self.mem, self.mem_cap = mem, cap
        self._views = None

    def set_backbone(self, bandwidth):
        """The bandwidth every load from Lustre shares in planning (+inf: each its own node link)."""
        self.node_f[:, BACKBONE] = bandwidth

    def ensure_files(self, count):
        """Room in the file bitmaps for ids below ``count``."""
        rows = self.file_bits.shape[0]
        if count > rows:
            bits = np.zeros((max(count, 2 * rows), self.words), dtype=np.uint64)
            bits[:rows] = self.file_bits
            self.file_bits = bits
            self._views = None

    def arrays(self):
        """The arrays the compiled pass takes, in its order."""
        return self.node_f, self.core_end, self.core_held, self.held, self.mem, self.file_bits, self.core_sorted

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
        # a row of a few tens of cores: plain Python over its list beats three numpy reductions
        ends = self.core_end[node].tolist()
        held = [e for e, h in zip(ends, self.core_held[node].tolist()) if h]
        self.node_f[node, MIN_END] = min(held) if held else np.inf
        self.node_f[node, N_FREE] = ends.count(-np.inf)
        self.core_sorted[node] = sorted(ends)
        self._changed(node)

    def mirror(self, node, windows, cache, file_ends=None, pins=None):
        """Copy node's windows (jobs holding cores, in start order) and memory;
        ``file_ends`` (file -> end), if given, replaces the windows' ends (R10's per-file windows);
        ``pins`` (file -> its write-back's estimated end) the outputs pinned in memory."""
        # Once per event, so written as one block of doubles per table through a memoryview
        # (numpy's conversion of a list of rows cost more than the rest of the event), and only
        # the bitmap bits of the files that came or went are touched.
        fid = self.files.id_of
        files = cache.files
        loading_end = np.inf
        held = []
        rows = 0
        for w in windows:
            if w.reads is None:
                # one file (or none): the common case, one row
                f = w.file
                r = files.get(f) if f is not None else None
                loading = r is not None and not r.loaded
                end = file_ends.get(f, w.end) if file_ends is not None else w.end
                held += (w.start, w.avail, end, w.size, fid(f),
                         (OWN_LOAD if w.own_load and f in w.own_load else 1.0) if loading else 0.0)
                rows += 1
                if loading and w.avail < loading_end:
                    loading_end = w.avail
                continue
            # a window of several files (a workflow's task) is one row per file, each
            # available from its own load's end: the pass reads held rows file by file
            for f, (size, avail) in w.reads.items():
                r = files.get(f) if f is not None else None
                loading = r is not None and not r.loaded
                end = file_ends.get(f, w.end) if file_ends is not None else w.end
                held += (w.start, avail, end, size, fid(f),
                         (OWN_LOAD if w.own_load and f in w.own_load else 1.0) if loading else 0.0)
                rows += 1
                if loading and avail < loading_end:
                    loading_end = avail
        if rows > self.held.shape[1]:
            grown = np.zeros((self.n, max(rows, 2 * self.held.shape[1]), 6))
            grown[:, :self.held.shape[1]] = self.held
            self.held = grown
            self._views = None
        if len(files) > self.mem_cap:
            self._grow_memory(max(len(files), 2 * self.mem_cap))
        ids = [fid(f) for f in files]
        self.ensure_files(len(self.files))
        held_v, mem_v, bits_v = self._views or self._make_views()
        if rows:
            at = node * self.held.shape[1] * 6
            held_v[at:at + 6 * rows] = array("d", held)
        self.node_f[node, N_HELD] = rows
        self.node_f[node, MIN_LOADING] = loading_end

        old = self._mem_ids[node]
        if old != ids:
            bit = 1 << (node & 63)
            words = self.words
            word = node >> 6
            new = set(ids)
            for f in old:                # a file is at most once in a memory
                if f not in new:
                    bits_v[f * words + word] &= ~bit
            was = set(old)
            for f in ids:
                if f not in was:
                    bits_v[f * words + word] |= bit
            self._mem_ids[node] = ids
        pinned = 0
        if ids:
            mem = []
            for (name, r), f in zip(files.items(), ids):
                until = -np.inf
                if pins and r.pins and name in pins:
                    until = pins[name]
                    pinned += 1
                mem += (r.size, r.last_use, f, r.loaded, r.users, r.seq, until)
            at = node * self.mem_cap * MEM_COLUMNS
            mem_v[at:at + len(mem)] = array("d", mem)
        self.node_f[node, N_MEM] = len(ids)
        self.node_f[node, N_PINNED] = pinned
        self._changed(node)

    def _make_views(self):
        """Flat views of the tables ``mirror`` writes (made again whenever one is reallocated)."""
        self._views = (memoryview(self.held).cast("B").cast("d"), memoryview(self.mem).cast("B").cast("d"),
                       memoryview(self.file_bits).cast("B").cast("Q"))
        return self._views
