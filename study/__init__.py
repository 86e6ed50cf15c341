"""Studies as one command: `batloc study paper` runs Gonthier et al.'s §V study on a public trace.

- ``description`` — the study file (experiments/paper-study.yaml): trace, windows, variants, knobs;
- ``windows``     — the evaluation weeks drawn from a trace, with their context;
- ``prepare``     — trace → scaled Rackham platform + one workload per week + robin's sweep;
- ``paper``       — the paper's published Tables I–III and session figures;
- ``note``        — the closing note: batloc's tables next to the paper's.
"""
