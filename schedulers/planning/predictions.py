"""``<prefix>_predictions.csv``: when each job was predicted to start, and when it did (contract §6).

With a standing plan every planned job has a planned start, what Slurm's
``squeue --start`` tells users. One row per started job: its submission, the
pass that first planned it and the start planned then, the start planned just
before the pass that started it, and its start. Columns and quoting in
``batloc.outputs``; a write that fails is an ``OutputError`` naming the file.
"""

import math

from batloc.outputs import PREDICTIONS_COLUMNS, OutputError, open_for_writing, row


def _num(x):
    return "" if x is None or not math.isfinite(float(x)) else f"{float(x):.6f}"


class PredictionLog:
    def __init__(self, path):
        self.path = path
        self._fh = self._do(lambda: open_for_writing(path)) if path else None
        if self._fh:
            self._do(lambda: self._fh.write(row(PREDICTIONS_COLUMNS)))

    def _do(self, action):
        try:
            return action()
        except OSError as exc:
            self._fh = None
            raise OutputError(f"cannot write the predictions {self.path}: {exc.strerror or exc}") from None

    def write(self, job_id, submitted, predicted, start):
        """``predicted``: (first planned start, the pass that planned it, planned start before this pass)."""
        if self._fh:
            first, at, last = predicted
            fh = self._fh
            self._do(lambda: fh.write(row([job_id, _num(submitted), _num(at), _num(first), _num(last),
                                           _num(start)])))

    def close(self):
        if self._fh:
            fh, self._fh = self._fh, None
            self._do(fh.close)
