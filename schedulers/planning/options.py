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
free, and its clock: a pass only at a 30 s tick that sees a job end in
that very second (every reservation planned again) or a submission (only
the new jobs placed, on top of the standing plan), planned reservations
starting on their own at their second in between, and the jobs running at
t0 kept on their historical node. Two more of its rules are options the
profile leaves off (``eviction_penalty: "ended_windows"``, R11;
``score_rounding: "truncate"``, R7): measured alone on the oracle input they
move LEA's stretch away from the C simulator's (docs/reproduction.md).
"""

from dataclasses import dataclass
from typing import Optional

from batloc.locality.cache import MODELS
from batloc.engine.timers import MICROSECOND_EXACT
from batloc.schedulers.boundary import FileOutputs, OptionsError, finite_number
from batloc.schedulers.planning.formulas import SHAPES


PROFILES = {
    "paper": {},
    "authors": {"scheduling_period": 30.0, "cache": "authors", "inflight_overhead": "from_now",
                "pass_stop": "authors", "tick_events": "same_second", "submission_pass": "new_jobs_only",
                "start_reservations_between_passes": True, "pin_history_node": True,
                "core_choice": "earliest", "load_time_rounding": "float32_floor",
                "file_window": "per_file"},
}
INFLIGHT = ("to_load_end", "from_now")
PASS_STOPS = ("never", "no_free_core", "job_exceeds_free_cores", "authors")
TICK_EVENTS = ("since_last_tick", "same_second")
SUBMISSION_PASSES = ("full", "new_jobs_only")
PENALTIES = ("memory_model", "ended_windows")
ROUNDINGS = ("none", "truncate")
CORE_CHOICES = ("lowest_index", "earliest")
LOAD_ROUNDINGS = ("exact", "float32_floor")
FILE_WINDOWS = ("per_job", "per_file")
WRITE_BACKS = ("instant", "staged")
RAMP_SCALES = ("linear", "W")
LOAD_MODELS = ("node", "shared")


# The largest W: with overheads up to 1e290 s the scores stay finite; the paper's W is 500
W_MAX = 1e15


@dataclass(frozen=True)
class SchedulerOptions(FileOutputs):
    backfilling: bool = False
    W: float = 500.0
    saturation: float = 1.0
    # The gradual LEM (LEM only): [low, high] shares of busy nodes between which
    # the weight of locality grows from 0 (EFT) to 1 (LEA), along ``ramp_shape``
    # (linear, smooth, convex, concave; formulas.locality_weight). None: LEM's switch.
    ramp: Optional[list] = None
    ramp_shape: str = "linear"
    # The ramp's weight w as the mix of LEA in the score (``linear``: the load weighs 1 + w (W - 1)) or
    # on W's scale (``W``: it weighs W^w; scheduler-semantics.md, "Shared storage", 5).
    ramp_scale: str = "linear"
    # How long a planned load lasts: ``node``, size / BW_k (the paper's); ``shared``, its max-min share of
    # the backbone beside the loads in flight and those planned before it (scheduler-semantics.md,
    # "Shared storage", 1; the backbone is lustre's property ``bandwidth``).
    load_model: str = "node"
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
    # is planned), "no_free_core" (once no core is free now, less those the
    # pass's placements took), "job_exceeds_free_cores" (at the first job
    # needing more cores than that), or "authors" (FCFS's rule, "no_free_core",
    # for FCFS, the other one for the score policies, "never" with backfilling).
    pass_stop: str = "never"
    # The authors' clock (R2, R3; docs/authors-simulator.md). What a tick of
    # the scheduling period reacts to: any event since the last tick
    # ("since_last_tick"), or only a job end or a submission in that very
    # second ("same_second": ticks at k x period, k >= 1; with period 0 every
    # instant is a tick).
    tick_events: str = "since_last_tick"
    # What a tick with submissions and no end plans: the whole queue ("full"),
    # or only the jobs submitted since, on top of the standing plan, whose
    # cores freed early stay reserved until their planned end
    # ("new_jobs_only"; with "same_second", a job submitted in a second that
    # also saw an end joins the queue unplanned, for the next full pass).
    submission_pass: str = "full"
    # A reservation starts on its own at its planned second, on its planned
    # cores, without a pass (otherwise it waits for the next pass).
    start_reservations_between_passes: bool = False
    # Jobs with a ``history_node`` field (running before t0, R4) start on that
    # node (an index in platform order) at its earliest availability,
    # outside any policy.
    pin_history_node: bool = False
    # LEA's eviction penalty (LEO, LEM in their LEA form) counts the files the
    # memory model holds at t_k and no job uses ("memory_model"), or, as the
    # authors' simulator does (R11), the node's other files whose last
    # inserted window ends by t_k: started jobs' (to their latest planned
    # end), a file whose last user ended now, and jobs planned earlier in the
    # pass ("ended_windows"; non-zero even under ``cache: strict``).
    eviction_penalty: str = "memory_model"
    # Scores compared as they are ("none"), or truncated to whole seconds
    # first, as the authors' simulator stores them ("truncate", R7): nodes
    # less than a second apart tie and the lowest index wins.
    score_rounding: str = "none"
    # The cores a job takes on its node (no backfilling): the lowest positions
    # among those available by its t_k ("lowest_index"), or, as the authors'
    # simulator does (R7), the ones available first ("earliest"): a job
    # reserved in the future then takes the cores free now before any others,
    # so they are no longer free for a later job of the pass.
    core_choice: str = "lowest_index"
    # How long a load lasts: size / bandwidth ("exact"), or as the authors'
    # simulator times it (R6, "float32_floor"): the size in GB as a 32-bit
    # float over the bandwidth, truncated to whole seconds (a 13-core file,
    # 83.2 GB, loads in 831 s instead of 832). The stagings are sized to
    # last that long; scores keep the exact time.
    load_time_rounding: str = "exact"
    # What a pass sees of a file on a node (R10): each job's window, from its
    # file's availability to its own planned end ("per_job"), or the authors'
    # simulator's view ("per_file"): the started jobs' one window per file,
    # from now to the latest planned end of every job that used the file since
    # its load (those already ended included), then the pass's windows in
    # placement order, both ends included; the first window holding t_k
    # decides (present, or the wait for that window's load).
    file_window: str = "per_job"
    # Plan every queued job at every pass, so that each has a predicted start
    # from its submission on (<prefix>_predictions.csv). Off, a pass stops
    # once no later job could start now: jobs further back get their first
    # prediction when a pass first reaches them. Decisions are the same.
    predictions: bool = False
    # Workflows (contract §2b): an output is on Lustre from its producer's end
    # ("instant"), or copied there by a staging from its producer's memory,
    # where it stays pinned and is read by consumers elsewhere until then
    # ("staged": the platform needs routes between nodes, ``--node-routes``).
    write_back: str = "instant"
    # The paper's rule: a job's reservation window [t_k, t_k + walltime) holds
    # its load, so the scheduler kills it at t_k + walltime (base.watch_window).
    # False: the load does not count, the engine's own walltime (counted from the
    # execution, after the load) is the only kill; the plan keeps walltime-long
    # windows, a job running past its planned end holding its cores until it ends.
    walltime_includes_load: bool = True
    bandwidth: Optional[float] = None
    decisions: Optional[str] = None
    export_prefix: Optional[str] = None
    # Path of a JSON file receiving timing statistics at the end (benchmarks).
    stats: Optional[str] = None

    def pass_stop_for(self, policy_name: str) -> str:
        if self.pass_stop != "authors":
            return self.pass_stop
        if self.backfilling:
            return "never"
        return "no_free_core" if policy_name == "FCFS" else "job_exceeds_free_cores"

    @property
    def ticks(self) -> bool:
        """Whether the authors' clock drives the passes (``schedulers/planning/ticks.py``)."""
        return (self.tick_events != "since_last_tick" or self.submission_pass != "full"
                or self.start_reservations_between_passes or self.pin_history_node)

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
        for name in ("backfilling", "ignore_files", "predictions", "start_reservations_between_passes",
                     "pin_history_node", "walltime_includes_load"):
            if not isinstance(getattr(self, name), bool):
                raise OptionsError(f"option {name!r} must be true or false, got {getattr(self, name)!r}")
        if not finite_number(self.queue_depth, integer=True) or self.queue_depth < 0:
            raise OptionsError(f"option 'queue_depth' must be an integer >= 0 (0 = the whole queue), "
                               f"got {self.queue_depth!r}")
        for name, allowed in (("inflight_overhead", INFLIGHT), ("pass_stop", PASS_STOPS),
                              ("tick_events", TICK_EVENTS), ("submission_pass", SUBMISSION_PASSES),
                              ("eviction_penalty", PENALTIES), ("score_rounding", ROUNDINGS),
                              ("core_choice", CORE_CHOICES), ("load_time_rounding", LOAD_ROUNDINGS),
                              ("file_window", FILE_WINDOWS), ("write_back", WRITE_BACKS)):
            if getattr(self, name) not in allowed:
                raise OptionsError(f"option {name!r} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if self.ticks and self.queue_depth:
            raise OptionsError("option 'queue_depth' cannot bound the passes of the authors' clock (tick_events, "
                               "submission_pass, start_reservations_between_passes, pin_history_node): set it to 0")
        if self.cache not in MODELS:
            raise OptionsError(f"option 'cache' must be one of {', '.join(MODELS)}, got {self.cache!r}")
        # JSON's NaN passes every comparison below unnoticed: finiteness first.
        for name in ("W", "saturation", "scheduling_period"):
            value = getattr(self, name)
            if not finite_number(value) or value < 0:
                raise OptionsError(f"option {name!r} must be a finite number >= 0, got {value!r}")
        if self.W > W_MAX:   # t_k + W x overhead overflows to inf: no node scores, every job waits for ever
            raise OptionsError(f"option 'W' must be at most {W_MAX:g} (the scores t_k + W x overhead must stay "
                               f"finite, or no node is ever chosen), got {self.W!r}")
        if self.scheduling_period > MICROSECOND_EXACT:   # a slip of the unit: no pass before 136 years, and
            # past 2^32 s the engine's times are no longer exact to the microsecond (contract §4)
            raise OptionsError(f"option 'scheduling_period' must be at most {MICROSECOND_EXACT:.0f} s (2^32 s, about "
                               f"136 years: past it times are not exact to the microsecond), got "
                               f"{self.scheduling_period!r}")
        if self.ramp is not None:
            r = self.ramp
            if (not isinstance(r, (list, tuple)) or len(r) != 2 or not all(finite_number(x) for x in r)
                    or not 0 <= r[0] < r[1] <= 1):
                raise OptionsError(f"option 'ramp' is [low, high], shares of busy nodes with 0 <= low < high <= 1, "
                                   f"got {r!r}")
        if self.ramp_shape not in SHAPES:
            raise OptionsError(f"option 'ramp_shape' must be one of {', '.join(SHAPES)}, got {self.ramp_shape!r}")
        if self.ramp_scale not in RAMP_SCALES:
            raise OptionsError(f"option 'ramp_scale' must be one of {', '.join(RAMP_SCALES)}, got "
                               f"{self.ramp_scale!r}")
        if self.load_model not in LOAD_MODELS:
            raise OptionsError(f"option 'load_model' must be one of {', '.join(LOAD_MODELS)}, got "
                               f"{self.load_model!r}")
        if self.load_model == "shared" and (self.ticks or self.load_time_rounding != "exact"
                                            or self.file_window != "per_job"):
            raise OptionsError("option 'load_model' \"shared\" plans loads by their share of the backbone: it "
                               "does not go with the authors' clock, load_time_rounding or file_window (the "
                               "authors' profile)")
        if not 0 < self.saturation <= 1:
            raise OptionsError(f"option 'saturation' is a share of nodes in (0, 1], got {self.saturation!r}")
        if self.bandwidth is not None and (not finite_number(self.bandwidth) or self.bandwidth < 1):
            raise OptionsError(f"option 'bandwidth' must be a finite number of bytes/s >= 1 (a load's time, size / "
                               f"bandwidth, must stay finite), got {self.bandwidth!r}")
        for name in ("decisions", "export_prefix", "stats"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise OptionsError(f"option {name!r} must be a file path (a string), got {getattr(self, name)!r}")
