"""The actual state of the cluster as the scheduler knows it between passes.

Cores held by running or waiting jobs (until their planned end), each node's
memory, the windows of jobs holding cores, the stagings in flight, and an index
file -> nodes where that file is in memory or loading. Only real events change
it: a start decision committed, a job or staging completed.
"""

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from oracle_planner.availability import make_availability
from batloc.locality.cache import NodeCache
from oracle_planner.file_outlook import Window
from batloc.locality.staging import StagingBook, staging_job_id
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


class ClusterState:
    def __init__(self, platform, options):
        self.platform = platform
        self.options = options
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
        """Node's windows of jobs holding cores; with ``file_window: "per_file"`` (R10)
        each ends at the latest planned end of its file's users since its load."""
        ends = self.file_ends[node] if self.file_ends is not None else {}
        return [replace(w, end=ends[w.file]) if w.file in ends else w for w in self.windows[node].values()]

    def start(self, job, node, positions, now, est_file_time):
        """Commit a start decision. Returns (case, Held, new Staging or None)."""
        cache = self.caches[node]
        case, evicted = cache.start_job(job.file, job.size, now, load_end=est_file_time)
        self._index_drop(evicted, node)
        self._index_add(job.file, node)
        staging, new_staging = None, None
        if case == "miss":
            sid = staging_job_id(job.id, self.platform.nodes[node].name)
            nb = staged_bytes(job.size, self.platform.bandwidth[node],
                              self.options.load_time_rounding == "float32_floor")
            new_staging = self.stagings.begin(sid, node, job.file, nb, now, est_file_time, job.id)
            staging = sid
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            staging, est_file_time = st.id, st.est_end
        else:
            est_file_time = now
        deadline = now + job.walltime
        if self.file_ends is not None and job.file is not None:
            ends = self.file_ends[node]
            ends[job.file] = deadline if case == "miss" else max(ends.get(job.file, deadline), deadline)
        self.availability.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(now, est_file_time, deadline, job.file, job.size, staging)
        held = Held(job, node, positions, now, deadline, staging, computing=case in ("hit", "none"))
        self.held[job.id] = held
        return case, held, new_staging

    def staging_done(self, staging_id, now):
        """A load completed: returns the Held jobs that may now compute."""
        st = self.stagings.complete(staging_id)
        if self.stagings.find(st.node, st.file) is None:     # else a newer load of it is in flight
            self.caches[st.node].load_done(st.file, now)
        ready = []
        for jid in st.waiters:
            held = self.held.get(jid)
            if held is None:
                continue            # killed while waiting
            held.computing = True
            w = self.windows[st.node].get(jid)
            if w is not None:
                w.avail = now
            ready.append(held)
        return ready

    def killed(self, job_id, now):
        """Killed now at its window's end: it leaves its node's memory model now, its cores when it ends."""
        held = self.held.get(job_id)
        if held is not None and not held.files_left:
            held.files_left = True
            self._files_left(held, now)

    def _files_left(self, held, now):
        node = held.node
        self.windows[node].pop(held.job.id, None)
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
        if held.staging is not None and not held.computing:
            st = self.stagings.by_id.get(held.staging)
            if st is not None and job_id in st.waiters:
                st.waiters.remove(job_id)
        return held
