"""The actual state of the cluster as the scheduler knows it between passes.

Cores held by running or waiting jobs (until their planned end), each node's
memory, the windows of jobs holding cores, the stagings in flight, and an index
file -> nodes where that file is in memory or loading. Only real events change
it: a start decision committed, a job or staging completed.

Issue 39: a job may read several files (its window holds one row per file,
``actual_windows``; its misses one staging of their summed size) and write
outputs, in its node's memory at its end (pinned until written back under
``write_back: staged``); under ``load_model`` "shared" the loads through the
backbone (from Lustre, and write-backs) are replayed (``ActualLoads``).
"""

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from oracle_planner.availability import make_availability
from batloc.locality.backbone import ActualLoads
from batloc.locality.cache import NodeCache
from oracle_planner.file_outlook import Window
from batloc.locality.staging import Staging, StagingBook, staging_job_id, writeback_job_id
from batloc.schedulers.base import stagings_waited
from batloc.schedulers.planning.file_outlook import staged_bytes


@dataclass
class QueuedJob:
    id: str
    cores: int
    walltime: float        # +inf when the job has none
    file: Optional[str]
    size: float
    subtime: float = 0.0


@dataclass
class Held:
    """A job holding cores: waiting for its file, or computing."""
    job: QueuedJob
    node: int
    positions: np.ndarray
    start: float           # t_k: cores held from here
    deadline: float        # t_k + walltime: the window's end
    staging: Optional[str]
    computing: bool
    files_left: bool = False   # killed at its window's end: out of its node's memory model from then on
    alloc: object = None
    waits: Optional[set] = None      # several files: the stagings it still waits for


@dataclass
class JobWindow:
    """A job of several files holding cores: its window, one row per file (``rows``)."""
    start: float
    avail: float
    end: float
    file: Optional[str]
    size: float
    staging: Optional[str]
    rows: list


