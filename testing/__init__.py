"""Stand-ins for tests and benchmarks, never used by a real run.

- ``dry_run`` — a tiny event loop in place of the engine, under the paper's
  model, that drives a batloc scheduler's pybatsim callbacks directly;
- ``readme`` — the README's code blocks run as written, beside another
  simulation (the README's test and benchmarks/readme_commands.py).
"""
