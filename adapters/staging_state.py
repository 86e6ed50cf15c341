"""What the staging proxy knows: each node's memory, the stagings in flight, the held jobs.

Pure Python (no ZeroMQ), so it can be replayed and tested on its own. The
memory model and the staging bookkeeping are the shared locality model
(``batloc.locality.cache`` / ``staging``); this module only decides,
for one ``EXECUTE_JOB`` chosen by a scheduler that knows nothing about files,
which nodes must load the job's file first (contract §3), and returns the
events that make the engine do it.

A job's "start" here is the moment its scheduler executed it: from then on
that scheduler considers its cores busy, so the job holds them while its file
loads — the same reservation semantics as batloc's own schedulers. A file
that does not fit yet in a node's memory next to the files in use waits
until it does, first come first served per node (``admit``): node memories
never hold more than their capacity, whatever the wrapped scheduler decides.

Workflows (contract §2b): a job may read several files (its ``input_file``
and ``inputs``): on each node its misses are loaded by one staging of their
summed size, it waits for those and for the loads in flight of its other
files, and it needs room for its missing files together. A job that
completes leaves its ``outputs`` in the memory of every node it ran on
(written back at once: the proxy has no staged write-back).
"""

import math
from dataclasses import dataclass, field

from batloc.engine.errors import EngineError
from batloc.engine.protocol import parse_intervals
from batloc.locality.cache import NodeCache
from batloc.locality.platform_view import NO_MEMORY
from batloc.locality.staging import (STAGE_WORKLOAD, StagingBook, staging_job_id,
                                            staging_profile, storage_mapping)
from batloc.locality.workflow import WorkflowError, job_files, job_outputs

from .errors import ProxyError

POLICY = "proxy"
# Decision-log rows of a job spread over several nodes: the analysis keeps a
# job's last row, so the row that explains its delay best (a load) goes last.
_ROW_ORDER = {"none": 0, "hit": 1, "wait": 2, "miss": 3}


def _row_order(case):
    """A row's rank among its job's rows (``_ROW_ORDER``); a row of several files ranks by its costliest."""
    return max(_ROW_ORDER[c] for c in case.split(";"))


def _ids_text(ids):
    return " ".join(str(i) for i in sorted(ids))


@dataclass
class HeldJob:
    """An EXECUTE_JOB kept back until every staging it waits for has completed."""
    job_id: str
    event: dict
    nodes: list                       # node indexes of its allocation
    pending: set = field(default_factory=set)   # staging ids not yet completed


@dataclass
class Waiting:
    """An EXECUTE_JOB whose file does not fit yet in the memory of one of its nodes."""
    job_id: str
    event: dict
    nodes: list                       # node indexes of its allocation
    since: float                      # when its scheduler executed it (its cores are held from then)
    full: set = field(default_factory=set)   # nodes it waited on for room


@dataclass
class JobInfo:
    files: tuple = ()      # (file, size) it reads, in order; () for a job without file
    outputs: tuple = ()    # (file, size) it writes

    @property
    def file(self):
        """The decision log's input_file: the file, or the files ';'-joined (contract §2b); None without."""
        return ";".join(f for f, _ in self.files) if self.files else None

    @property
    def size(self):
        return sum(s for _, s in self.files)

    def missing(self, cache, now):
        """(file, size) of its files absent from `cache` (a NodeCache) at `now`."""
        return [(f, s) for f, s in self.files if cache.status(f, now) == "absent"]


