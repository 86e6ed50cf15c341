"""Per-user fairness: normalised user wait time (Klusáček & Rudová; seed-schedulers.md §3).

NUWT_u = Σ waits of the user's jobs / max(1, Σ cores × run time): how many
seconds the user waited per second of computing. Wait = reservation start −
submission (the queue time of analysis/metrics.py). Over ended (killed included) evaluated
jobs; a fair schedule has a narrow spread of NUWT across users.
"""

from __future__ import annotations

import pandas as pd


def nuwt_per_user(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per user: user, jobs, wait, cpu_time, nuwt — sorted by NUWT, then user."""
    done = jobs[jobs["ended"] & jobs["evaluated"]]
    g = pd.DataFrame({"user": done["user"].astype(str), "wait": done["queue_time"].astype(float),
                      "cpu_time": (done["cores"] * done["run_time"]).astype(float)})
    per = g.groupby("user", sort=True).agg(jobs=("wait", "size"), wait=("wait", "sum"), cpu_time=("cpu_time", "sum"))
    per["nuwt"] = per["wait"] / per["cpu_time"].clip(lower=1.0)
    return per.reset_index().sort_values(["nuwt", "user"], kind="stable").reset_index(drop=True)


def nuwt_summary(per_user: pd.DataFrame) -> dict:
    """Mean, population standard deviation (the spread) and maximum of the users' NUWT."""
    n = per_user["nuwt"]
    return {"users": int(len(n)), "nuwt_mean": float(n.mean()) if len(n) else float("nan"),
            "nuwt_std": float(n.std(ddof=0)) if len(n) else float("nan"),
            "nuwt_max": float(n.max()) if len(n) else float("nan")}
