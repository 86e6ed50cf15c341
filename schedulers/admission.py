"""What the file-aware families (planning, file-sharing) read from a submitted job, and which jobs they refuse.

A job runs on one node (its file is loaded into that node's memory, contract
§2), so a job wider than every node, or whose input file exceeds every node's
memory, could never run: it is rejected at submission, named in one line,
and the engine records it as REJECTED. A job without ``input_file`` /
``input_size`` is scheduled with no loads (said once per run). On a platform
without node memories (a plain Batsim platform, ``PlatformView.memoryless``)
only such jobs can run: a job with a file stops the run (``NoMemory``).
"""

import math
from dataclasses import dataclass
from typing import Optional

from batloc.locality.platform_view import NO_MEMORY
from batloc.locality.workflow import WorkflowError, job_files, job_outputs
from batloc.schedulers.boundary import finite_number, warn


class Rejected(ValueError):
    """A job no node can run: the message names it and why."""


class NoMemory(ValueError):
    """A job with an input file on a platform without node memories: the run cannot go on as asked."""


@dataclass(frozen=True)
class Submission:
    cores: int
    walltime: float            # +inf when the job has none
    file: Optional[str]
    size: float                # bytes; 0 without a file
    # A job reading several files (a workflow's task, contract §2b): all of them,
    # ``file`` being the largest; () for a job of one file or none.
    files: tuple = ()
    outputs: tuple = ()        # (file, size) it writes, in its node's memory at its end


class Admission:
    def __init__(self, platform, ignore_files=None, no_walltime_note=None):
        self.platform = platform
        # a file-unaware baseline: every job as if it had no file (None: the family has no such option)
        self.ignore_files = ignore_files
        self.no_walltime_note = no_walltime_note
        self.warned = set()

    def admit(self, job, bs):
        """A pybatsim Job's Submission, or None once it is rejected (named on stderr, REJECT_JOB sent)."""
        try:
            return self.read(job)
        except Rejected as exc:
            warn(str(exc))
            bs.reject_jobs([job])
            return None

    def read(self, job) -> Submission:
        """The job's cores, walltime and file, or Rejected."""
        cores = int(job.requested_resources)
        if cores < 1 or cores > self.platform.max_cores:
            widest = max(self.platform.nodes, key=lambda n: len(n.core_ids))
            raise Rejected(f"job {job.id} requests {cores} cores but a job must fit on one node "
                           f"(largest node {widest.name} has {len(widest.core_ids)} cores): rejected")
        walltime = float(job.requested_time) if job.requested_time is not None else -1.0
        if walltime <= 0:
            walltime = math.inf
            self._once("walltime", self.no_walltime_note and f"job {job.id} has no walltime: {self.no_walltime_note}")
        data = job.json_dict or {}
        if self.ignore_files:
            return Submission(cores, walltime, None, 0.0)
        if "inputs" in data or "outputs" in data:
            return self._workflow_task(job, data, cores, walltime)
        file, size = data.get("input_file"), data.get("input_size")
        if file is None or size is None:
            self._once("file", f"job {job.id} has no input_file/input_size fields (contract §2): jobs without "
                               "them are scheduled with no loads")
            return Submission(cores, walltime, None, 0.0)
        if self.platform.memoryless:
            raise NoMemory(f"job {job.id} has an input file ({file}), but {NO_MEMORY}" + (
                "; or run the scheduler with the option ignore_files" if self.ignore_files is not None else ""))
        if not finite_number(size) or size < 0:
            raise Rejected(f"job {job.id} rejected: input_size must be a finite number of bytes >= 0, got {size!r}")
        misfit = self.platform.misfit(job.id, file, size)
        if misfit is not None:
            raise Rejected(misfit)
        return Submission(cores, walltime, str(file), float(size))

    def _workflow_task(self, job, data, cores, walltime):
        """A job declaring the files it reads and writes (contract §2b)."""
        try:
            files = job_files(data, f"job {job.id}")
            outputs = tuple(job_outputs(data, f"job {job.id}"))
        except WorkflowError as exc:
            raise Rejected(f"{exc}: rejected") from None
        total = sum(s for _, s in files)
        misfit = self.platform.misfit(job.id, "+".join(f for f, _ in files), total)
        if misfit is not None:
            raise Rejected(misfit)
        if not files:
            return Submission(cores, walltime, None, 0.0, (), outputs)
        file, size = max(files, key=lambda fs: fs[1])      # the first of the largest
        return Submission(cores, walltime, file, size, tuple(files) if len(files) > 1 else (), outputs)

    def _once(self, kind, message):
        if message and kind not in self.warned:
            self.warned.add(kind)
            warn(message)
