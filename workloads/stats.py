"""Summary figures of a workload, including the load it offers to a platform.

Offered load = Σ cores × run time of the jobs submitted in the period /
(platform cores × period length). The period is the evaluation window when
the workload has one (provenance `period`), else first to last submission.
"""

import numpy as np


def workload_stats(table, total_cores=None, bandwidth=None):
    """An ordered dict of figures; `total_cores` enables the offered load, `bandwidth` (a node's link to the
    file system, bytes/s) the count of jobs whose cold load does not fit in their walltime beside their run
    time: under the paper's walltime rule every scheduler kills those unless it finds their file in memory."""
    submit = table["submit"].to_numpy(dtype=np.float64)
    period = table.attrs.get("provenance", {}).get("period")
    if period is None and len(submit):
        period = [float(submit.min()), float(submit.max())]
    stats = {"jobs": int(len(table))}
    if "evaluated" in table:
        stats["evaluated jobs"] = int(table["evaluated"].sum())
    stats["users"] = int(table["user"].nunique())
    if "input_file" in table:
        per_file = table.groupby("input_file", sort=False).size()
        stats["files"] = int(len(per_file))
        stats["jobs per file (mean)"] = round(float(per_file.mean()), 3) if len(per_file) else 0.0
        stats["jobs per file (max)"] = int(per_file.max()) if len(per_file) else 0
        stats["jobs sharing a file"] = int(per_file[per_file > 1].sum())
    if "session" in table:
        stats["sessions"] = int(table["session"].nunique())
    stats["cores per job (mean)"] = round(float(table["cores"].mean()), 3) if len(table) else 0.0
    work = table["cores"].to_numpy(dtype=np.float64) * table["run_time"].to_numpy(dtype=np.float64)
    stats["work (core-hours)"] = round(float(work.sum()) / 3600, 1)
    if period is not None:
        stats["period (s)"] = [round(period[0], 3), round(period[1], 3)]
        length = period[1] - period[0]
        if total_cores and length > 0:
            inside = (submit >= period[0]) & (submit < period[1])
            if "evaluated" in table and "window" in table.attrs.get("provenance", {}):
                inside = table["evaluated"].to_numpy(dtype=bool)
            stats["platform cores"] = int(total_cores)
            stats["offered load"] = round(float(work[inside].sum()) / (total_cores * length), 4)
    if "walltime" in table and len(table):
        accuracy = table["run_time"] / table["walltime"].where(table["walltime"] > 0)
        stats["run time / walltime (mean)"] = round(float(accuracy.mean()), 3)
    if bandwidth and "input_size" in table and len(table):
        jobs = table[table["evaluated"].astype(bool)] if "evaluated" in table else table
        cold = jobs["input_size"].fillna(0).to_numpy(dtype=np.float64) / bandwidth + jobs["run_time"].to_numpy(
            dtype=np.float64)
        over = int((cold > jobs["walltime"].to_numpy(dtype=np.float64)).sum())
        label = "evaluated jobs" if "evaluated" in table else "jobs"
        stats["loads longer than walltime allows"] = (
            f"{over} of {len(jobs)} {label} ({100 * over / len(jobs):.1f} %)" if len(jobs) else "0")
    return stats


def format_stats(stats) -> str:
    width = max(len(k) for k in stats)
    return "\n".join(f"{k + ':':<{width + 1}} {v}" for k, v in stats.items())
