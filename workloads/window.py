"""Cut an evaluation window with context around it (paper, Fig. 1).

Jobs submitted in [start − before, start + length + after) are kept so that
the platform is in steady state when the evaluated jobs arrive; only those
submitted in [start, start + length) are marked `evaluated`. Times are then
shifted so that t = 1 s is the opening of the context period: the workload
starts near 0 but no job is submitted at t = 0, where pybatsim's stock
schedulers fail (docs/contract.md §4b). The original time base stays in
provenance.
"""

import numpy as np

# Seconds between t = 0 and the first possible submission.
LEAD_IN = 1.0


def extract_window(table, start, length, before=0.0, after=0.0):
    """Return the windowed table (a copy) with `evaluated` set and times shifted."""
    if length <= 0:
        raise ValueError("window length must be > 0")
    if before < 0 or after < 0:
        raise ValueError("context durations must be >= 0")
    submit = table["submit"].to_numpy()
    low, high = start - before, start + length + after
    out = table.loc[(submit >= low) & (submit < high)].copy()
    kept = out["submit"].to_numpy()
    out["evaluated"] = (kept >= start) & (kept < start + length)
    origin = low - LEAD_IN
    out["submit"] = kept - origin
    out = out.reset_index(drop=True)
    epoch = table.attrs.get("epoch")
    previous = table.attrs.get("provenance", {})
    window = {
        "trace_start": start, "length": length, "before": before, "after": after,
        "origin": origin + _origin(previous),
        "origin_unix": None if epoch is None else epoch + origin,
        "evaluated": [before + LEAD_IN, before + LEAD_IN + length],
        "jobs": int(len(out)), "evaluated_jobs": int(np.count_nonzero(out["evaluated"])),
    }
    out.attrs = {"epoch": None if epoch is None else epoch + origin,
                 "provenance": {**previous, "window": window, "period": window["evaluated"]}}
    return out


def _origin(provenance) -> float:
    """The original trace's time of this table's t = 0 (a window or a lead-in moved it)."""
    for step in ("window", "lead_in"):
        if provenance.get(step, {}).get("origin") is not None:
            return provenance[step]["origin"]
    return 0.0


def lead_in(table):
    """Shift every submission LEAD_IN s later when one would come before LEAD_IN (a copy).

    For conversions without a window: stock pybatsim schedulers fail on a job
    submitted at t = 0 (docs/contract.md §4b), and traces often start there.
    The epoch moves with the times, so dates still name the same instants.
    """
    if not len(table) or table["submit"].min() >= LEAD_IN:
        return table
    out = table.copy()
    out["submit"] = out["submit"] + LEAD_IN
    epoch = table.attrs.get("epoch")
    previous = table.attrs.get("provenance", {})
    out.attrs = {**table.attrs, "epoch": None if epoch is None else epoch - LEAD_IN,
                 "provenance": {**previous, "lead_in": {"shift": LEAD_IN, "origin": _origin(previous) - LEAD_IN}}}
    return out
