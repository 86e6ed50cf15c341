"""robin: run Batsim simulations robustly (batexpe robin's format), or sweeps of them.

- ``description`` — the YAML description files: batexpe's single run, batloc's sweep;
- ``runs``        — from a description to RunSpecs, running one and recording its run.json;
- ``identity``    — what a run depends on, by content (when a complete run must run again);
- ``validation``  — `batloc validate` on every finished run, its verdict in run.json;
- ``sweep``       — a sweep: what is complete, the runs on threads or Dask, one tally and display;
- ``dask_sweep``  — a sweep's runs as Dask tasks (`robin --dask`);
- ``process``     — one run's two process groups, its timeouts and logs, robin's signal handling;
- ``guard``       — kills a run's process groups when the process that started them dies;
- ``lock``        — one robin per output folder;
- ``kernel``      — the planning core loaded (compiled if need be) once before a sweep that needs it;
- ``cli``         — the `robin` command.
"""
