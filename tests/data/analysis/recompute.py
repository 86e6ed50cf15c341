"""Independent recomputation of run totals from the raw CSVs (csv module only), for tests.

Deliberately shares no code with batloc.analysis: it re-derives, per
evaluated job, load time (own staging duration for `miss`, time from cores
held to the staging's end for `wait`) and core time (cores × (finish − cores held)).
"""
import csv
import json
from pathlib import Path


def totals(run_dir: Path, workload: Path) -> dict:
    evaluated = {str(j["id"]) for j in json.loads(Path(workload).read_text())["jobs"] if j.get("evaluated", True)}
    rows = {}
    with open(Path(run_dir) / "out_jobs.csv") as f:
        for r in csv.DictReader(f):
            rows[f"{r['workload_name']}!{r['job_id']}"] = r
    decisions = {}
    if (Path(run_dir) / "out_decisions.csv").exists():
        with open(Path(run_dir) / "out_decisions.csv") as f:
            decisions = {r["job_id"]: r for r in csv.DictReader(f)}
    load = core = 0.0
    for jid in evaluated:
        r = rows.get(f"w0!{jid}")
        if r is None or r["starting_time"] == "":
            continue
        d = decisions.get(f"w0!{jid}")
        held_from = float(d["time"]) if d else float(r["starting_time"])
        core += float(r["requested_number_of_resources"]) * (float(r["finish_time"]) - held_from)
        if d and d["cache"] in ("miss", "wait"):
            st = rows[d["staging_job"]]
            if d["cache"] == "miss":
                load += float(st["finish_time"]) - float(st["starting_time"])
            else:
                load += max(0.0, float(st["finish_time"]) - held_from)
    return {"load": load, "core": core}
