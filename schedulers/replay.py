"""The replay floor: a finished run's start decisions played again, with no planning.

    pybatsim schedulers/replay.py -o '{"replay": "<the finished run's prefix>", ...its own options}'

What a planning scheduler costs beyond its planning (the engine, the protocol,
pybatsim's dispatch, the memory model, stagings, window ends, the outputs) is
measured by running this in its place: it is the planning family's scheduler
(``PlanningScheduler``) with the pass replaced by a lookup in the finished
run's ``<prefix>_decisions.csv`` (and ``_predictions.csv``, for the
predictions file), and no flat state mirrored for the compiled pass. Given the
finished run's options (cache model, walltime rule...) it sends the same
messages, so the engine writes the same outputs, byte for byte
(``tests/schedulers/test_replay.py``); ``benchmarks/saturated_day.py --floor``
runs it after each variant.

A pass at instant t commits the decisions logged at t in their logged order,
as long as the job is queued and its cores are free; the first that is not
(it was decided by a later pass of the same instant, after a kill freed its
cores) and every later one wait for the next pass.
"""

import math
import os

import numpy as np

from batloc.outputs import read_rows
from batloc.schedulers.boundary import PREFIX, OptionsError
from batloc.schedulers.planning.planner import Decision
from batloc.schedulers.planning.scheduler import PlanningScheduler
from batloc.schedulers.planning.state import ClusterState


def _float(text):
    return float(text) if text != "" else math.nan


class ReplayPlanner:
    """``plan(now, queue)`` -> the Decisions the finished run took at ``now``."""

    stats_jobs_scanned = stats_nodes_scored = stats_jobs_walked = stats_jobs_dropped = stats_jobs_moved = 0

    def __init__(self, prefix, state):
        self.state = state
        nodes = {nd.name: nd for nd in state.platform.nodes}
        self.by_time = {}
        self.label = None
        path = f"{prefix}_decisions.csv"
        try:
            _, rows = read_rows(path)
            _, preds = read_rows(f"{prefix}_predictions.csv")
        except OSError as exc:
            raise OptionsError(f"replay: cannot read {exc.filename}: {exc.strerror}") from None
        for r in rows:
            nd = nodes.get(r["node"])
            if nd is None:
                raise OptionsError(f"replay: {path}: job {r['job_id']}: node {r['node']!r} is not on this platform")
            self.label = self.label or r["policy"]
            where = {core: p for p, core in enumerate(nd.core_ids)}
            positions = [where[c] for c in _cores(r["alloc"])]
            score = float(r["score"]) if r["score"] else None
            # the file time it planned: on a miss its staging's estimated end, the window's avail
            t_file = float(r["planned_start"])
            self.by_time.setdefault(r["time"], []).append((r["job_id"], nd.index, positions, score, t_file))
        self.queued = {}          # job id -> its QueuedJob, while it waits (``Replay.onJobSubmission``)
        self.predicted = {p["job_id"]: (_float(p["predicted_start"]), _float(p["predicted_at"]),
                                        _float(p["last_predicted_start"])) for p in preds}

    def plan(self, now, queue):
        key = f"{now:.6f}"
        due = self.by_time.get(key)
        if not due:
            return []
        out, taken = [], set()
        flat = self.state.flat
        for jid, node, positions, score, t_file in due:
            job = self.queued.get(jid)
            cores = np.array(positions, dtype=np.int64)
            if job is None or flat.core_held[node, cores].any() or any((node, p) in taken for p in positions):
                break
            i = queue.jobs.index(job)           # by identity first: C speed, no per-job Python loop
            taken.update((node, p) for p in positions)
            del self.queued[jid]
            out.append(Decision(job, node, cores, now, t_file, "", None, score, i,
                                self.predicted.get(jid, (None, None, None))))
        rest = due[len(out):]
        if rest:
            self.by_time[key] = rest
        else:
            del self.by_time[key]
        return out


def _cores(alloc):
    """The resource ids of a ProcSet's text ("3-5 9")."""
    for part in alloc.split():
        lo, _, hi = part.partition("-")
        yield from range(int(lo), int(hi or lo) + 1)


class _ReplayState(ClusterState):
    """The cluster state without the flat copy the compiled pass reads (nothing plans here)."""

    def _mirror(self, node):
        pass


class Replay(PlanningScheduler):
    policy_name = "FCFS"        # not used: the label is the finished run's

    @classmethod
    def parse_options(cls, raw):
        prefix = raw.pop("replay", None)
        if not isinstance(prefix, str) or not prefix:
            raise OptionsError("replay: option 'replay' must name the finished run's prefix (a string)")
        for name in ("decisions", "predictions"):
            if not os.path.isfile(f"{prefix}_{name}.csv"):
                raise OptionsError(f"replay: cannot read {prefix}_{name}.csv: no such file")
        return super().parse_options(raw)

    def __init__(self, options=None):
        super().__init__(options)
        self.replay_of = (options or {}).get("replay")

    def onJobSubmission(self, job):
        before = len(self.queue)
        super().onJobSubmission(job)
        if len(self.queue) > before and getattr(self, "planner", None) is not None:
            queued = self.queue.jobs[-1]
            self.planner.queued[queued.id] = queued

    def make_state(self):
        return _ReplayState(self.platform, self.opts)

    def make_planner(self):
        try:
            planner = ReplayPlanner(self.replay_of, self.state)
        except OptionsError as exc:
            self.stop_deciding(f"{PREFIX}: {exc}")
            return None
        self.label = planner.label or self.label
        return planner
