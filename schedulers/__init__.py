"""batloc's pybatsim schedulers: the entry files pybatsim loads (``schedulers/<policy>.py``),
the plumbing every family shares (``boundary``, ``base``, ``admission``, ``workflows``), and the
families (``planning/``, ``filesharing/``, ``plain/`` with ``ioaware/`` and ``tabu/``).
docs/architecture.md, "Schedulers", maps them."""
