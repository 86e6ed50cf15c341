"""batloc.workloads: traces → job tables → file-annotated Batsim workloads.

Adapters (`swf`, `sacct`, `gonthier`) read a trace into one pandas job table
(`table`); `annotate` gives jobs input files and sessions (paper, V-B);
`window` cuts an evaluation window with context; `synth` generates Rackham-like
tables; `export` writes Batsim JSON (docs/contract.md §2, §6); `stats`
summarises; `cli` is `batloc workload ...`.
"""
