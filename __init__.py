"""batloc: data-locality-aware batch scheduling on the Batsim protocol.

The repository's top-level folders are this namespace's subpackages:
``batloc.engine`` is ``engine/``, ``batloc.schedulers`` is ``schedulers/``, …
"""

__version__ = "0.1.0"
