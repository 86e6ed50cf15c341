"""User sessions (paper §V-B): the jobs one user submits within a 5-minute window.

A session opens at a user's first evaluated submission and takes every job
of that user submitted at most SESSION_WINDOW seconds after its opening (a
job exactly 300 s later still joins); the next job opens a new session. The
rule is the workload tools' (`workloads.annotate.frame_groups`), so sessions
computed here and sessions written into a workload agree. Sessions come from
the workload alone, so the same jobs form the same sessions in every run and
can be compared. A workload `session` field, when present, is used as is.
"""

from __future__ import annotations

import pandas as pd

from batloc.workloads.annotate import SESSION_WINDOW, frame_groups


def assign_sessions(workload_jobs: pd.DataFrame, window: float = SESSION_WINDOW) -> pd.Series:
    """Session label per evaluated job (index = job_id); non-evaluated jobs get none."""
    ev = workload_jobs[workload_jobs["evaluated"].astype(bool)]
    if "session" in ev.columns and ev["session"].notna().all():
        labels = (ev["user"].astype(str) + "#" + ev["session"].astype(str)).to_numpy()
        return pd.Series(labels, index=ev["job_id"].to_numpy(), name="session")
    order = ev.sort_values("subtime", kind="stable")
    users = order["user"].astype(str).reset_index(drop=True)
    groups = frame_groups(users.to_frame("user"), order["subtime"].to_numpy(dtype=float), window)
    labels = users + "#" + pd.Series(groups + 1).astype(str)
    return pd.Series(labels.to_numpy(dtype=object), index=order["job_id"].to_numpy(), name="session")


def session_table(jobs_table: pd.DataFrame, sessions: pd.Series) -> pd.DataFrame:
    """Per session: its stretch (sum of its jobs' stretches), job count, start and duration.

    Only sessions whose every job ended (killed ones included) are kept, so that a session's
    stretch sums the same jobs in every run.
    """
    t = jobs_table.set_index("job_id")
    t = t.loc[t.index.intersection(sessions.index)]
    t = t.assign(session=sessions.reindex(t.index).values)
    g = t.groupby("session", sort=True)
    table = pd.DataFrame({
        "user": g["user"].first(),
        "jobs": g.size(),
        "ended": g["ended"].sum(),
        "stretch": g["stretch"].sum(min_count=1),
        "first_submission": g["submission_time"].min(),
        "last_finish": g["finish_time"].max(),
    })
    table["duration"] = table["last_finish"] - table["first_submission"]
    return table[table["ended"] == table["jobs"]].drop(columns="ended")
