"""Data-staging jobs (contract §3, §6): loading a file from Lustre into a node's memory.

A staging is a dynamic job of workload ``batloc-stage`` with id
``batloc-stage!stage-<J>-<node>`` (J = the served job's full id with ``!`` → ``-``)
and its own ``data_staging`` profile named like the job. Jobs that need the same
file on the same node while it loads wait for that one staging. Pure Python.

Workflows (contract §2b) add two kinds: a load of a job's files from another
node's memory, where a producer's output waits for its write-back
(``stage-<J>-<node>-from-<source node>``), and the write-back of an output
from its producer's memory to Lustre (``writeback-<J>-<node>``). One staging
may load several files of one job from one source: they are available
together, at its end.
"""

from dataclasses import dataclass, field
from typing import Optional

STAGE_WORKLOAD = "batloc-stage"


def staging_job_id(job_id: str, node_name: str, source_name: Optional[str] = None) -> str:
    base = f"{STAGE_WORKLOAD}!stage-{job_id.replace('!', '-')}-{node_name}"
    return base if source_name is None else f"{base}-from-{source_name}"


def writeback_job_id(job_id: str, node_name: str) -> str:
    return f"{STAGE_WORKLOAD}!writeback-{job_id.replace('!', '-')}-{node_name}"


def is_writeback(staging_id: str) -> bool:
    return staging_id.startswith(f"{STAGE_WORKLOAD}!writeback-")


def staging_profile(size: float, source: str = "pfs", target: str = "mem") -> dict:
    return {"type": "data_staging", "nb_bytes": size, "from": source, "to": target}


def storage_mapping(lustre_id: int, mem_id: int) -> dict:
    return {"pfs": lustre_id, "mem": mem_id}


def is_staging_job(job_id: str) -> bool:
    return job_id.startswith(STAGE_WORKLOAD + "!")


@dataclass
class Staging:
    id: str
    node: int
    file: str
    size: float
    start: float
    est_end: float
    waiters: list = field(default_factory=list)   # job ids to start when the load completes
    files: tuple = ()              # every file it loads (file first); () means (file,)
    source: Optional[int] = None   # the node whose memory it reads; None: Lustre
    writeback: bool = False        # node's memory -> Lustre (an output's write-back), not a load

    def __post_init__(self):
        if not self.files:
            self.files = (self.file,)

    def endpoints(self, lustre_id, mem_ids):
        """(profile, its storage_mapping): what Batsim moves, from which storage to which."""
        if self.writeback:
            return staging_profile(self.size, "mem", "pfs"), {"mem": mem_ids[self.node], "pfs": lustre_id}
        if self.source is not None:
            return staging_profile(self.size, "src", "mem"), {"src": mem_ids[self.source], "mem": mem_ids[self.node]}
        return staging_profile(self.size), storage_mapping(lustre_id, mem_ids[self.node])


class StagingBook:
    """Stagings in flight, by id and by (node, file)."""

    def __init__(self):
        self.by_id = {}
        self.by_key = {}

    def __len__(self):
        return len(self.by_id)

    def find(self, node, file):
        return self.by_key.get((node, file))

    def begin(self, staging_id, node, file, size, now, est_end, job_id, files=(), source=None):
        """A load of `files` (default: `file`; `size` bytes in all) into node's memory, for `job_id`."""
        st = Staging(staging_id, node, file, float(size), now, est_end, [job_id], tuple(files), source)
        self.by_id[staging_id] = st
        for f in st.files:
            self.by_key[(node, f)] = st
        return st

    def join(self, node, file, job_id):
        st = self.by_key[(node, file)]
        st.waiters.append(job_id)
        return st

    def leave(self, staging_id, job_id):
        """`job_id` no longer waits for staging `staging_id` (it ended before the load did)."""
        st = self.by_id.get(staging_id)
        if st is not None and job_id in st.waiters:
            st.waiters.remove(job_id)

    def complete(self, staging_id):
        st = self.by_id.pop(staging_id)
        for f in st.files:
            if self.by_key.get((st.node, f)) is st:
                del self.by_key[(st.node, f)]
        return st
