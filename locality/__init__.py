"""The shared locality model: what node memories hold and how files reach them.

Used alike by the schedulers, the staging proxy (``adapters``) and the
validator (``analysis.validate``), so all three agree on every hit and load:

- ``cache``          — one node's memory (page cache) under the memory models;
- ``staging``        — data-staging jobs: ids, profiles, jobs waiting for a shared staging;
- ``platform_view``  — nodes, cores, node memories and Lustre from SIMULATION_BEGINS;
- ``decision_log``   — the ``<prefix>_decisions.csv`` writer.

Pure Python; nothing here imports pybatsim, ZeroMQ or the planning core.
"""
