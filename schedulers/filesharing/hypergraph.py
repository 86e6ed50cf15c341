"""Online-HPS's hypergraph of the system state (Khanna et al. §4.2).

Vertices: the pending jobs, plus one *anchor* per node, pinned to it, that
stands for what the node already runs (the paper pins running jobs; one
anchor also covers multi-core and idle nodes). Nets: one per file f, of cost
size(f), joining the pending jobs that need f and the anchors of the nodes
where f is in memory or loading. Weights (Eq. 5-6, C·size being the walltime):

    anchor_k   = Σ_{jobs holding cores on k} cores x max(0, end of window - now)
    pending J  = cores x (size x Tr + walltime),
    Tr         = p / BW + (1 - p) x (1 - 1/P) / BW,   p = 1 / s_f,  s_f = |net f|

P = number of nodes; BW = the mean node bandwidth (one RBW in the paper).
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class Hypergraph:
    parts: int
    job_weight: np.ndarray        # per pending job
    job_cores: np.ndarray
    job_net: np.ndarray           # per pending job: its net's index, -1 without file
    anchor_weight: np.ndarray     # per node
    net_cost: np.ndarray          # per net: its file's size
    net_anchors: list             # per net: the nodes whose anchor it joins
    net_files: list               # per net: its file id

    @property
    def total_weight(self):
        return float(self.job_weight.sum() + self.anchor_weight.sum())


def build(pending, held_by_node, holders, bandwidth, now):
    """pending: jobs in submission order; held_by_node: per node, its Held jobs;
    holders: file -> nodes where it is in memory or loading."""
    parts = len(held_by_node)
    anchor_weight = np.array([sum(h.job.cores * max(0.0, _finite(h.deadline) - now) for h in held.values())
                              for held in held_by_node], dtype=float)
    index, net_files, net_anchors, pins = {}, [], [], []
    job_net = np.full(len(pending), -1, dtype=np.int64)
    for i, job in enumerate(pending):
        if job.file is None:
            continue
        n = index.get(job.file)
        if n is None:
            n = index[job.file] = len(net_files)
            net_files.append(job.file)
            net_anchors.append(sorted(holders(job.file)))
            pins.append(len(net_anchors[-1]))
        pins[n] += 1
        job_net[i] = n
    sizes = {job.file: job.size for job in pending if job.file is not None}
    net_cost = np.array([sizes[f] for f in net_files], dtype=float)
    job_size = np.array([job.size for job in pending], dtype=float)
    job_cores = np.array([job.cores for job in pending], dtype=np.int64)
    walltime = np.array([_finite(job.walltime) for job in pending], dtype=float)
    s_f = np.asarray(pins, dtype=float)[job_net] if len(pins) else np.ones(len(pending))
    p = np.where(job_net >= 0, 1.0 / np.maximum(s_f, 1.0), 1.0)
    bw = float(np.mean(bandwidth))
    tr = p / bw + (1.0 - p) * (1.0 - 1.0 / parts) / bw
    job_weight = job_cores * (job_size * tr + walltime)
    return Hypergraph(parts, job_weight, job_cores, job_net, anchor_weight, net_cost, net_anchors, net_files)


def _finite(t):
    # A job without walltime counts as ending now: the estimates have no better figure.
    return t if np.isfinite(t) else 0.0
