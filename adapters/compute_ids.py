"""What the wrapped scheduler may see of the platform: its compute resources only, numbered 0…n−1.

A file-unaware scheduler does not know that storages run only staging work:
pybatsim 3.2.1's EASY backfilling allocates over every resource id it is
shown, so on a contract platform some of its jobs would land on ``lustre``
or a node memory. The proxy therefore shows it the compute resources alone
(SIMULATION_BEGINS without storages, ``nb_resources`` = the number of cores)
and translates resource ids both ways in every message that carries them:
engine id = the inner id's compute resource, in the engine's id order. On
Batsim 4.2's numbering (cores first, contract §1) the translation is the
identity, and messages are left as the engine's bytes.
No sockets here, as in ``relay``.
"""

from batloc.engine.errors import EngineError
from batloc.engine.protocol import format_intervals, parse_intervals

from .errors import ProxyError


class ComputeIds:
    def __init__(self, compute_resources):
        self.outer = sorted(int(r["id"]) for r in compute_resources)
        self.inner = {rid: i for i, rid in enumerate(self.outer)}
        self.identity = self.outer == list(range(len(self.outer)))

    def __len__(self):
        return len(self.outer)

    def begins(self, data):
        """SIMULATION_BEGINS' data as the wrapped scheduler sees it: no storage, cores renumbered."""
        compute = [dict(r, id=self.inner[int(r["id"])]) for r in data.get("compute_resources") or []]
        return dict(data, compute_resources=compute, storage_resources=[], nb_resources=len(compute),
                    nb_compute_resources=len(compute), nb_storage_resources=0)

    def to_inner(self, alloc):
        """An engine allocation of a job the wrapped scheduler started, in its own ids."""
        if self.identity or not isinstance(alloc, str) or not alloc:
            return alloc
        try:
            ids = parse_intervals(alloc, max(self.outer) + 1)
        except EngineError:
            return alloc
        return format_intervals(self.inner[i] for i in ids if i in self.inner)

    def to_outer(self, alloc, what):
        """The wrapped scheduler's allocation in engine ids; `what` names the event for the error.

        An allocation that is not an interval set goes on unchanged, for the engine to refuse in its
        own words; one naming an id the scheduler was never shown is refused here.
        """
        if not isinstance(alloc, str):
            return alloc
        try:
            ids = parse_intervals(alloc, len(self.outer))
        except EngineError as exc:
            if "does not exist" not in str(exc):
                return alloc
            top = max(int(p) for p in alloc.replace(",", " ").replace("-", " ").split())
            raise ProxyError(f"{what}: resource {top} does not exist (the wrapped scheduler was shown the "
                             f"{len(self.outer)} compute resources 0-{len(self.outer) - 1} only)") from None
        if self.identity:
            return alloc
        return format_intervals(self.outer[i] for i in ids)
