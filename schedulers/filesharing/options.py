"""Options of the file-sharing policies, as passed with pybatsim's ``-o '{...}'`` JSON.

Defaults are the paper's (Khanna et al. §5, §6.4) or the choices of
seed-schedulers.md §1: SA's thresholds l = 0.3 and h = 0.7, DLL's replication
threshold 2, Online-HPS's imbalance bound ε = 0.10 and its greedy
partitioner; the ``value`` memory policy (Eq. 7) except for JDP+DLL (LRU).
Each policy accepts only the options it uses, and an unknown one is an
error that names the valid ones.
"""

from dataclasses import dataclass, replace
from typing import Optional

from batloc.locality.cache import MODELS
from batloc.schedulers.boundary import FileOutputs, OptionsError, finite_number

CACHES = ("value",) + MODELS
PARTITIONERS = ("greedy", "mtkahypar")
COMMON = ("cache", "shared_lane", "walltime_includes_load", "bandwidth", "decisions", "export_prefix", "stats")


@dataclass(frozen=True)
class FileSharingOptions(FileOutputs):
    cache: str = "value"
    # One transfer at a time out of Lustre too (a platform whose backbone is one
    # node link wide); by default only one at a time into each node.
    shared_lane: bool = False
    l: float = 0.3                # SA: switch MET -> MCT below this balance index
    h: float = 0.7                # SA: switch MCT -> MET at or above it
    threshold: int = 2            # DLL: mappings of a file to a node that trigger a replication
    epsilon: float = 0.10         # Online-HPS: part weight <= (1 + epsilon) x its share
    partitioner: str = "greedy"   # Online-HPS: greedy (default, tested) or mtkahypar (optional package)
    walltime_includes_load: bool = True   # the kill at t_k + walltime, as the planning family's option
    bandwidth: Optional[float] = None
    decisions: Optional[str] = None
    export_prefix: Optional[str] = None
    stats: Optional[str] = None   # JSON file receiving pass timings at the end (benchmarks)

    @classmethod
    def parse(cls, raw, accepted, policy, **defaults) -> "FileSharingOptions":
        raw = dict(raw or {})
        valid = sorted(set(COMMON) | set(accepted))
        unknown = sorted(set(raw) - set(valid))
        if unknown:
            raise OptionsError(f"{policy}: unknown option(s) {', '.join(map(repr, unknown))}; "
                               f"valid options: {', '.join(valid)}")
        opts = replace(cls(), **{**defaults, **raw})
        opts._check(policy)
        return opts

    def _check(self, policy):
        def bad(name, what):
            raise OptionsError(f"{policy}: option {name!r} must be {what}, got {getattr(self, name)!r}")

        if self.cache not in CACHES:
            bad("cache", "one of " + ", ".join(CACHES))
        if self.partitioner not in PARTITIONERS:
            bad("partitioner", "one of " + ", ".join(PARTITIONERS))
        for name in ("shared_lane", "walltime_includes_load"):
            if not isinstance(getattr(self, name), bool):
                bad(name, "true or false")
        for name in ("l", "h", "epsilon"):
            value = getattr(self, name)
            if not finite_number(value) or value < 0:
                bad(name, "a finite number >= 0")
        if not self.l <= self.h <= 1:
            raise OptionsError(f"{policy}: options must satisfy l <= h <= 1, got l={self.l!r}, h={self.h!r}")
        if not finite_number(self.threshold, integer=True) or self.threshold < 1:
            bad("threshold", "an integer >= 1")
        if self.bandwidth is not None and (not finite_number(self.bandwidth) or self.bandwidth <= 0):
            bad("bandwidth", "a finite number of bytes/s > 0")
        for name in ("decisions", "export_prefix", "stats"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                bad(name, "a file path (a string)")
