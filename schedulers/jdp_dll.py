"""JobDataPresent + DataLeastLoaded (Ranganathan & Foster, as Khanna et al. §3, §6.4 use it).

Scheduling and replication, decoupled. At its arrival a job is mapped once,
to a node-local FIFO queue:

    1. eligible = the nodes holding the job's file (in memory or loading);
    2. node     = the least-loaded eligible node, else the least-loaded node
                  (load_k = max(0, ready_k - now); ties: lowest index);
    3. DLL: c(k, f) += 1; when c(k, f) reaches the threshold (2, the paper's
       best), replicate f to the least-loaded node not holding it (a staging
       job that holds no cores) and reset c(k, f). Only a node where f fits
       next to the files in use takes a replica (none may: then none is made);
       the paper's memories never fill, and a replica over a full memory would
       hold more bytes than the node has.

Node memory is LRU, as in the original (the ``cache`` option changes it).
"""

from batloc.schedulers.filesharing.immediate import ImmediateScheduler


class Jdp_dll(ImmediateScheduler):
    policy_name = "JDP+DLL"
    accepted_options = ("threshold",)
    default_options = {"cache": "lru"}

    def setup(self):
        super().setup()
        self.mappings = {}            # (node, file) -> mappings since its last replication
        self.cores = [len(n.core_ids) for n in self.platform.nodes]

    def least_loaded(self, nodes, now):
        loads = self.loads(now)
        return min(nodes, key=lambda k: (loads[k], k))

    def choose(self, job, now):
        fits = [k for k, c in enumerate(self.cores) if c >= job.cores]
        eligible = [k for k in fits if k in self.state.census.nodes(job.file)] if job.file is not None else []
        return self.least_loaded(eligible or fits, now), None

    def mapped(self, job, node, now):
        if job.file is None:
            return
        key = (node, job.file)
        self.mappings[key] = self.mappings.get(key, 0) + 1
        if self.mappings[key] < self.opts.threshold:
            return
        self.mappings[key] = 0
        holders = self.state.census.nodes(job.file)
        memories = self.state.memories
        others = [k for k in range(len(self.cores)) if k not in holders and memories[k].room_for(job.size, now)]
        if others:
            self.replicate(job.file, job.size, self.least_loaded(others, now), now)
