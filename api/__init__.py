"""batloc from Python: build a platform and a workload, run a simulation or a sweep, read the results.

    import batloc.api as bl

    cluster = bl.platform(nodes=4, cores=8, memory="64GB", node_bw="0.1GB/s")
    jobs = bl.workload(platform=cluster, duration="1d", load=0.9, seed=1)
    r = bl.run(cluster, jobs, "lea")            # the engine runs LEA in its own process
    r.jobs                                      # jobs.csv as a DataFrame
    r.jobset                                    # an evalys JobSet (the report's stretch)
    s = bl.sweep(cluster, jobs, ["fcfs", "lea", "lea-bf"], "comparison")
    s.summary, s.report, s.figures              # the report's table, report.html, its figures

Every run is a robin run (its folder holds run.json and out_*.csv): `batloc
report`, `batloc validate` and `Run(folder)` read it as any other. Errors are
`BatlocError`, one line. docs/python-api.md is the reference.
"""

from .errors import BatlocError
from .inputs import Platform, Workload, platform, workload
from .runs import Run, Validation, run
from .sweeps import Sweep, sweep

__all__ = ["BatlocError", "Platform", "Run", "Sweep", "Validation", "Workload", "platform", "run", "sweep",
           "workload"]
