"""Data-staging jobs (contract §3, §6): loading a file from Lustre into a node's memory.

A staging is a dynamic job of workload ``batloc-stage`` with id
``batloc-stage!stage-<J>-<node>`` (J = the served job's full id with ``!`` → ``-``)
and its own ``data_staging`` profile named like the job. Jobs that need the same
file on the same node while it loads wait for that one staging. Pure Python.
"""

from dataclasses import dataclass, field

STAGE_WORKLOAD = "batloc-stage"


def staging_job_id(job_id: str, node_name: str) -> str:
    return f"{STAGE_WORKLOAD}!stage-{job_id.replace('!', '-')}-{node_name}"


def staging_profile(size: float) -> dict:
    return {"type": "data_staging", "nb_bytes": size, "from": "pfs", "to": "mem"}


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


class StagingBook:
    """Stagings in flight, by id and by (node, file)."""

    def __init__(self):
        self.by_id = {}
        self.by_key = {}

    def __len__(self):
        return len(self.by_id)

    def find(self, node, file):
        return self.by_key.get((node, file))

    def begin(self, staging_id, node, file, size, now, est_end, job_id):
        st = Staging(staging_id, node, file, float(size), now, est_end, [job_id])
        self.by_id[staging_id] = st
        self.by_key[(node, file)] = st
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
        if self.by_key.get((st.node, st.file)) is st:
            del self.by_key[(st.node, st.file)]
        return st
