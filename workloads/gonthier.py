"""The text format of the workloads Gonthier et al. published with their simulator.

One job per line. Two spellings are read:
- keyed, as the authors' files are written:
  `{ id: 1 subtime: 0 delay: 808260 walltime: 864000 cores: 2 user: mjbit data: 1
  data_size: 12.800000 workload: 1 start_time_from_history: 0 start_node_from_history: 0 }`
  — keys in any order and any case, unknown keys ignored;
- positional: `id subtime delay walltime cores user [data [data_size [workload]]]`.
`delay` is the actual run time; `data` is the input file id and `data_size` its
size in GB; `workload` is the job's phase in the authors' windows (-2 started
before, -1 submitted before, 0 scheduled before the evaluated week, 1 evaluated,
2 after). Files and sizes given here are kept (`input_file`, `input_size`), and
`evaluated` is `workload == 1` when the phase is given.

`at_authors_t0` reads the phases as the authors' simulator does (its R4,
docs/authors-simulator.md): its clock starts at t0, the submission of the
first phase-0 job; jobs submitted by then are submitted at t0; a job running
before t0 (phase -2) has what is left of its run time and walltime then (at
least 1 s) and keeps its node (`start_node_from_history`, 1-based, modulo the
node count) as the job field `history_node` (0-based, platform order).
"""

import pandas as pd

from batloc.reading import excerpt

from .errors import IssueLog, WorkloadError
from .source import is_number, read_lines
from .table import build

REQUIRED = ("id", "subtime", "delay", "walltime", "cores", "user")
POSITIONAL = REQUIRED + ("data", "data_size", "workload")
NUMERIC = ("subtime", "delay", "walltime", "cores", "data_size", "workload", "start_time_from_history",
           "start_node_from_history")
GB = 1e9


def _keyed(tokens):
    record, key = {}, None
    for token in tokens:
        if token in ("{", "}"):
            continue
        if token.endswith(":") and len(token) > 1:
            key = token[:-1].lower()
            record[key] = None  # stays None if the key has no value
        elif key is not None and record[key] is None:
            record[key] = token  # first value only; multi-valued keys are not ours
    return record


def parse_line(text):
    """One line → dict of raw strings (None for a key written without a value)."""
    tokens = text.replace("{", " { ").replace("}", " } ").split()
    if any(t.endswith(":") and len(t) > 1 for t in tokens):
        return _keyed(tokens)
    return dict(zip(POSITIONAL, tokens))


def read_gonthier(path, strict=False):
    """Read the authors' workload format into a job table; returns (table, IssueLog)."""
    log = IssueLog(path, strict)
    names = ("source_id", "line", "user", "submit", "cores", "walltime", "run_time",
             "input_file", "input_size", "phase", "history_start", "history_node")
    cols = {k: [] for k in names}
    has = {"data": 0, "data_size": 0, "workload": 0, "start_time_from_history": 0, "start_node_from_history": 0}
    for number, text in read_lines(path):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        record = parse_line(stripped)
        missing = [k for k in REQUIRED if not record.get(k)]
        if missing:
            log.drop(number, "malformed", f"missing field(s) {', '.join(missing)}")
            continue
        try:
            values = {k: float(record[k]) for k in NUMERIC if record.get(k) is not None}
        except ValueError:
            bad = next(k for k in NUMERIC if record.get(k) is not None and not is_number(record[k]))
            log.drop(number, "malformed", f"{bad} is not a number: {excerpt(record[bad])}")
            continue
        bad = next((k for k in ("subtime", "delay", "walltime", "cores", "data_size")
                    if values.get(k, 0) < 0), None)
        if bad is not None:
            log.drop(number, "malformed", f"negative {bad}: {record[bad]}")
            continue
        if values["delay"] == 0:
            log.drop(number, "zero-length")
            continue
        if values["walltime"] == 0:
            log.drop(number, "malformed", "walltime 0")
            continue
        if values["cores"] < 1 or not values["cores"].is_integer():
            log.drop(number, "malformed", f"cores must be a positive integer: {record['cores']}")
            continue
        for key in has:
            has[key] += record.get(key) is not None
        cols["source_id"].append(record["id"])
        cols["line"].append(number)
        cols["user"].append(record["user"])
        cols["submit"].append(values["subtime"])
        cols["cores"].append(int(values["cores"]))
        cols["walltime"].append(values["walltime"])
        cols["run_time"].append(values["delay"])
        cols["input_file"].append(record.get("data"))
        cols["input_size"].append(values["data_size"] * GB if "data_size" in values else None)
        cols["phase"].append(int(values["workload"]) if "workload" in values else None)
        cols["history_start"].append(values.get("start_time_from_history"))
        node = values.get("start_node_from_history")
        cols["history_node"].append(int(node) if node is not None else None)
    kept = len(cols["line"])
    if not kept:
        raise log.no_jobs("a workload in Gonthier et al.'s format")
    # A column given on only some lines cannot be trusted for the whole workload.
    for key, column in (("data", "input_file"), ("data_size", "input_size"), ("workload", "phase"),
                        ("start_time_from_history", "history_start"), ("start_node_from_history", "history_node")):
        if has[key] != kept:
            if has[key] and key in ("data", "data_size", "workload"):
                log.repair(0, "partial column", f"{excerpt(key)} given on {has[key]} of {kept} jobs; ignored")
            del cols[column]
    table = build(cols, {"source": {"path": str(path), "format": "gonthier"}}, None)
    if "phase" in table:
        table["phase"] = table["phase"].astype("int64")
        table["evaluated"] = table["phase"] == 1
    if "input_size" in table:
        table["input_size"] = table["input_size"].astype("float64")
    return table, log


def at_authors_t0(table, nodes):
    """The table as the authors' simulator starts it (module docstring): times
    from its t0, the jobs running then with their remaining times and their
    ``history_node``; ordered by submission, then source line."""
    if "phase" not in table or "history_start" not in table or "history_node" not in table:
        raise WorkloadError("the authors' t0 needs every job's workload, start_time_from_history and "
                            "start_node_from_history fields")
    day0 = table.loc[table["phase"] == 0].sort_values("line")
    t0 = float(day0["submit"].iloc[0]) if len(day0) else 0.0
    out = table.copy()
    out.attrs = dict(table.attrs)
    running = out["phase"] == -2
    elapsed = t0 - out.loc[running, "history_start"].astype(float)
    out.loc[running, "run_time"] = (out.loc[running, "run_time"] - elapsed).clip(lower=1.0)
    out.loc[running, "walltime"] = (out.loc[running, "walltime"] - elapsed).clip(lower=1.0)
    out["submit"] = (out["submit"] - t0).clip(lower=0.0)
    out.loc[running, "submit"] = 0.0
    history = pd.array([None] * len(out), dtype="Int64")
    history[running.to_numpy()] = (out.loc[running, "history_node"].astype(int) - 1) % nodes
    out["history_node"] = history
    out = out.drop(columns=["history_start"]).sort_values(["submit", "line"], kind="stable").reset_index(drop=True)
    out.attrs["provenance"] = {**table.attrs.get("provenance", {}), "authors_t0": t0}
    return out
