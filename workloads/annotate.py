"""Give every job an input file (paper, V-B), and optionally a user session.

Two grouping rules, both keyed by (user, cores) by default:
- `paper`: the paper's wording. A group opens at a job and covers an
  `window`-second frame from that job's submission; every later job with the
  same key submitted in the frame joins it, whatever others submit meanwhile.
- `consecutive`: what the authors' published workloads actually do. A job joins
  the current group only if it is the very next submission after the group's
  previous job (any other submission closes the group) and comes at most
  `window` seconds after that previous job (a sliding window).
Boundaries are inclusive: a gap of exactly `window` seconds still shares.

File size = cores / cores_per_node × node memory: jobs get memory in proportion
to the cores they request (paper, III). When cores are not a grouping key, a
file is as large as its widest job needs. `fit` (given a node bandwidth) caps
that size so that a cold load fits in the time each job reading the file had
to spare in the trace (walltime − run time): the traced job finished within
its walltime, so a file that could not have been loaded in it contradicts the
trace, and under the paper's walltime rule every scheduler kills such a job by
its load alone (a third of KTH-SP2's jobs on Rackham's 0.1 GB/s). Jobs with no
time to spare (no walltime in the trace, or killed at it) do not cap their file.

File ids `f<key values>-<n>` (n counts that key's groups from 0 in submission
order) depend only on that key's own jobs, so adding another user's jobs never
renames a file.
"""

import numpy as np
import pandas as pd

RULES = ("paper", "consecutive")
FILE_SIZES = ("fit", "paper")
# User sessions (paper, V-B): a user's jobs within 5 minutes of the session's first.
SESSION_WINDOW = 300.0


def frame_groups(keys: pd.DataFrame, submit: np.ndarray, window: float) -> np.ndarray:
    """Per-key group index (from 0) under the paper's fixed-frame rule; rows in submission order.

    A group opens at a job and takes every later job of its key submitted at
    most `window` seconds after that opening job (inclusive: a job exactly
    `window` s later still joins); the next job opens a new group. The one
    home of this rule: file sharing (`paper`), workload sessions, and the
    analysis's sessions all use it.
    """
    group = np.zeros(len(submit), dtype=np.int64)
    for rows in keys.groupby(list(keys.columns), sort=False).indices.values():
        times = submit[rows]
        n, anchor = -1, None
        out = np.empty(len(rows), dtype=np.int64)
        for i, t in enumerate(times.tolist()):
            if anchor is None or t - anchor > window:
                n, anchor = n + 1, t
            out[i] = n
        group[rows] = out
    return group


def _consecutive_groups(keys: pd.DataFrame, submit: np.ndarray, window: float) -> np.ndarray:
    """Per-key group index under the authors' next-submission, sliding-window rule."""
    same_key = np.ones(len(submit), dtype=bool)
    for column in keys.columns:
        values = keys[column].to_numpy()
        same_key[1:] &= values[1:] == values[:-1]
    same_key[0] = False
    joins = same_key.copy()
    joins[1:] &= np.diff(submit) <= window
    opens = (~joins).astype(np.int64)
    # Count, per key, how many groups it opened so far: the running group index.
    opened = pd.Series(opens).groupby([keys[c].to_numpy() for c in keys.columns], sort=False).cumsum()
    return opened.to_numpy() - 1


def group_ids(table, rule="paper", window=800.0, keys=("user", "cores"), prefix="f"):
    """A stable group id per job, e.g. 'falice-4-0'. `table` must be in submission order."""
    if rule not in RULES:
        raise ValueError(f"unknown sharing rule {rule!r} (expected {' or '.join(RULES)})")
    if window < 0:
        raise ValueError("sharing window must be >= 0")
    keys = list(keys)
    unknown = [k for k in keys if k not in table]
    if unknown or not keys:
        raise ValueError(f"grouping keys must be job-table columns, not {', '.join(unknown) or 'nothing'}")
    order = np.argsort(table["submit"].to_numpy(), kind="stable")
    sorted_keys = table[keys].iloc[order].reset_index(drop=True)
    submit = table["submit"].to_numpy()[order]
    groups = (frame_groups if rule == "paper" else _consecutive_groups)(sorted_keys, submit, window)
    names = pd.Series(prefix, index=sorted_keys.index, dtype=object)
    for column in keys:
        names = names + sorted_keys[column].astype(str).astype(object) + "-"
    names = names + pd.Series(groups).astype(str).astype(object)
    result = np.empty(len(table), dtype=object)
    result[order] = names.to_numpy()
    return pd.Series(result, index=table.index, dtype=object)


def annotate_files(table, rule="paper", window=800.0, keys=("user", "cores"),
                   cores_per_node=20, node_memory=128e9, fit_bandwidth=None):
    """Add `input_file` and `input_size` (bytes); returns a new table. With `fit_bandwidth` (bytes/s, the
    nodes' link to the file system) sizes are `fit` (module docstring), else the paper's."""
    out = table.copy()
    out["input_file"] = group_ids(out, rule, window, keys, "f")
    files = out.groupby("input_file", sort=False)
    widest = files["cores"].transform("max")
    size = widest.to_numpy(dtype=np.float64) / cores_per_node * node_memory
    sharing = {"rule": rule, "window": window, "keys": keys if isinstance(keys, list) else list(keys),
               "cores_per_node": cores_per_node, "node_memory": node_memory}
    if fit_bandwidth is not None:
        if not fit_bandwidth > 0:
            raise ValueError("the bandwidth that fits files to walltimes must be > 0")
        spare = (out["walltime"] - out["run_time"]).where(lambda t: t > 0)     # NaN: does not cap
        room = (spare * fit_bandwidth).groupby(out["input_file"], sort=False).transform("min")
        capped = np.fmin(size, room.to_numpy(dtype=np.float64))
        sharing.update(file_size="fit", bandwidth=fit_bandwidth, capped=int((capped < size).sum()))
        size = capped
    out["input_size"] = size
    out.attrs = dict(table.attrs)
    out.attrs["provenance"] = {**table.attrs.get("provenance", {}), "sharing": sharing}
    return out


def annotate_sessions(table, window=SESSION_WINDOW):
    """Add `session`: a user's jobs at most `window` s after the session's first job (paper, V-B)."""
    out = table.copy()
    out["session"] = group_ids(out, "paper", window, ("user",), "s")
    out.attrs = dict(table.attrs)
    out.attrs["provenance"] = {**table.attrs.get("provenance", {}), "sessions": {"window": window}}
    return out


def add_overhead(table, seconds):
    """Add a fixed cost to every job's run time and walltime (the authors used 120 s).

    The walltime grows too: the overhead stands for work that the real job did
    inside its requested time, so it must not turn into kills.
    """
    if seconds < 0:
        raise ValueError("overhead must be >= 0")
    out = table.copy()
    out["run_time"] = out["run_time"] + seconds
    out["walltime"] = out["walltime"] + seconds
    out.attrs = dict(table.attrs)
    out.attrs["provenance"] = {**table.attrs.get("provenance", {}), "overhead": seconds}
    return out