class ClusterState:
    def __init__(self, platform, options, load_model="node"):
        self.platform = platform
        self.options = options
        self.load_model = load_model
        self.actual_loads = ActualLoads(platform.backbone)
        self.load_caps = {}                                 # load in flight through the backbone -> its cap
        self.projected = {}                                 # its end if no other load began (at the last event)
        self.written_at = {}                                # output -> producer's node, while written back
        self.writebacks = {}                                # write-back staging id -> Staging
        self.room_queue = [[] for _ in platform.nodes]      # node -> jobs waiting for room, in order
        self.availability = make_availability(platform, options.backfilling)
        self.caches = [NodeCache(n.memory_bytes, options.cache) for n in platform.nodes]
        self.windows = [dict() for _ in platform.nodes]     # node -> job id -> Window
        self.stagings = StagingBook()
        self.held = {}                                      # job id -> Held
        self.file_nodes = {}                                # file -> set(node)
        # file_window "per_file" (R10): node -> file -> the latest planned end of its users since its load
        self.file_ends = [dict() for _ in platform.nodes] if options.file_window == "per_file" else None

    # ---- index of files in memory --------------------------------------
    def _index_add(self, file, node):
        if file is not None:
            self.file_nodes.setdefault(file, set()).add(node)

    def _index_drop(self, files, node):
        for f in files:
            nodes = self.file_nodes.get(f)
            if nodes is not None:
                nodes.discard(node)
                if not nodes:
                    del self.file_nodes[f]

    def free_positions(self, node):
        """The positions of node's cores no job holds, in index order."""
        return np.flatnonzero(self.availability.end[node] == -np.inf)

    def cores_free(self, node, positions):
        return not self.availability.held[node, positions].any()

    def busy_node_count(self):
        return int(self.availability.busy_nodes().sum())

    # ---- events ---------------------------------------------------------
    def actual_windows(self, node):
        """Node's windows of jobs holding cores (a job of several files: one row per file); with
        ``file_window: "per_file"`` (R10) each ends at the latest planned end of its file's users since its load."""
        ends = self.file_ends[node] if self.file_ends is not None else {}
        out = []
        for w in self.windows[node].values():
            if isinstance(w, JobWindow):
                out += w.rows
            else:
                out.append(replace(w, end=ends[w.file]) if w.file in ends else w)
        return out

    # ---- loads through the backbone (load_model "shared") ----------------
    def _load_began(self, st, now, cap):
        if self.load_model == "shared" and st.source is None and not st.writeback:   # from Lustre
            self.actual_loads.begin(st.id, now, st.size, cap)
            self.load_caps[st.id] = cap
            self._reproject(now)

    def _load_ended(self, staging_id, now):
        if self.load_caps.pop(staging_id, None) is not None:
            self.actual_loads.end(staging_id, now)
            self._reproject(now)

    def _reproject(self, now):
        """The loads' projected ends become their stagings' and their waiting windows' ends."""
        self.projected = self.actual_loads.projection(now)
        for st in self.stagings.by_id.values():
            end = self.projected.get(st.id)
            if end is None:
                continue
            st.est_end = end
            for jid in st.waiters:
                w = self.windows[st.node].get(jid)
                if isinstance(w, JobWindow):
                    for row in w.rows:
                        if row.file in st.files:
                            row.avail = end
                    w.avail = max(row.avail for row in w.rows)
                elif w is not None and w.staging == st.id:
                    w.avail = end

    def leave_stagings(self, held):
        """`held` no longer waits for its loads (its window ended before they did)."""
        for sid in stagings_waited(held):
            self.stagings.leave(sid, held.job.id)

    def carried_loads(self, now):
        """(now, end, cap) of each load from Lustre in flight that a job holding cores still waits for."""
        out = []
        for sid, end in self.projected.items():
            st = self.stagings.by_id.get(sid)
            if st is not None and any(jid in self.windows[st.node] for jid in st.waiters):
                out.append((now, end, self.load_caps[sid]))
        return out

    # ---- room in memory (as the shipped state) ----------------------------
    def missing_bytes(self, job, node, now):
        cache = self.caches[node]
        return sum(size for f, size in job.reads if cache.status(f, now) == "absent")

    def lacks_room(self, job, node, now):
        need = self.missing_bytes(job, node, now)
        return need > 0 and (bool(self.room_queue[node]) or not self.caches[node].room_for_files(job.reads, now))

    def wait_for_room(self, job, node, positions, now):
        deadline = now + job.walltime
        self.availability.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(now, now, deadline, None, 0.0)
        held = Held(job, node, positions, now, deadline, None, computing=False, waits=set())
        self.held[job.id] = held
        self.room_queue[node].append(job.id)
        return held

    def admit_waiting(self, node, now):
        queue, ready = self.room_queue[node], []
        while queue:
            held = self.held[queue[0]]
            need = self.missing_bytes(held.job, node, now)
            if need > 0 and not self.caches[node].room_for_files(held.job.reads, now):
                break
            queue.pop(0)
            ready.append(held)
        return ready

    def start(self, job, node, positions, now, est_file_time, since=None):
        """Commit a start decision (``since``: cores taken then, waiting for room).
        Returns (case, Held, new Staging or None)."""
        cache = self.caches[node]
        case, evicted = cache.start_job(job.file, job.size, now, load_end=est_file_time)
        self._index_drop(evicted, node)
        self._index_add(job.file, node)
        staging, new_staging = None, None
        if case == "miss":
            sid = staging_job_id(job.id, self.platform.nodes[node].name)
            nb = staged_bytes(job.size, self.platform.bandwidth[node],
                              self.options.load_time_rounding == "float32_floor")
            source = self.written_at.get(job.file)
            if source is not None:
                sid = staging_job_id(job.id, self.platform.nodes[node].name, self.platform.nodes[source].name)
            new_staging = self.stagings.begin(sid, node, job.file, nb, now, est_file_time, job.id, source=source)
            staging = sid
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            staging, est_file_time = st.id, st.est_end
        else:
            est_file_time = now
        since = now if since is None else since
        deadline = since + job.walltime
        if self.file_ends is not None and job.file is not None:
            ends = self.file_ends[node]
            ends[job.file] = deadline if case == "miss" else max(ends.get(job.file, deadline), deadline)
        self.availability.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(since, est_file_time, deadline, job.file, job.size, staging)
        held = Held(job, node, positions, since, deadline, staging, computing=case in ("hit", "none"))
        self.held[job.id] = held
        if new_staging is not None:
            self._load_began(new_staging, now, self.platform.bandwidth[node])
        return case, held, new_staging

    def start_files(self, job, node, positions, now, since=None):
        """Commit the start of a job reading several files: (cases, stagings, Held, new Stagings).

        Its misses from one source are one staging of their summed size (its end replayed under the
        load model "shared"); it waits for those and for the loads in flight of its other files."""
        cache = self.caches[node]
        name = self.platform.nodes[node].name
        bw = self.platform.bandwidth[node]
        cases, evicted = cache.start_files(job.files, now)
        self._index_drop(evicted, node)
        stagings, avail, waits, missed = [None] * len(cases), {}, set(), {}
        for i, ((f, size), case) in enumerate(zip(job.files, cases)):
            self._index_add(f, node)
            if case == "hit":
                avail[f] = now
            elif case == "wait":
                st = self.stagings.find(node, f)
                if job.id not in st.waiters:
                    st.waiters.append(job.id)
                waits.add(st.id)
                stagings[i], avail[f] = st.id, st.est_end
            else:
                missed.setdefault(self.written_at.get(f), []).append(i)
        new = []
        for source, idx in missed.items():
            files = tuple(job.files[i][0] for i in idx)
            total = sum(job.files[i][1] for i in idx)
            sid = staging_job_id(job.id, name, None if source is None else self.platform.nodes[source].name)
            est = now + total / bw      # under load_model "shared", replayed at once (_load_began)
            st = self.stagings.begin(sid, node, files[0], total, now, est, job.id, files, source)
            for i in idx:
                cache.files[job.files[i][0]].load_end = est
                stagings[i], avail[job.files[i][0]] = sid, est
            waits.add(sid)
            new.append(st)
        since = now if since is None else since
        deadline = since + job.walltime
        reads = frozenset(f for f, _ in job.files)
        rows = [Window(since, avail[f], deadline, f, size, stagings[i], reads)
                for i, (f, size) in enumerate(job.files)]
        self.availability.hold(node, positions, deadline)
        self.windows[node][job.id] = JobWindow(since, max(avail.values(), default=now), deadline, job.file,
                                               job.size, next(iter(waits), None), rows)
        held = Held(job, node, positions, since, deadline, next((s for s in stagings if s), None),
                    computing=not waits, waits=waits)
        self.held[job.id] = held
        for st in new:
            self._load_began(st, now, bw)
        return cases, stagings, held, new

    def staging_done(self, staging_id, now):
        """A load completed: returns the Held jobs that may now compute."""
        st = self.stagings.complete(staging_id)
        self._load_ended(staging_id, now)
        for f in st.files:
            if self.stagings.find(st.node, f) is None:       # else a newer load of it is in flight
                self.caches[st.node].load_done(f, now)
        ready = []
        for jid in st.waiters:
            held = self.held.get(jid)
            if held is None:
                continue            # killed while waiting
            w = self.windows[st.node].get(jid)
            if isinstance(w, JobWindow):
                for row in w.rows:
                    if row.file in st.files:
                        row.avail = now
            if held.waits is not None:
                held.waits.discard(staging_id)
                if held.waits:
                    continue        # another of its files is still loading
            held.computing = True
            if w is not None:
                w.avail = now
            ready.append(held)
        return ready

    # ---- outputs (workflows) ----------------------------------------------
    def place_outputs(self, held, now, staged):
        """`held`'s job completed: its outputs are in its node's memory; with `staged` write-back,
        pinned there until the returned write-back Staging ends."""
        node = held.node
        cache = self.caches[node]
        for f, size in held.job.outputs:
            self._index_drop(cache.add_output(f, size, now, pinned=staged), node)
            if cache.status(f) != "absent":
                self._index_add(f, node)
            if staged:
                self.written_at[f] = node
        if not staged:
            return None
        sid = writeback_job_id(held.job.id, self.platform.nodes[node].name)
        total = sum(s for _, s in held.job.outputs)
        st = Staging(sid, node, held.job.outputs[0][0], total, now, now + total / self.platform.bandwidth[node],
                     [], tuple(f for f, _ in held.job.outputs), writeback=True)
        self.writebacks[sid] = st
        self._load_began(st, now, self.platform.bandwidth[node])
        return st

    def written_back(self, staging_id, now):
        """A write-back ended: its outputs are on Lustre, and free to leave their node's memory."""
        st = self.writebacks.pop(staging_id)
        self._load_ended(staging_id, now)
        cache = self.caches[st.node]
        for f in st.files:
            self._index_drop(cache.unpin(f, now), st.node)
            if self.written_at.get(f) == st.node:
                del self.written_at[f]
        return st.node

    def killed(self, job_id, now):
        """Killed now at its window's end: it leaves its node's memory model now, its cores when it ends."""
        held = self.held.get(job_id)
        if held is not None and not held.files_left:
            held.files_left = True
            self._files_left(held, now)

    def _files_left(self, held, now):
        node = held.node
        job_id = held.job.id
        self.windows[node].pop(job_id, None)
        if job_id in self.room_queue[node]:         # killed while waiting for room: it claimed nothing
            self.room_queue[node].remove(job_id)
            return
        if getattr(held.job, "files", ()):
            self._index_drop(self.caches[node].end_files([f for f, _ in held.job.files], now), node)
            return
        evicted = self.caches[node].end_job(held.job.file, now)
        r = self.caches[node].files.get(held.job.file)
        if self.file_ends is not None and (r is None or r.users == 0):
            self.file_ends[node].pop(held.job.file, None)
        self._index_drop(evicted, node)

    def finish(self, job_id, now):
        """A job ended (completed or killed): free its cores and its file's use (unless its kill did)."""
        held = self.held.pop(job_id, None)
        if held is None:
            return None
        node = held.node
        self.availability.release(node, held.positions)
        if not held.files_left:
            self._files_left(held, now)
        if getattr(held.job, "files", ()):
            if not held.computing:
                for sid in held.waits or ():
                    st = self.stagings.by_id.get(sid)
                    if st is not None and job_id in st.waiters:
                        st.waiters.remove(job_id)
            return held
        if held.staging is not None and not held.computing:
            st = self.stagings.by_id.get(held.staging)
            if st is not None and job_id in st.waiters:
                st.waiters.remove(job_id)
        return held
