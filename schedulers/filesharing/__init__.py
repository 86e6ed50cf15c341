"""Shared pieces of Khanna et al.'s file-sharing schedulers (MET, MCT, SA, JDP+DLL, Online-HPS).

- ``options``     — the policies' options, each policy accepting its own subset;
- ``base``        — the pybatsim class: events, starts, replications, the decision log
                    (the Batsim-side plumbing is the shared ``batloc.schedulers.base``);
- ``state``       — held cores, node memories, the file census, the transfer chart,
                    stagings in flight: changed only by events;
- ``transfers``   — the transfer Gantt chart (§4.3): one load at a time into a node,
                    optionally one at a time out of Lustre (a shared lane);
- ``projection``  — walltime-based node availability of the node-local FIFO queues;
- ``immediate``   — the immediate-mode baselines: map once at submission, then FIFO;
- ``hypergraph``, ``partition`` — Online-HPS's model of the system and its P-way partitioners.

The settled reading of the paper is ``shared/design/seed-schedulers.md`` §1.
"""
