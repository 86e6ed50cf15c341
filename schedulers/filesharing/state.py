"""The actual state of the cluster as the file-sharing policies know it.

Cores held by started jobs (lowest free ids of a node), each node's memory
(``value`` memory of Eq. 7 or the shared locality model's ``NodeCache``), the
census of which nodes hold which file, the transfer Gantt chart, the stagings
in flight and the replications. Only real events change it: a start
committed, a replication booked, a job or staging completed. The protocol
around it is ``base.py``.

Workflows (contract §2b): a job reading several files is placed by the policy
as a job of its largest file (its ``file``), as the planning pass does; its
start is exact per file: each file a hit, a wait for a load in flight or a
miss, its misses one staging of their summed size in one slot of the transfer
chart. A completed job's outputs enter its node's memory (written back at
once: the family has no staged write-back).
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
    # a job reading several files: all of them (``file`` is the largest, the one policies see); its outputs
    files: tuple = ()
    outputs: tuple = ()

    @property
    def reads(self):
        """(file, size) of every file it reads."""
        if self.files:
            return self.files
        return ((self.file, self.size),) if self.file is not None else ()


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

    def lacks_room(self, job, node, now):
        """Whether `job`'s start on node now must wait for room in its memory: some of its files are absent
        and they do not fit next to the files in use (running jobs', loads in flight, replicas loading;
        with its resident files no job uses, which its start holds too), though they would once those
        leave. A job that could never fit (its files alone above the capacity, or nothing else in use)
        does not wait: its load overflows, recorded by the memory, as before."""
        memory = self.memories[node]
        reads = job.reads
        if not any(memory.status(f, now) == "absent" for f, _ in reads) or memory.room_for_files(reads, now):
            return False
        return (sum(dict(reads).values()) <= memory.capacity
                and any(r.held for r in memory.files.values()))

    # ---- events ---------------------------------------------------------
    def start(self, job, node, now):
        """Hold `job`'s cores on `node` now; book its load or join one.

        Returns (case, Held, new Staging or None, planned start of computing, the staging it loads or
        waits for); for a job of several files the case and the staging are ';'-joined lists, one
        entry per file (the decision log's, contract §2b)."""
        positions = self._take_cores(job, node)
        if job.files:
            return self._start_files(job, node, now, positions)
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
        held = self._hold(job, node, positions, now, window_start, staging, case in ("hit", "none"))
        return case, held, new_staging, planned, staging

    def _take_cores(self, job, node):
        positions = np.flatnonzero(self.free[node])[:job.cores]
        if len(positions) < job.cores:
            raise RuntimeError(f"{job.id}: {self.platform.nodes[node].name} has "
                               f"{len(positions)} free cores, {job.cores} needed")
        self.free[node][positions] = False
        self.n_free[node] -= len(positions)
        return positions

    def _hold(self, job, node, positions, now, window_start, staging, computing, waits=None):
        core_ids = self.platform.nodes[node].core_ids
        held = Held(job, node, positions, now, window_start + job.walltime, staging, computing=computing,
                    alloc=procset_of([core_ids[p] for p in positions.tolist()]), waits=waits)
        self.held[job.id] = held
        self.on_node[node][job.id] = held
        return held

    def _start_files(self, job, node, now, positions):
        """``start`` for a job of several files: its misses loaded by one staging of their summed size,
        booked in the transfer chart; it waits for that and for the loads in flight of its other files."""
        memory = self.memories[node]
        absent = [f for f, _ in job.files if memory.status(f, now) == "absent"]
        total = sum(s for f, s in job.files if f in absent)
        slot = self.chart.reserve(node, total, now) if absent else None
        for f, _ in job.files:
            self.census.accessed(f)
        cases, evicted = memory.start_files(job.files, now, load_end=slot[1] if slot else None)
        self.census.drop(evicted, node)
        for f, _ in job.files:
            self.census.add(f, node)
        waits, stagings, window_start, planned, new_staging = set(), [], now, now, None
        if absent:
            sid = staging_job_id(job.id, self.platform.nodes[node].name)
            missed = tuple(f for (f, _), c in zip(job.files, cases) if c == "miss")
            new_staging = self.stagings.begin(sid, node, missed[0], total, slot[0], slot[1], job.id, missed)
            waits.add(sid)
            window_start, planned = slot[0], slot[1]
        for (f, _), case in zip(job.files, cases):
            if case == "miss":
                stagings.append(new_staging.id)
            elif case == "wait":
                st = self.stagings.find(node, f)
                if job.id not in st.waiters:
                    st.waiters.append(job.id)
                waits.add(st.id)
                stagings.append(st.id)
                window_start, planned = max(window_start, st.start), max(planned, st.est_end)
            else:
                stagings.append("")
        first = next((sid for sid in stagings if sid), None)
        held = self._hold(job, node, positions, now, window_start, first, not waits, waits)
        return ";".join(cases), held, new_staging, planned, ";".join(stagings)

    def place_outputs(self, held, now):
        """`held`'s job completed: its outputs are in its node's memory (and on Lustre)."""
        memory = self.memories[held.node]
        for f, size in held.job.outputs:
            self.census.drop(memory.add_output(f, size, now), held.node)
            if memory.status(f) != "absent":
                self.census.add(f, held.node)

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
        """A load completed: returns its node and the Held jobs that may now compute."""
        st, ready = self.loaded(staging_id)
        self.chart.released(st.node, st.est_end, now)
        memory = self.memories[st.node]
        for f in st.files:
            memory.load_done(f, now)
        if staging_id in self.replicas:
            self.replicas.discard(staging_id)
            self.census.drop(memory.end_job(st.file, now), st.node)
        return st.node, ready

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
        self.census.drop(self.memories[held.node].end_files([f for f, _ in held.job.reads], now), held.node)
