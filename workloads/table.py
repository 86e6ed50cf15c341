"""The job table every adapter produces, and the steps all of them share.

One row per single-node job: `id` (int), `source_id` (the trace's job id,
a string; None for synthetic jobs), `line` (source line), `user` (str), `submit`, `walltime`, `run_time`
(seconds, float), `cores` (int). Times are relative to `attrs["epoch"]`
(Unix time of t = 0, or None when the trace does not say). Later steps add
`input_file`, `input_size`, `session`, `evaluated`.
"""

import re

import numpy as np
import pandas as pd

BASE_COLUMNS = ["id", "source_id", "line", "user", "submit", "cores", "walltime", "run_time"]


def build(columns: dict, provenance: dict, epoch=None) -> pd.DataFrame:
    """Turn parsed column lists into a table sorted by submission (ties: source line)."""
    table = pd.DataFrame({
        "source_id": pd.Series(columns["source_id"], dtype=object),
        "line": np.asarray(columns["line"], dtype=np.int64),
        "user": pd.Series(columns["user"], dtype=object),
        "submit": np.asarray(columns["submit"], dtype=np.float64),
        "cores": np.asarray(columns["cores"], dtype=np.int64),
        "walltime": np.asarray(columns["walltime"], dtype=np.float64),
        "run_time": np.asarray(columns["run_time"], dtype=np.float64),
    })
    for name, values in columns.items():
        if name not in table:
            table[name] = pd.Series(values, dtype=object) if values and isinstance(values[0], str) else values
    table = table.sort_values(["submit", "line"], kind="stable").reset_index(drop=True)
    table.insert(0, "id", np.arange(1, len(table) + 1, dtype=np.int64))
    table.attrs = {"epoch": epoch, "provenance": provenance}
    return table


def split_wide_jobs(table: pd.DataFrame, cores_per_node: int) -> pd.DataFrame:
    """Replace each job wider than a node by single-node jobs with the same total work (paper, V-B).

    A job of c cores becomes c // n jobs of n cores plus one of c % n cores, all
    with the job's run time and walltime: as many single-node jobs as necessary.
    Ids are renumbered in submission order; `source_id` keeps the link.
    """
    if cores_per_node < 1:
        raise ValueError("cores per node must be >= 1")
    cores = table["cores"].to_numpy()
    pieces = -(-cores // cores_per_node)
    split = int((pieces > 1).sum())
    attrs = dict(table.attrs)
    if split:
        index = np.repeat(np.arange(len(table)), pieces)
        first = np.repeat(np.cumsum(pieces) - pieces, pieces)
        piece = np.arange(len(index)) - first
        remaining = cores[index] - piece * cores_per_node
        table = table.iloc[index].reset_index(drop=True)
        table["cores"] = np.minimum(remaining, cores_per_node).astype(np.int64)
        table["id"] = np.arange(1, len(table) + 1, dtype=np.int64)
    table.attrs = attrs
    table.attrs["provenance"] = {**attrs.get("provenance", {}),
                                 "split": {"cores_per_node": cores_per_node, "jobs_split": split}}
    return table


# Contract §5: stock schedulers need integer-like ids; a canonical decimal that fits an int64.
_INTEGER_LIKE = re.compile(r"0|[1-9][0-9]{0,17}")


def source_ids_as_ids(table: pd.DataFrame) -> pd.DataFrame:
    """Use the trace's job numbers as ids where they stay unique and integer-like, as Batsim's converter does.

    Otherwise (a job split into several, array-job ids like 107_3, ...) ids stay
    1…n in submission order; `source_id` keeps the link either way, and
    provenance says which was chosen.
    """
    source = table["source_id"].astype(str)
    usable = len(table) > 0 and source.is_unique and all(_INTEGER_LIKE.fullmatch(s) for s in source)
    out = table.copy()
    out.attrs = dict(table.attrs)
    if usable:
        out["id"] = source.astype(np.int64).to_numpy()
    why = ("the trace's job numbers" if usable else
           "1..n in submission order: the trace's job ids are not unique, integer-like ids")
    out.attrs["provenance"] = {**table.attrs.get("provenance", {}), "ids": why}
    return out
