"""robin: run Batsim simulations robustly (batexpe robin's format), or sweeps of them.

- ``description`` — the YAML description files: batexpe's single run, batloc's sweep;
- ``runs``        — from a description to RunSpecs, running one and recording its run.json;
- ``process``     — one run's two process groups, its timeouts and logs;
- ``guard``       — kills a run's process groups when the process that started them dies;
- ``dask_sweep``  — a sweep's runs as Dask tasks (`robin --dask`);
- ``cli``         — the `robin` command.
"""