class StagingState:
    def __init__(self, platform, model="paper", decision_log=None, nb_resources=None):
        self.platform = platform
        self.nb_resources = nb_resources   # ids are below it: bounds what an allocation may name
        self.caches = [NodeCache(n.memory_bytes, model) for n in platform.nodes]
        self.stagings = StagingBook()
        self.held = {}          # job id -> HeldJob
        self.waiting = []       # Waiting, in decision order
        self.info = {}          # job id -> JobInfo (submitted, not ended)
        self.running_nodes = {}  # job id -> node indexes whose memory counts it as a user
        self.log = decision_log
        self.nb_stagings = 0

    # ---- what the scheduler side sees --------------------------------------
    def submitted(self, job_id, job):
        """Record a job's files; returns a reason to reject it if no node's memory can hold them."""
        file, size = job.get("input_file"), job.get("input_size")
        if "inputs" in job or "outputs" in job:       # a workflow's task (contract §2b)
            try:
                files, outputs = tuple(job_files(job, f"job {job_id}")), tuple(job_outputs(job, f"job {job_id}"))
            except WorkflowError as exc:
                raise ProxyError(str(exc)) from None
        elif file is None or size is None:
            files, outputs = (), ()
        else:
            if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size < 0:
                raise ProxyError(f"job {job_id}: input_size must be a finite number of bytes >= 0, got {size!r}")
            files, outputs = ((str(file), float(size)),), ()
        info = JobInfo(files, outputs)
        if files and self.platform.memoryless:   # a plain Batsim platform: jobs without files only
            raise ProxyError(f"job {job_id} has an input file ({info.file}), but {NO_MEMORY}")
        misfit = self.platform.misfit(job_id, "+".join(f for f, _ in files), info.size) if files else None
        if misfit is None:
            self.info[job_id] = info
        return misfit

    def oversized(self, event):
        """A reason to reject the job of this EXECUTE_JOB if one of its nodes cannot hold its file, else None."""
        data = event.get("data") or {}
        info = self.info.get(data.get("job_id")) if isinstance(data.get("job_id"), str) else None
        if info is None or not info.files:
            return None
        for k in self._nodes_of(data.get("alloc")) or ():
            node = self.platform.nodes[k]
            if info.size > node.memory_bytes:
                return (f"job {data['job_id']} rejected: the scheduler placed it on node {node.name}, whose memory "
                        f"({node.memory_bytes:.6g} bytes) cannot hold its file {info.file} ({info.size:.6g} bytes)")
        return None

    def _nodes_of(self, alloc):
        """Node indexes holding cores of `alloc`, or None if it is not a valid allocation (the engine says why)."""
        try:
            ids = parse_intervals(alloc, self.nb_resources)
        except EngineError:
            return None
        node_of = self.platform.node_of_core
        return sorted({node_of[r] for r in ids if r in node_of})

    def busy(self):
        """Something waits for room or for a load, or is loading: the proxy still needs to register jobs."""
        return bool(self.held) or bool(self.waiting) or len(self.stagings) > 0

    def execute(self, event, now):
        """The wrapped scheduler executes a job: returns the events to send the engine now.

        The job holds its cores from now on (its scheduler thinks it runs). It claims its
        nodes' memory when its file fits there next to the files in use on every node of
        its allocation, and not before a job decided earlier that waits for room on one of
        them (``admit``); on a hit (or a job without file) it then goes to the engine as
        decided, on a miss its stagings go instead and it is held until they complete
        (``staging_done``).
        """
        data = event.get("data") or {}
        job_id = data.get("job_id")
        info = self.info.get(job_id) if isinstance(job_id, str) else None
        nodes = self._nodes_of(data.get("alloc"))
        if info is None or nodes is None:
            # not a job we saw submitted (e.g. its own dynamic job), or a malformed decision the engine reports
            return [event]
        self.waiting.append(Waiting(job_id, event, nodes, now))
        return self.admit(now)

    def admit(self, now):
        """Let the jobs waiting for room claim their nodes, in decision order; returns their events."""
        out, blocked, still = [], set(), []
        for w in self.waiting:
            info = self.info[w.job_id]
            missing = {k: info.missing(self.caches[k], now) for k in w.nodes}
            short = [k for k in w.nodes if missing[k]]
            # its hits count too when no one uses them yet (a workflow's output left by its producer): its
            # start holds them, and a node holding more than its memory is an impossible schedule
            lacking = [k for k in w.nodes if (k in short and k in blocked)
                       or (info.files and not self.caches[k].room_for_files(info.files, now))]
            if lacking:
                # first come, first served on each node: a later job must not take the room this one waits for
                blocked.update(short, lacking)
                w.full.update(lacking)
                still.append(w)
                continue
            out += self._claim(w, now)
        self.waiting = still
        return out

    def _claim(self, w, now):
        info = self.info[w.job_id]
        data = w.event.get("data") or {}
        job_id = w.job_id
        alloc = parse_intervals(data["alloc"], self.nb_resources)
        node_of = self.platform.node_of_core
        out, pending, rows = [], set(), []
        planned = now
        for k in w.nodes:
            node = self.platform.nodes[k]
            missed = info.missing(self.caches[k], now)
            total = sum(s for _, s in missed)
            est = now + total / node.bandwidth
            cases, _evicted = self.caches[k].start_files(info.files, now, load_end=est)
            stagings = [None] * len(cases)
            if missed:
                sid = staging_job_id(job_id, node.name)
                self.stagings.begin(sid, k, missed[0][0], total, now, est, job_id, tuple(f for f, _ in missed))
                out += self._stage_events(sid, node, total, now)
                self.nb_stagings += 1
                pending.add(sid)
                planned = max(planned, est)
            for i, ((f, _), case) in enumerate(zip(info.files, cases)):
                if case == "miss":
                    stagings[i] = sid
                elif case == "wait":
                    st = self.stagings.find(k, f)
                    if job_id not in st.waiters:
                        st.waiters.append(job_id)
                    stagings[i] = st.id
                    pending.add(st.id)
                    planned = max(planned, st.est_end)
            cores = sum(1 for r in alloc if node_of.get(r) == k)
            case = ";".join(cases) if cases else "none"
            staging = ";".join(s or "" for s in stagings) if len(stagings) > 1 else stagings[0] if stagings else None
            rows.append((case, node.name, cores, staging))
        self.running_nodes[job_id] = w.nodes
        if self.log is not None:
            self._log(w, now, planned, rows, info)
        if pending:
            self.held[job_id] = HeldJob(job_id, w.event, w.nodes, pending)
        else:
            out.append(w.event)
        return out

    def _log(self, w, now, planned, rows, info):
        """Decision rows at the claim; before them, a job that waited for room has a ``full`` row per
        node it waited on, at the instant its scheduler decided (its cores are held from then:
        the analysis counts that wait as file wait, the validator replays the claim rows only)."""
        alloc = w.event["data"].get("alloc", "")
        cores = {name: c for _, name, c, _ in rows}
        if w.since < now:
            for k in sorted(w.full):
                name = self.platform.nodes[k].name
                self.log.write(w.since, w.job_id, POLICY, name, alloc, cores.get(name, 0), planned,
                               info.file, info.size, "full", None, None)
        if not rows:
            rows.append(("none", "", 0, None))
        for case, name, n_cores, staging in sorted(rows, key=lambda r: _row_order(r[0])):
            self.log.write(now, w.job_id, POLICY, name, alloc, n_cores, planned, info.file, info.size, case,
                           staging, None)

    def _stage_events(self, staging_id, node, size, now):
        # One profile per staging job, named like it: without --enable-profile-reuse
        # the engine deletes a dynamic profile once its first job ends (contract §3).
        # The job's subtime is required: Batsim 4.2.1 aborts on a registered job without one (jobs.cpp).
        profile = staging_id.split("!", 1)[1]
        lustre = self.platform.lustre_id
        return [
            {"type": "REGISTER_PROFILE", "data": {"workload_name": STAGE_WORKLOAD, "profile_name": profile,
                                                  "profile": staging_profile(size)}},
            {"type": "REGISTER_JOB", "data": {"job_id": staging_id,
                                              "job": {"id": staging_id, "subtime": now, "res": 2,
                                                      "walltime": -1, "profile": profile}}},
            {"type": "EXECUTE_JOB", "data": {"job_id": staging_id, "alloc": _ids_text([lustre, node.mem_id]),
                                             "storage_mapping": storage_mapping(lustre, node.mem_id)}},
        ]

    def staging_done(self, staging_id, now):
        """A staging completed: returns the held EXECUTE_JOBs that may go now, in decision order."""
        if staging_id not in self.stagings.by_id:
            return []
        st = self.stagings.complete(staging_id)
        for f in st.files:
            self.caches[st.node].load_done(f, now)
        ready = []
        for job_id in st.waiters:
            held = self.held.get(job_id)
            if held is None:
                continue            # killed while waiting
            held.pending.discard(staging_id)
            if not held.pending:
                del self.held[job_id]
                ready.append(held.event)
        return ready

    def ended(self, job_id, now, succeeded=False):
        """A job completed, was killed or rejected: it no longer uses its files; if it completed,
        its outputs are in the memory of the nodes it ran on."""
        info = self.info.pop(job_id, None)
        nodes = self.running_nodes.pop(job_id, ())
        if info is None:
            return
        for k in nodes:
            self.caches[k].end_files([f for f, _ in info.files], now)
            if succeeded:
                for f, size in info.outputs:
                    self.caches[k].add_output(f, size, now)
        self.waiting = [w for w in self.waiting if w.job_id != job_id]
        held = self.held.pop(job_id, None)
        if held is not None:
            for sid in held.pending:
                st = self.stagings.by_id.get(sid)
                if st is not None and job_id in st.waiters:
                    st.waiters.remove(job_id)

    def given_up(self, job_id, now):
        """A job ends while waiting for room (killed at its window's end): its wait is logged (``full`` rows,
        from when its scheduler decided; it never claimed memory), then it ends."""
        w = next((w for w in self.waiting if w.job_id == job_id), None)
        if w is not None and self.log is not None:
            info = self.info[job_id]
            alloc = w.event["data"].get("alloc", "")
            for k in sorted(w.full) or w.nodes[:1]:
                self.log.write(w.since, job_id, POLICY, self.platform.nodes[k].name, alloc, 0, now,
                               info.file, info.size, "full", None, None)
        self.ended(job_id, now)

    def held_event(self, job_id):
        """The EXECUTE_JOB (engine ids) of a job still waiting for room or for its file, else None."""
        if job_id in self.held:
            return self.held[job_id].event
        return next((w.event for w in self.waiting if w.job_id == job_id), None)

    def is_held(self, job_id):
        """Executed by its scheduler but not (yet) by the engine: waiting for room or for its file."""
        return job_id in self.held or any(w.job_id == job_id for w in self.waiting)
