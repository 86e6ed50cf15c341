"""``<prefix>_decisions.csv``: one row per start decision (contract §6)."""

import csv

HEADER = ["time", "job_id", "policy", "node", "alloc", "cores", "planned_start",
          "input_file", "input_size", "cache", "staging_job", "score"]


def _num(x):
    return "" if x is None else f"{float(x):.6f}"


class DecisionLog:
    def __init__(self, path):
        self.path = path
        self._fh = open(path, "w", newline="") if path else None
        self._w = csv.writer(self._fh) if self._fh else None
        if self._w:
            self._w.writerow(HEADER)

    def write(self, time, job_id, policy, node, alloc, cores, planned_start,
              input_file, input_size, cache, staging_job, score):
        if not self._w:
            return
        self._w.writerow([_num(time), job_id, policy, node, alloc, cores, _num(planned_start),
                          input_file or "", "" if input_file is None else _num(input_size),
                          cache, staging_job or "", _num(score)])

    def close(self):
        if self._fh:
            self._fh.close()
            self._fh = None
