"""P-way partitioners of Online-HPS's hypergraph, behind one small interface.

    partition(hypergraph, caps, node_cores) -> part (node index) of every pending job

They minimise the connectivity-1 cut Σ_f size(f) x (λ_f - 1) (λ_f = parts
net f touches, anchors included) under part weight <= caps[k], with the
anchors fixed to their nodes; a job only goes to a node with enough cores.

- ``greedy`` (default, tested): deterministic, one pass over the pending jobs
  in submission order; each goes to the part, among those with room, that
  adds least to the cut (the cost of its net when the net already touches
  other parts but not this one); ties: lighter part, then lower index. When
  no part has room, the candidates are the parts it overloads least (then
  the same keys), as a partitioner holding its balance constraint as far as
  it can: taking any part there would pile a burst of jobs sharing a file on
  one node of a mostly idle cluster (seen on a Rackham day: 486 parts, so a
  single job outweighs a part's share).
- ``mtkahypar``: the multilevel partitioner Mt-KaHyPar (optional package
  ``mtkahypar``, deterministic preset, one thread), closer to the paper's
  PaToH; jobs it leaves on a node too small for them are placed greedily.
"""

import numpy as np

from batloc.schedulers.filesharing.options import OptionsError


class GreedyPartitioner:
    name = "greedy"

    def partition(self, hg, caps, node_cores):
        weight = hg.anchor_weight.astype(float).copy()
        touched = np.zeros((len(hg.net_cost), hg.parts), dtype=bool)
        for n, anchors in enumerate(hg.net_anchors):
            touched[n, anchors] = True
        touched_any = touched.any(axis=1)
        limit = caps * (1 + 1e-12)
        out = np.empty(len(hg.job_weight), dtype=np.int64)
        no_cut = np.zeros(hg.parts)
        for i, w in enumerate(hg.job_weight.tolist()):
            hosts = node_cores >= hg.job_cores[i]
            n = hg.job_net[i]
            delta = np.where(touched[n], 0.0, hg.net_cost[n]) if n >= 0 and touched_any[n] else no_cut
            room = hosts & (weight + w <= limit)
            if room.any():
                candidates = room
            else:
                overload = np.where(hosts, weight + w - caps, np.inf)
                candidates = overload == overload.min()
            cut = np.where(candidates, delta, np.inf)
            lightest = np.where(candidates & (cut == cut.min()), weight, np.inf)
            k = int(np.argmin(lightest))
            out[i] = k
            weight[k] += w
            if n >= 0:
                touched[n, k] = True
                touched_any[n] = True
        return out


class MtKaHyParPartitioner:
    name = "mtkahypar"
    _initializer = None

    def __init__(self):
        try:
            import mtkahypar
        except ImportError:
            raise OptionsError("option partitioner='mtkahypar' needs the mtkahypar package "
                               "(pip install mtkahypar); the default is 'greedy'") from None
        self.mt = mtkahypar
        if MtKaHyParPartitioner._initializer is None:
            MtKaHyParPartitioner._initializer = mtkahypar.initialize(1, False)
            mtkahypar.set_seed(0)
        self.init = MtKaHyParPartitioner._initializer

    def partition(self, hg, caps, node_cores):
        jobs, parts = len(hg.job_weight), hg.parts
        if jobs == 0:
            return np.empty(0, dtype=np.int64)
        pins = [[] for _ in hg.net_cost]
        for i, n in enumerate(hg.job_net.tolist()):
            if n >= 0:
                pins[n].append(i)
        edges, costs = [], []
        for n, members in enumerate(pins):
            edge = members + [jobs + k for k in hg.net_anchors[n]]
            if len(edge) > 1:
                edges.append(edge)
                costs.append(hg.net_cost[n])
        # Integer weights: scale so that the total stays well inside 32 bits.
        weights = np.concatenate([hg.job_weight, hg.anchor_weight])
        scale = 1e6 / max(float(weights.sum()), 1e-12)
        node_w = np.maximum(1, np.round(weights * scale)).astype(int)
        cost_scale = 1e4 / max(max(costs, default=1.0), 1e-12)
        edge_w = [max(1, int(round(c * cost_scale))) for c in costs]
        ctx = self.init.context_from_preset(self.mt.PresetType.DETERMINISTIC)
        ctx.logging = False
        ctx.set_partitioning_parameters(parts, 0.0, self.mt.Objective.KM1)
        ctx.set_individual_target_block_weights([int(max(c * scale, 1)) + 1 for c in caps])
        graph = self.init.create_hypergraph(ctx, jobs + parts, len(edges), edges, node_w.tolist(), edge_w)
        graph.add_fixed_vertices([-1] * jobs + list(range(parts)), parts)
        blocks = graph.partition(ctx)
        out = np.array([blocks.block_id(i) for i in range(jobs)], dtype=np.int64)
        for i in np.flatnonzero(node_cores[out] < hg.job_cores):
            out[i] = int(np.argmax(node_cores >= hg.job_cores[i]))
        return out


def make_partitioner(name):
    return MtKaHyParPartitioner() if name == "mtkahypar" else GreedyPartitioner()
