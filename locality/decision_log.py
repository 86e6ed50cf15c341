"""``<prefix>_decisions.csv``: one row per start decision (contract §6); columns and quoting in ``batloc.outputs``."""

import math

from batloc.outputs import CRLF, DECISIONS_COLUMNS, OutputError, open_for_writing, row

HEADER = list(DECISIONS_COLUMNS)


def _num(x):
    """Six decimals; empty for none, and for a value that is not finite (no output holds nan or inf)."""
    return "" if x is None or not math.isfinite(float(x)) else f"{float(x):.6f}"


class DecisionLog:
    """Writes the log as decisions are taken; a write that fails (a full disk) is an `OutputError` naming the file."""

    def __init__(self, path):
        self.path = path
        self._fh = None
        if path:
            self._fh = self._do(lambda: open_for_writing(path))
            self._put(HEADER)

    def _do(self, action):
        try:
            return action()
        except OSError as exc:
            self._fh = None   # nothing more is written once it failed
            raise OutputError(f"cannot write the decision log {self.path}: {exc.strerror or exc}") from None

    def _put(self, fields):
        fh = self._fh
        self._do(lambda: fh.write(row(fields, CRLF)))

    def write(self, time, job_id, policy, node, alloc, cores, planned_start,
              input_file, input_size, cache, staging_job, score):
        if not self._fh:
            return
        self._put([_num(time), job_id, policy, node, alloc, cores, _num(planned_start),
                   input_file or "", "" if input_file is None else _num(input_size),
                   cache, staging_job or "", _num(score)])

    def close(self):
        if self._fh:
            fh, self._fh = self._fh, None
            self._do(fh.close)
