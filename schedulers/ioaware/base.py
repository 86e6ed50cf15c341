"""What the I/O-aware policies share: the file system's bandwidth B and each job's declared I/O.

B is the Lustre backbone's bandwidth, which the platform gives as the property
``bandwidth`` of the storage ``lustre`` (contract §7), or the option
``bandwidth``. A job declares ``io_bw`` (its mean I/O bandwidth over its run,
B/s) and, for pack-Char, ``io_period`` (its characteristic time, s); its
duration is its walltime. Profiles are never read (seed-schedulers.md §2).
"""

import math

from batloc.schedulers.plain.base import InputError, PlainScheduler, Rejected
from batloc.schedulers.plain.options import number, optional

# Sums of declared bandwidths are compared with B up to this relative slack (float rounding).
BW_SLACK = 1e-9

HINT = ("I/O-aware policies need the declared fields io_bw (bytes/s) and io_period (s) of "
        "`batloc workload synth --io` (docs/contract.md §7)")


class IoScheduler(PlainScheduler):
    options_spec = {"bandwidth": (None, optional(number(above=0)))}
    needs_period = False

    def setup(self):
        self.P = len(self.core_ids)
        if self.opts.bandwidth is not None:
            self.B = float(self.opts.bandwidth)
            return
        value = self.lustre_property("bandwidth")
        if value is None:
            where = ("has no storage named 'lustre'" if self.lustre_id is None
                     else "has no backbone link: storage 'lustre' lacks the property 'bandwidth'")
            raise InputError(f"the platform {where}, so there is no shared bandwidth to schedule "
                             f"(generate one with `batloc platform generate --io-routes --backbone-bw B`, "
                             f"docs/contract.md §7, or give the option 'bandwidth')")
        try:
            self.B = float(value)
        except ValueError:
            self.B = math.nan
        if not self.B > 0 or not math.isfinite(self.B):
            raise InputError(f"storage 'lustre' has bandwidth={value!r}, not a positive number of bytes/s")

    def admit(self, item):
        item.bw = self._field(item, "io_bw")
        if item.bw > self.B * (1 + BW_SLACK):
            raise Rejected(f"job {item.id} declares io_bw {item.bw:g} B/s, more than the file system's {self.B:g}")
        item.period = self._field(item, "io_period") if self.needs_period else None

    def _field(self, item, name):
        value = item.fields.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            what = "has no" if value is None else f"has an invalid ({value!r})"
            raise InputError(f"job {item.id} {what} {name} field; {HINT}")
        return float(value)

    def fits_bandwidth(self, used):
        return used <= self.B * (1 + BW_SLACK)
