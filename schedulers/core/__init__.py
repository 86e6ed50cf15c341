"""The schedulers' planning core: one planning pass over the queue, and the
scheduler's view of the cluster between passes.

- ``options``        — the ``-o`` JSON options and their paper defaults;
- ``availability``   — when cores are free (planned schedule), with and without backfilling;
- ``file_outlook``   — when a job's file is available on a node (t'_k) and the eviction penalty;
- ``state``          — cores held, node memories, stagings: changed only by events;
- ``planner``        — one planning pass over the queue (list scheduling).

The node memory model, staging ids, platform view and decision log it uses
are the project's shared locality model, ``batloc.locality``.
"""
