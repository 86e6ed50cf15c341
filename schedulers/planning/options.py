"""Scheduler options, as passed with pybatsim's ``-o '{...}'`` JSON.

Defaults are the paper's: no backfilling, W = 500, LEM switches to LEA when
every node runs a job (saturation share 1.0), the paper's memory model, and
event-driven scheduling (period 0), the whole queue planned at every pass
(queue depth 0), input files taken into account.

``profile: "authors"`` sets, as defaults the user's own options override, the
rules by which the authors' published simulator departs from the paper's text
(docs/authors-simulator.md, rules R1-R16; docs/reproduction.md says what each
changes): its 30 s scheduling grid, no persistence of files beyond the instant
their last user ends, waits for an in-flight load counted from now, and its
score schedulers' pass ending at the first job that needs more cores than are
free.
"""

from dataclasses import dataclass
from typing import Optional

from batloc.locality.cache import MODELS
from batloc.schedulers.boundary import FileOutputs, OptionsError, finite_number


PROFILES = {
    "paper": {},
    "authors": {"scheduling_period": 30.0, "cache": "strict", "inflight_overhead": "from_now",
                "pass_stop": "authors"},
}
INFLIGHT = ("to_load_end", "from_now")
PASS_STOPS = ("never", "job_exceeds_free_cores", "authors")


@dataclass(frozen=True)
class SchedulerOptions(FileOutputs):
    backfilling: bool = False
    W: float = 500.0
    saturation: float = 1.0
    cache: str = "paper"
    scheduling_period: float = 0.0
    # Plan only the first N queued jobs per pass (0 = all, the paper). Like
    # Slurm's default_queue_depth: bounds a pass's cost on a long queue, but
    # jobs further back wait even if they could start now.
    queue_depth: int = 0
    # Schedule as if no job had an input file: a file-unaware baseline, e.g.
    # to run under the staging proxy (adapters/), which then pays the loads.
    ignore_files: bool = False
    # A named set of defaults (PROFILES); the other options override it.
    profile: str = "paper"
    # A job waiting for a load in flight: overhead up to the load's end from
    # t_k (the paper), or from now (the authors' simulator, R10).
    inflight_overhead: str = "to_load_end"
    # Where a pass without backfilling stops (R14): "never" (every queued job
    # is planned), "job_exceeds_free_cores", or "authors" (that rule for the
    # score policies, "never" for FCFS, whose own rule - stop when no core is
    # free - starts the same jobs as "never").
    pass_stop: str = "never"
    # Plan every queued job at every pass, so that each has a predicted start
    # from its submission on (<prefix>_predictions.csv). Off, a pass stops
    # once no later job could start now: jobs further back get their first
    # prediction when a pass first reaches them. Decisions are the same.
    predictions: bool = False
    bandwidth: Optional[float] = None
    decisions: Optional[str] = None
    export_prefix: Optional[str] = None
    # Path of a JSON file receiving timing statistics at the end (benchmarks).
    stats: Optional[str] = None

    def pass_stop_for(self, policy_name: str) -> str:
        if self.pass_stop != "authors":
            return self.pass_stop
        return "never" if self.backfilling or policy_name == "FCFS" else "job_exceeds_free_cores"

    @classmethod
    def from_dict(cls, raw: Optional[dict]) -> "SchedulerOptions":
        raw = dict(raw or {})
        profile = raw.get("profile", "paper")
        if not isinstance(profile, str) or profile not in PROFILES:
            raise OptionsError(f"option 'profile' must be one of {', '.join(PROFILES)}, got {profile!r}")
        raw = {**PROFILES[profile], **raw}
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise OptionsError(
                f"unknown scheduler option(s) {', '.join(map(repr, unknown))}; "
                f"known options: {', '.join(sorted(known))}")
        opts = cls(**raw)
        opts._check()
        return opts

    def _check(self):
        for name in ("backfilling", "ignore_files", "predictions"):
            if not isinstance(getattr(self, name), bool):
                raise OptionsError(f"option {name!r} must be true or false, got {getattr(self, name)!r}")
        if not finite_number(self.queue_depth, integer=True) or self.queue_depth < 0:
            raise OptionsError(f"option 'queue_depth' must be an integer >= 0 (0 = the whole queue), "
                               f"got {self.queue_depth!r}")
        for name, allowed in (("inflight_overhead", INFLIGHT), ("pass_stop", PASS_STOPS)):
            if getattr(self, name) not in allowed:
                raise OptionsError(f"option {name!r} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if self.cache not in MODELS:
            raise OptionsError(f"option 'cache' must be one of {', '.join(MODELS)}, got {self.cache!r}")
        # JSON's NaN passes every comparison below unnoticed: finiteness first.
        for name in ("W", "saturation", "scheduling_period"):
            value = getattr(self, name)
            if not finite_number(value) or value < 0:
                raise OptionsError(f"option {name!r} must be a finite number >= 0, got {value!r}")
        if not 0 < self.saturation <= 1:
            raise OptionsError(f"option 'saturation' is a share of nodes in (0, 1], got {self.saturation!r}")
        if self.bandwidth is not None and (not finite_number(self.bandwidth) or self.bandwidth <= 0):
            raise OptionsError(f"option 'bandwidth' must be a finite number of bytes/s > 0, got {self.bandwidth!r}")
        for name in ("decisions", "export_prefix", "stats"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise OptionsError(f"option {name!r} must be a file path (a string), got {getattr(self, name)!r}")
