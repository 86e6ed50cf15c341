"""The planning family: the paper's FCFS, EFT, LEA, LEO and LEM (± backfilling).

- ``scheduler``      — ``PlanningScheduler``, the pybatsim class the entry files
                       (``schedulers/lea.py``…) subclass: events, starts, decision log;
- ``formulas``       — the five scores in the paper's terms (a leaf: only the JIT helper);
- ``options``        — the ``-o`` JSON options and their paper defaults;
- ``job_queue``      — the queue in submission order, as the arrays the pass reads;
- ``state``          — cores held, node memories, stagings: changed only by events;
- ``flat_state``     — that state copied into the flat arrays the compiled pass reads;
- ``planner``        — one planning pass over the queue (list scheduling), compiled;
- ``availability``   — when cores are free (planned schedule), with and without backfilling;
- ``file_outlook``   — when a job's file is available on a node (t'_k) and the eviction penalty;
- ``scratch``        — the pass's preallocated work arrays;
- ``jit``            — how the pass is compiled and cached (keyed by this folder's sources).

The node memory model, staging ids, platform view and decision log it uses
are the project's shared locality model, ``batloc.locality``; the Batsim-side
plumbing every family shares is ``batloc.schedulers.base``.
"""
