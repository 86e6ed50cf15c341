"""The actual state of the cluster as the file-sharing policies know it.

Cores held by started jobs (lowest free ids of a node), each node's memory
(``value`` memory of Eq. 7 or the shared locality model's ``NodeCache``), the
census of which nodes hold which file, the transfer Gantt chart, the stagings
in flight and the replications. Only real events change it: a start
committed, a replication booked, a job or staging completed. The protocol
around it is ``base.py``.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from batloc.locality.cache import NodeCache
from batloc.locality.staging import STAGE_WORKLOAD, staging_job_id
from batloc.locality.value_cache import FileCensus, ValueCache
from batloc.schedulers.base import Held, HeldJobs, procset_of
from batloc.schedulers.filesharing.transfers import TransferChart


@dataclass
class Job:
    id: str
    cores: int
    walltime: float        # +inf when the job has none
    file: Optional[str]
    size: float
    subtime: float
    seq: int               # submission order


class FileSharingState(HeldJobs):
    def __init__(self, platform, opts):
        super().__init__()
        nodes = platform.nodes
        self.platform = platform
        self.census = FileCensus()
        if opts.cache == "value":
            self.memories = [ValueCache(n.memory_bytes, self.census) for n in nodes]
        else:
            self.memories = [NodeCache(n.memory_bytes, opts.cache) for n in nodes]
        self.free = [np.ones(len(n.core_ids), dtype=bool) for n in nodes]
        self.n_free = [len(n.core_ids) for n in nodes]
        self.on_node = [dict() for _ in nodes]      # node -> job id -> Held
        self.chart = TransferChart(platform.bandwidth, opts.shared_lane)
        self.replicas = set()                       # ids of replication stagings
        self.n_replicas = 0

    def file_state(self, file, node, now):
        """('loaded' | 'loading' | 'absent', load end) of `file` in `node`'s memory at `now`."""
        status = self.memories[node].status(file, now) if file is not None else "absent"
        if status == "loading":
            st = self.stagings.find(node, file)
            return status, (st.est_end if st is not None else now)
        return status, None

    # ---- events ---------------------------------------------------------
    def start(self, job, node, now):
        """Hold `job`'s cores on `node` now; book its load or join one.

        Returns (case, Held, new Staging or None, planned start of computing)."""
        positions = np.flatnonzero(self.free[node])[:job.cores]
        if len(positions) < job.cores:
            raise RuntimeError(f"{job.id}: {self.platform.nodes[node].name} has "
                               f"{len(positions)} free cores, {job.cores} needed")
        self.free[node][positions] = False
        self.n_free[node] -= len(positions)
        memory = self.memories[node]
        absent = job.file is not None and memory.status(job.file, now) == "absent"
        slot = self.chart.reserve(node, job.size, now) if absent else None
        self.census.accessed(job.file)
        case, evicted = memory.start_job(job.file, job.size, now, load_end=slot[1] if slot else None)
        self.census.drop(evicted, node)
        self.census.add(job.file, node)
        name = self.platform.nodes[node].name
        staging, new_staging, window_start, planned = None, None, now, now
        if case == "miss":
            new_staging = self.stagings.begin(staging_job_id(job.id, name), node, job.file, job.size,
                                              slot[0], slot[1], job.id)
            staging, window_start, planned = new_staging.id, slot[0], slot[1]
        elif case == "wait":
            st = self.stagings.join(node, job.file, job.id)
            # A load booked for later (behind other transfers) opens the window as its own would.
            staging, window_start, planned = st.id, max(now, st.start), max(now, st.est_end)
        core_ids = self.platform.nodes[node].core_ids
        held = Held(job, node, positions, now, window_start + job.walltime, staging,
                    computing=case in ("hit", "none"), alloc=procset_of([core_ids[p] for p in positions.tolist()]))
        self.held[job.id] = held
        self.on_node[node][job.id] = held
        return case, held, new_staging, planned

    def replicate(self, file, size, node, now):
        """DLL: book a load of `file` into `node`'s memory that serves no job; returns its Staging."""
        slot = self.chart.reserve(node, size, now)
        case, evicted = self.memories[node].start_job(file, size, now, load_end=slot[1])
        self.census.drop(evicted, node)
        self.census.add(file, node)
        self.n_replicas += 1
        sid = f"{STAGE_WORKLOAD}!rep-{file}-{self.platform.nodes[node].name}-{self.n_replicas}"
        st = self.stagings.begin(sid, node, file, size, slot[0], slot[1], None)
        st.waiters.clear()
        self.replicas.add(sid)
        return st

    def staging_done(self, staging_id, now):
        """A load completed: returns the Held jobs that may now compute."""
        st, ready = self.loaded(staging_id)
        self.chart.released(st.node, st.est_end, now)
        memory = self.memories[st.node]
        memory.load_done(st.file, now)
        if staging_id in self.replicas:
            self.replicas.discard(staging_id)
            self.census.drop(memory.end_job(st.file, now), st.node)
        return ready

    def finish(self, job_id, now):
        """A job ended (completed or killed): free its cores and its file's use; its Held, or None."""
        held = self.release(job_id)
        if held is None:
            return None
        node = held.node
        self.free[node][held.positions] = True
        self.n_free[node] += len(held.positions)
        self.on_node[node].pop(job_id, None)
        if not held.files_left:
            self.files_left(held, now)
        return held

    def files_left(self, held, now):
        """The job's use of its file ends now (its cores are the caller's)."""
        self.census.drop(self.memories[held.node].end_job(held.job.file, now), held.node)
