"""The transfer Gantt chart (Khanna et al. §4.3).

A node receives one file at a time ("a compute node can receive a file after
it has finished storing the previously received file"), so a transfer into
node k starts no earlier than the end of the last transfer reserved into k
(``recv[k]``). With ``shared_lane`` Lustre also serves one transfer at a time
(``lane``): requests to one storage endpoint are serialised.

    TCT_k(f) = max(t, recv_k, lane) + size(f) / BW_k

where t is when the node can start the job (its cores are free).
"""

import numpy as np


class TransferChart:
    def __init__(self, bandwidth, shared_lane=False):
        self.bandwidth = np.asarray(bandwidth, dtype=float)
        self.recv = np.zeros(len(self.bandwidth))
        self.lane = 0.0
        self.shared_lane = shared_lane

    def slot_start(self, node, t):
        start = max(t, self.recv[node])
        return max(start, self.lane) if self.shared_lane else start

    def tct(self, node, size, t):
        return self.slot_start(node, t) + size / self.bandwidth[node]

    def tct_all(self, size, t):
        """TCT on every node, for a vector t of times the nodes can start the job."""
        start = np.maximum(t, self.recv)
        if self.shared_lane:
            start = np.maximum(start, self.lane)
        return start + size / self.bandwidth

    def reserve(self, node, size, t):
        """Book the first slot from t: returns (start, end)."""
        start = self.slot_start(node, t)
        end = start + size / self.bandwidth[node]
        self.recv[node] = end
        if self.shared_lane:
            self.lane = end
        return start, end

    def released(self, node, planned_end, now):
        """A transfer planned to end at `planned_end` ended at `now`: free what it alone held."""
        if self.recv[node] == planned_end:
            self.recv[node] = min(planned_end, now)
        if self.shared_lane and self.lane == planned_end:
            self.lane = min(planned_end, now)
