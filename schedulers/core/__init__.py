"""The schedulers' shared core: pure Python + numpy, no pybatsim or zmq.

- ``options``        — the ``-o`` JSON options and their paper defaults;
- ``platform_view``  — nodes, cores, node memories and Lustre from SIMULATION_BEGINS;
- ``availability``   — when cores are free (planned schedule), with and without backfilling;
- ``cache``          — one node's memory (page cache) under the memory models;
- ``file_outlook``   — when a job's file is available on a node (t'_k) and the eviction penalty;
- ``staging``        — data-staging jobs: ids, profiles, jobs waiting for a shared staging;
- ``planner``        — one planning pass over the queue (list scheduling);
- ``decision_log``   — the ``<prefix>_decisions.csv`` writer.

``cache`` and ``staging`` import nothing else from batloc, so the file-staging
adapter can reuse them on their own.
"""
