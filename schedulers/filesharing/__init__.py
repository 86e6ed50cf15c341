"""Shared pieces of Khanna et al.'s file-sharing schedulers (MET, MCT, SA, JDP+DLL, Online-HPS).

- ``options``     — the policies' options, each policy accepting its own subset;
- ``base``        — pybatsim callbacks, the staging protocol (contract §3), held
                    cores, node memories, replications, kills and the decision log;
- ``transfers``   — the transfer Gantt chart (§4.3): one load at a time into a node,
                    optionally one at a time out of Lustre (a shared lane);
- ``projection``  — walltime-based node availability of the node-local FIFO queues;
- ``immediate``   — the immediate-mode baselines: map once at submission, then FIFO;
- ``hypergraph``, ``partition`` — Online-HPS's model of the system and its P-way partitioners.

The settled reading of the paper is ``shared/design/seed-schedulers.md`` §1.
"""
