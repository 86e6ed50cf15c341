"""The actual state of the cluster as the scheduler knows it between passes.

Cores held by running or waiting jobs (``Held``, the record every family
keeps, until their planned end), each node's memory (the shared locality
model's ``NodeCache``), the windows of jobs holding cores, the stagings in
flight. Only real events change it: a start decision committed, a job or
staging completed; each event then refreshes that node's copy in the flat
arrays the compiled pass reads (``flat_state``).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.locality.cache import NodeCache
from batloc.locality.staging import staging_job_id
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

    def file_id(self, name):
        return self.flat.files.id_of(name)

    def free_positions(self, node):
        """The positions of node's cores no job holds, in index order."""
        return np.flatnonzero(self.flat.core_end[node] == -np.inf)

    def cores_free(self, node, positions):
        return not self.flat.core_held[node, positions].any()

    def _mirror(self, node):
        self.flat.mirror(node, list(self.windows[node].values()), self.caches[node],
                         self.file_ends[node] if self.file_ends is not None else None)

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
    def start(self, job, node, positions, now, est_file_time):
        """Commit a start decision. Returns (case, Held, new Staging or None)."""
        cache = self.caches[node]
        case, _ = cache.start_job(job.file, job.size, now, load_end=est_file_time)
        staging, new_staging = None, None
        if case == "miss":
            sid = staging_job_id(job.id, self.platform.nodes[node].name)
            nb = staged_bytes(job.size, self.platform.bandwidth[node], self.float32_loads)
            new_staging = self.stagings.begin(sid, node, job.file, nb, now, est_file_time, job.id)
            staging = sid
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            staging, est_file_time = st.id, st.est_end
        else:
            est_file_time = now
        deadline = now + job.walltime
        self._file_started(node, job.file, case, deadline)
        self.flat.hold(node, positions, deadline)
        self.windows[node][job.id] = Window(now, est_file_time, deadline, job.file, job.size, staging)
        held = Held(job, node, positions, now, deadline, staging, computing=case in ("hit", "none"))
        self.held[job.id] = held
        self._mirror(node)
        return case, held, new_staging

    def staging_done(self, staging_id, now):
        """A load completed: returns the Held jobs that may now compute."""
        st, ready = self.loaded(staging_id)
        self.caches[st.node].load_done(st.file, now)
        for held in ready:
            w = self.windows[st.node].get(held.job.id)
            if w is not None:
                w.avail = now
        self._mirror(st.node)
        return ready

    def finish(self, job_id, now):
        """A job ended (completed or killed): free its cores and its file's use."""
        held = self.release(job_id)
        if held is None:
            return None
        node = held.node
        self.flat.release(node, held.positions)
        self.windows[node].pop(job_id, None)
        self.caches[node].end_job(held.job.file, now)
        self._file_left(node, held.job.file)
        self._mirror(node)
        return held
