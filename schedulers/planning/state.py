"""The actual state of the cluster as the scheduler knows it between passes.

Cores held by running or waiting jobs (``Held``, the record every family
keeps, until their planned end), each node's memory (the shared locality
model's ``NodeCache``), the windows of jobs holding cores, the stagings in
flight. Only real events change it: a start decision committed, a job or
staging completed; each event then refreshes that node's copy in the flat
arrays the compiled pass reads (``flat_state``).

Workflows (contract §2b): a job may read several files, each a hit, a wait
for a load in flight or a miss; its misses from one source are one staging
(Lustre, or, while an output is written back, its producer's memory), and it
computes once every file is there. Its outputs enter its node's memory at
its end: with ``write_back: "staged"`` pinned there until a staging has
copied them to Lustre, and read from that node until then.

Room (issue 39): the paper's rule (a job's files within its cores' share of
the node's memory) cannot overflow a node, but outputs pinned by their
write-back hold memory no core accounts for. A start whose missing files do
not fit next to the files in use and the pinned outputs (``lacks_room``)
takes its cores and waits for room (``wait_for_room``), first come first
served per node, as the staging proxy's jobs do; it claims its files when a
write-back or a job's end frees room (``admit_waiting``).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.locality.backbone import ActualLoads
from batloc.locality.cache import NodeCache
from batloc.locality.staging import Staging, staging_job_id, writeback_job_id
from batloc.schedulers.base import Held, HeldJobs
from batloc.schedulers.planning.file_outlook import staged_bytes
from batloc.schedulers.planning.flat_state import FlatState


@dataclass
class Window:
    """A job holding cores on a node: from ``start``, its file available at
    ``avail`` (load end, or start on a hit), until ``end`` (start + walltime)."""
    start: float
    avail: float
    end: float
    file: Optional[str]
    size: float
    staging: Optional[str] = None    # staging job this window loads or waits for
    # A job reading several files: file -> (size, when it is in memory); None for one file.
    reads: Optional[dict] = None
    # load_model "shared": the files of the rows that carry a load from Lustre in flight (one row per
    # load, its first waiter's: the pass counts each load once); None: none.
    own_load: Optional[frozenset] = None


class ClusterState(HeldJobs):
    def __init__(self, platform, options):
        super().__init__()
        self.platform = platform
        self.options = options
        self.float32_loads = options.load_time_rounding == "float32_floor"
        self.flat = FlatState(platform)
        self.caches = [NodeCache(n.memory_bytes, options.cache) for n in platform.nodes]
        self.windows = [dict() for _ in platform.nodes]     # node -> job id -> Window
        # file_window "per_file" (R10): node -> file -> the latest planned end of its users since its load
        self.file_ends = [dict() for _ in platform.nodes] if options.file_window == "per_file" else None
        self.written_at = {}       # output -> its producer's node, while it is written back (staged)
        self.writebacks = {}       # write-back staging id -> Staging
        self.room_queue = [[] for _ in platform.nodes]     # node -> ids of jobs waiting for room, in order
        # load_model "shared": the loads from Lustre in flight, replayed at max-min rates; their ends if
        # no other load began (staging id -> end), written into the windows that wait for them
        self.shared = options.load_model == "shared"
        self.actual_loads = ActualLoads(platform.backbone) if self.shared else None
        self.projected = {}
        self.flat.set_backbone(platform.backbone if self.shared else np.inf)

    def file_id(self, name):
        return self.flat.files.id_of(name)

    def free_positions(self, node):
        """The positions of node's cores no job holds, in index order."""
        return np.flatnonzero(self.flat.core_end[node] == -np.inf)

    def cores_free(self, node, positions):
        return not self.flat.core_held[node, positions].any()

    def _mirror(self, node):
        if self.shared:
            self._mark_loads(node)
        self.flat.mirror(node, list(self.windows[node].values()), self.caches[node],
                         self.file_ends[node] if self.file_ends is not None else None, self._pins(node))

    def _pins(self, node):
        """The outputs pinned on node by their write-backs: file -> the write-back's estimated end
        (the latest, if two pin it); None without."""
        if not self.writebacks:
            return None
        pins = {}
        for st in self.writebacks.values():
            if st.node == node:
                for f in st.files:
                    pins[f] = max(pins.get(f, -np.inf), st.est_end)
        return pins

    def _mark_loads(self, node):
        """Each load from Lustre in flight on node is carried by the row of its first waiter still holding
        cores (a load no such job waits for any more is not counted)."""
        wins = self.windows[node]
        for w in wins.values():
            w.own_load = None
        for st in self.stagings.by_id.values():
            if st.node != node or st.id not in self.projected:
                continue
            for jid in st.waiters:
                w = wins.get(jid)
                if w is None:
                    continue
                f = next((f for f in st.files if (f in w.reads if w.reads is not None else f == w.file)), None)
                if f is not None:
                    w.own_load = (w.own_load or frozenset()) | {f}
                    break
    def leave_stagings(self, held):
        # the row that carried a load it waited for (load_model "shared") passes to the next waiter, or none
        super().leave_stagings(held)
        if self.shared:
            self._mirror(held.node)

    # ---- loads sharing the backbone (load_model "shared") -------------------
    def _load_began(self, st, now):
        """A staging from Lustre began: replayed with the others, their projected ends refreshed."""
        if self.shared and st.source is None:
            self.actual_loads.begin(st.id, now, st.size, self.platform.bandwidth[st.node])
            self._reproject(now)

    def _load_ended(self, st, now):
        if self.shared and st.id in self.projected:
            self.actual_loads.end(st.id, now)
            self._reproject(now)

    def _reproject(self, now):
        """Each load in flight ends when the replay says if no other began: the windows waiting for it
        (its own, and the jobs that joined it) hold that end, which the pass reads."""
        self.projected = self.actual_loads.projection(now)
        for st in list(self.stagings.by_id.values()):
            end = self.projected.get(st.id)
            if end is None:
                continue
            st.est_end = end
            touched = False
            for jid in st.waiters:
                w = self.windows[st.node].get(jid)
                if w is None:
                    continue
                if w.reads is not None:
                    for f in st.files:
                        if f in w.reads:
                            w.reads[f] = (w.reads[f][0], end)
                    w.avail = max(a for _, a in w.reads.values())
                elif w.staging == st.id:
                    w.avail = end
                touched = True
            if touched:
                self._mirror(st.node)

    def _file_started(self, node, file, case, deadline):
        """R10: a start extends its file's window on node to its planned end; a load begins a new window."""
        if self.file_ends is not None and file is not None:
            ends = self.file_ends[node]
            ends[file] = deadline if case == "miss" else max(ends.get(file, deadline), deadline)

    def _file_left(self, node, file):
        """R10: a file's last user ended: its window with it (the next user's start opens one)."""
        if self.file_ends is not None and file is not None:
            r = self.caches[node].files.get(file)
            if r is None or r.users == 0:
                self.file_ends[node].pop(file, None)

    # ---- events ---------------------------------------------------------
    # ---- room in memory --------------------------------------------------
    def missing_bytes(self, job, node, now):
        """Bytes of `job`'s files absent from node's memory now (what its start would load)."""
        cache = self.caches[node]
        return sum(size for f, size in job.reads if cache.status(f, now) == "absent")

    def lacks_room(self, job, node, now):
        """Whether `job` must wait for room on node: its missing files do not fit next to the files in
        use and the pinned outputs (with its resident files no job uses yet, a parent's output: its start
        holds them too), or an earlier job waits for room there (first come, first served)."""
        need = self.missing_bytes(job, node, now)
        return need > 0 and (bool(self.room_queue[node]) or not self.caches[node].room_for_files(job.reads, now))

    def wait_for_room(self, job, node, positions, now):
        """`job` holds its cores on node from now, its files not claimed yet: its Held (waiting)."""
        deadline = now + job.walltime
        self.flat.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(now, now, deadline, None, 0.0)
        held = Held(job, node, positions, now, deadline, None, computing=False, waits=set())
        self.held[job.id] = held
        self.room_queue[node].append(job.id)
        self._mirror(node)
        return held

    def admit_waiting(self, node, now):
        """The Held jobs waiting for room on node that may claim it now, in order (out of the queue)."""
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
        """Commit a start decision (``since``: the cores were taken then, waiting for room).
        Returns (case, Held, new Staging or None)."""
        cache = self.caches[node]
        case, _ = cache.start_job(job.file, job.size, now, load_end=est_file_time)
        staging, new_staging = None, None
        if case == "miss":
            # an output still being written back is read from its producer's memory
            source = self.written_at.get(job.file) if self.written_at else None
            sid = staging_job_id(job.id, self.platform.nodes[node].name,
                                 None if source is None else self.platform.nodes[source].name)
            nb = staged_bytes(job.size, self.platform.bandwidth[node], self.float32_loads)
            new_staging = self.stagings.begin(sid, node, job.file, nb, now, est_file_time, job.id,
                                              source=source)
            staging = sid
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            staging, est_file_time = st.id, st.est_end
        else:
            est_file_time = now
        since = now if since is None else since
        deadline = since + job.walltime
        self._file_started(node, job.file, case, deadline)
        self.flat.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(since, est_file_time, deadline, job.file, job.size, staging)
        held = Held(job, node, positions, since, deadline, staging, computing=case in ("hit", "none"))
        self.held[job.id] = held
        self._mirror(node)
        if new_staging is not None:
            self._load_began(new_staging, now)
        return case, held, new_staging

    def start_files(self, job, node, positions, now, since=None):
        """Commit the start of a job reading several files: (cases, Held, new Stagings).

        Its misses are loaded by one staging per source, of their summed size;
        it waits for those and for the loads in flight of its other files."""
        cache = self.caches[node]
        name = self.platform.nodes[node].name
        bw = self.platform.nodes[node].bandwidth
        cases, _ = cache.start_files(job.files, now)
        reads, waits, missed = {}, set(), {}
        stagings = [None] * len(cases)
        for i, ((f, size), case) in enumerate(zip(job.files, cases)):
            if case == "hit":
                reads[f] = (size, now)
            elif case == "wait":
                st = self.stagings.find(node, f)
                if job.id not in st.waiters:
                    st.waiters.append(job.id)
                waits.add(st.id)
                stagings[i] = st.id
                reads[f] = (size, st.est_end)
            else:
                missed.setdefault(self.written_at.get(f), []).append(i)
        new = []
        for source, idx in missed.items():
            files = tuple(job.files[i][0] for i in idx)
            total = sum(job.files[i][1] for i in idx)
            src_name = None if source is None else self.platform.nodes[source].name
            sid = staging_job_id(job.id, name, src_name)
            est = now + total / bw
            st = self.stagings.begin(sid, node, files[0], total, now, est, job.id, files, source)
            for i in idx:
                cache.files[job.files[i][0]].load_end = est
                stagings[i] = sid
                reads[job.files[i][0]] = (job.files[i][1], est)
            waits.add(sid)
            new.append(st)
        avail = max((a for _, a in reads.values()), default=now)
        since = now if since is None else since
        deadline = since + job.walltime
        self.flat.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(since, avail, deadline, job.file, job.size, next(iter(waits), None),
                                            reads)
        held = Held(job, node, positions, since, deadline, stagings[0] if waits else None, computing=not waits,
                    waits=waits)
        self.held[job.id] = held
        self._mirror(node)
        for st in new:
            self._load_began(st, now)
        return cases, stagings, held, new

    def staging_done(self, staging_id, now):
        """A load completed: returns the Held jobs that may now compute."""
        st, ready = self.loaded(staging_id)
        self._load_ended(st, now)
        cache = self.caches[st.node]
        for f in st.files:
            # A load whose every user ended first left the memory (contract §6); a newer load of
            # the file on the node may be in flight since: that one's end makes the file present.
            if self.stagings.find(st.node, f) is None:
                cache.load_done(f, now)
        for jid in st.waiters:
            w = self.windows[st.node].get(jid)
            if w is not None and w.reads is not None:
                for f in st.files:
                    if f in w.reads:
                        w.reads[f] = (w.reads[f][0], now)
        for held in ready:
            w = self.windows[st.node].get(held.job.id)
            if w is not None:
                w.avail = now
        self._mirror(st.node)
        return ready

    # ---- outputs (workflows) ----------------------------------------------
    def place_outputs(self, held, now, staged):
        """`held`'s job completed: its outputs are in its node's memory; with `staged` write-back,
        pinned there until the returned write-back Staging (None without outputs) ends."""
        outputs = held.job.outputs
        if not outputs:
            return None
        node = held.node
        cache = self.caches[node]
        for f, size in outputs:
            cache.add_output(f, size, now, pinned=staged)
            if staged:
                self.written_at[f] = node
        if not staged:
            self._mirror(node)
            return None
        sid = writeback_job_id(held.job.id, self.platform.nodes[node].name)
        total = sum(s for _, s in outputs)
        st = Staging(sid, node, outputs[0][0], total, now, now + total / self.platform.nodes[node].bandwidth,
                     [], tuple(f for f, _ in outputs), writeback=True)
        self.writebacks[sid] = st
        self._mirror(node)      # its outputs pinned until st's end
        return st

    def written_back(self, staging_id, now):
        """A write-back ended: its outputs are on Lustre, and free to leave their node's memory.
        Returns the node."""
        st = self.writebacks.pop(staging_id)
        cache = self.caches[st.node]
        for f in st.files:
            cache.unpin(f, now)
            if self.written_at.get(f) == st.node:
                del self.written_at[f]
        self._mirror(st.node)
        return st.node

    def finish(self, job_id, now):
        """A job ended (completed or killed): free its cores and its file's use (unless its kill did)."""
        held = self.release(job_id)
        if held is None:
            return None
        node = held.node
        if job_id in self.room_queue[node]:         # killed while waiting for room: it claimed nothing
            self.room_queue[node].remove(job_id)
            self.flat.release(node, held.positions)
            self.windows[node].pop(job_id, None)
            self._mirror(node)
            return held
        self.flat.release(node, held.positions)
        if held.files_left:
            self._mirror(node)
        else:
            self.files_left(held, now)
        return held

    def files_left(self, held, now):
        """The job's window and its use of its files end now (its cores are the caller's)."""
        node = held.node
        self.windows[node].pop(held.job.id, None)
        if held.job.id in self.room_queue[node]:     # killed while waiting for room: it claimed nothing
            self.room_queue[node].remove(held.job.id)
            self._mirror(node)
            return
        if held.job.files:
            self.caches[node].end_files([f for f, _ in held.job.files], now)
        else:
            self.caches[node].end_job(held.job.file, now)
            self._file_left(node, held.job.file)
        self._mirror(node)
