"""The proxy's topology-aware option (``--one-node``): a job that fits in one node runs on one node.

A stock scheduler knows nothing of nodes: pybatsim's take the lowest free
resource ids, so a job of 8 cores may get the last 3 cores of one node and 5
of the next, and the proxy must then load its file into both memories, where
it waits until the file fits on both at once. That cost is the stock
scheduler's node-unawareness, not its file-unawareness. With this option the
proxy moves such an allocation onto one node when the job asks for no more
cores than that node has and the node has them free at that instant (the
node holding most of the chosen cores first, then the lowest index), and
leaves it as chosen otherwise. It is a stated deviation from the wrapped
scheduler's decision, made so that users can tell the two costs apart.

The wrapped scheduler keeps its own view: its ids are mapped onto the
engine's through a permutation that changes only between free cores. When
a job's cores X are moved to free cores Y, the ids that pointed at Y now
point at X's old cores, which are free too; so a core is busy in the
scheduler's view exactly when its image is busy in the engine, and a running
job's cores never move. Ids here are the compute ids 0…n−1 of
``compute_ids`` (its own translation to the engine's ids comes after).
No sockets here, as in ``relay``.
"""

from batloc.engine.errors import EngineError
from batloc.engine.protocol import format_intervals, parse_intervals


class OneNode:
    def __init__(self, node_of):
        """node_of: compute id (0…n−1) → node index."""
        self.node_of = list(node_of)
        n = len(self.node_of)
        self.image = list(range(n))           # the scheduler's id -> the id the engine runs it on
        self.busy = [False] * n               # by engine id: held by a job its scheduler executed
        self.jobs = {}                        # job id -> engine ids it holds
        self.moved = 0                        # jobs moved onto one node
        self.nodes = {}                       # node -> its compute ids, ascending
        for i, k in enumerate(self.node_of):
            self.nodes.setdefault(k, []).append(i)

    def place(self, job_id, alloc):
        """The scheduler's allocation `alloc` (its ids) of `job_id` → the same job's allocation in engine ids."""
        try:
            ids = parse_intervals(alloc, len(self.image))
        except EngineError:
            return alloc                      # the caller reports it
        target = [self.image[i] for i in ids]
        nodes = {self.node_of[t] for t in target}
        if len(nodes) > 1:
            better = self._one_node(target)
            if better is not None:
                self._swap(ids, better)
                target = better
                self.moved += 1
        for t in target:
            self.busy[t] = True
        self.jobs[job_id] = target
        return format_intervals(target)

    def _one_node(self, target):
        """Cores of one node free now for len(target) cores, keeping what it already holds there; else None."""
        count = {}
        for t in target:
            count[self.node_of[t]] = count.get(self.node_of[t], 0) + 1
        for k in sorted(self.nodes, key=lambda k: (-count.get(k, 0), k)):
            mine = [t for t in target if self.node_of[t] == k]
            free = [c for c in self.nodes[k] if not self.busy[c] and c not in mine]
            if len(mine) + len(free) >= len(target):
                return sorted(mine + free[:len(target) - len(mine)])
        return None

    def _swap(self, ids, better):
        """Point the scheduler's `ids` at `better`: the ids that pointed there take the old images."""
        where = {img: i for i, img in enumerate(self.image)}
        old = [self.image[i] for i in ids]
        freed = [c for c in old if c not in set(better)]
        taken = [c for c in better if c not in set(old)]
        for c_new, c_old in zip(taken, freed):
            other = where[c_new]             # a scheduler id pointing at a free core it does not hold
            self.image[other] = c_old
        for i, c in zip(ids, sorted(better)):
            self.image[i] = c

    def ended(self, job_id):
        for t in self.jobs.pop(job_id, ()):
            self.busy[t] = False

    def to_engine(self, alloc):
        """Ids of the scheduler (not a job's allocation: e.g. SET_RESOURCE_STATE) in engine ids."""
        try:
            return format_intervals(self.image[i] for i in parse_intervals(alloc, len(self.image)))
        except EngineError:
            return alloc

    def to_scheduler(self, alloc):
        """Engine ids in the scheduler's ids (RESOURCE_STATE_CHANGED)."""
        try:
            back = {img: i for i, img in enumerate(self.image)}
            return format_intervals(back[i] for i in parse_intervals(alloc, len(self.image)))
        except EngineError:
            return alloc
