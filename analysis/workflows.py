"""Per-workflow metrics of a run (contract §2b), and the workflow's Gantt chart by task.

For each workflow of the workload (the jobs sharing a ``workflow`` field):
- makespan = last task's finish - the workflow's arrival (its roots' submission);
  NaN when a task did not complete;
- critical path = the longest chain of task run times (their delay profiles),
  the makespan on unlimited nodes with free data; critical-path stretch =
  makespan / critical path;
- output reuse = the share of reads of an output (a file a task of the
  workload wrote) served from memory: logged ``hit`` in the decision log,
  on the node where the output was written or where an earlier reader loaded it;
- data moved = bytes the workflow's tasks loaded (from Lustre, and from other
  nodes' memories), and the outputs written back to Lustre by a staging.
Read from the run's jobs.csv, decision log and workload; nothing is re-simulated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from batloc.locality.staging import STAGE_WORKLOAD
from batloc.locality.workflow import DEPENDENT_KEY, job_files, job_outputs, parents

from .load import read_decisions
from .style import plt, save

COLUMNS = ["workflow", "tasks", "completed", "arrival", "finish", "makespan", "critical_path", "cp_stretch",
           "output_reads", "output_hits", "output_reuse", "bytes_from_lustre", "bytes_from_nodes",
           "bytes_written_back", "bytes_moved"]


@dataclass
class WorkflowJobs:
    jobs: dict          # job id -> workload job (dependent ones included)
    delays: dict        # job id -> its run time as profiled (seconds)

    @classmethod
    def read(cls, path):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        jobs = {str(j["id"]): j for j in doc.get("jobs", []) + doc.get(DEPENDENT_KEY, []) if j.get("workflow")}
        profiles = doc.get("profiles", {})
        delays = {jid: float(profiles.get(j["profile"], {}).get("delay", 0.0)) for jid, j in jobs.items()}
        return cls(jobs, delays)


def _file_cases(decisions: pd.DataFrame | None):
    """job id (local) -> {file: (case, staging id)} from the decision log's per-file lists."""
    out = {}
    if decisions is None:
        return out
    for d in decisions.itertuples(index=False):
        files = (d.input_file or "").split(";") if isinstance(d.input_file, str) else []
        cases = (d.cache or "").split(";")
        stagings = (d.staging_job or "").split(";") if isinstance(d.staging_job, str) else []
        local = str(d.job_id).split("!", 1)[-1]
        out[local] = {f: (cases[i] if i < len(cases) else "", stagings[i] if i < len(stagings) else "")
                      for i, f in enumerate(files) if f}
    return out


def critical_path(ids, jobs, delays):
    """The longest chain of run times through the workflow's tasks `ids`."""
    longest = {}
    pending = list(ids)
    while pending:
        nxt = []
        for jid in pending:
            ps = [p for p in parents(jobs[jid]) if p in jobs]
            if all(p in longest for p in ps):
                longest[jid] = delays[jid] + max((longest[p] for p in ps), default=0.0)
            else:
                nxt.append(jid)
        if len(nxt) == len(pending):
            break          # a cycle: the workload's checks refuse it; never loop
        pending = nxt
    return max(longest.values(), default=0.0)


def per_workflow(jobs_csv: pd.DataFrame, decisions: pd.DataFrame | None, wf: WorkflowJobs) -> pd.DataFrame:
    """One row per workflow (COLUMNS)."""
    own = jobs_csv[jobs_csv["workload_name"] != STAGE_WORKLOAD].drop_duplicates("job_id", keep="last")
    own = own.set_index("job_id")
    cases = _file_cases(decisions)
    full_ids = {} if decisions is None else {str(j).split("!", 1)[-1]: str(j) for j in decisions["job_id"]}
    written = {f for j in wf.jobs.values() for f, _ in job_outputs(j)}
    staged_back = set(jobs_csv.loc[jobs_csv["workload_name"] == STAGE_WORKLOAD, "job_id"].astype(str))
    rows = []
    by_wf = {}
    for jid, j in wf.jobs.items():
        by_wf.setdefault(str(j["workflow"]), []).append(jid)
    for name, ids in by_wf.items():
        got = own.reindex(ids)
        arrival = float(min(float(wf.jobs[i]["subtime"]) for i in ids if not parents(wf.jobs[i])))
        done = (got["final_state"] == "COMPLETED_SUCCESSFULLY").to_numpy()
        finish = float(got["finish_time"].max()) if len(got) else np.nan
        makespan = finish - arrival if done.all() else np.nan
        cp = critical_path(ids, wf.jobs, wf.delays)
        reads = hits = 0
        lustre = nodes = back = 0.0
        for i in ids:
            j = wf.jobs[i]
            logged = cases.get(i, {})
            for f, size in job_files(j):
                case, staging = logged.get(f, ("", ""))
                if f in written:
                    reads += 1
                    hits += case == "hit"
                if case == "miss":
                    if "-from-" in staging:
                        nodes += size
                    else:
                        lustre += size
            full = full_ids.get(i, f"w0!{i}").replace("!", "-")
            if any(s.startswith(f"writeback-{full}-") for s in staged_back):
                back += sum(s for _, s in job_outputs(j))
        rows.append({"workflow": name, "tasks": len(ids), "completed": int(done.sum()), "arrival": arrival,
                     "finish": finish, "makespan": makespan, "critical_path": cp,
                     "cp_stretch": makespan / cp if cp > 0 else np.nan, "output_reads": reads, "output_hits": hits,
                     "output_reuse": hits / reads if reads else np.nan, "bytes_from_lustre": lustre,
                     "bytes_from_nodes": nodes, "bytes_written_back": back, "bytes_moved": lustre + nodes + back})
    return pd.DataFrame(rows, columns=COLUMNS)


def gantt(jobs_csv: pd.DataFrame, decisions: pd.DataFrame | None, wf: WorkflowJobs, workflow: str, path,
          title: str = ""):
    """The workflow's tasks, one row each in start order: holding cores while its files load (light),
    computing (by node colour), a star where it read an output from memory (reused)."""
    ids = [jid for jid, j in wf.jobs.items() if str(j["workflow"]) == workflow]
    own = jobs_csv[jobs_csv["workload_name"] != STAGE_WORKLOAD].drop_duplicates("job_id", keep="last")
    own = own.set_index("job_id").reindex(ids).dropna(subset=["starting_time"])
    held = {}
    if decisions is not None:
        for d in decisions.itertuples(index=False):
            held[str(d.job_id).split("!", 1)[-1]] = (float(d.time), str(d.node))
    cases = _file_cases(decisions)
    written = {f for j in wf.jobs.values() for f, _ in job_outputs(j)}
    arrival = min(float(wf.jobs[i]["subtime"]) for i in ids if not parents(wf.jobs[i]))
    own = own.assign(_held=[held.get(i, (s, ""))[0] for i, s in zip(own.index, own["starting_time"])],
                     _node=[held.get(i, (0, "?"))[1] for i in own.index]).sort_values(["_held", "starting_time"])
    nodes = sorted(set(own["_node"]))
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(9.0, max(2.5, 0.22 * len(own) + 1.2)))
    for row, (jid, r) in enumerate(own.iterrows()):
        h, s, f = r["_held"] - arrival, r["starting_time"] - arrival, r["finish_time"] - arrival
        colour = colours(nodes.index(r["_node"]) % 20)
        if s > h:
            ax.barh(row, s - h, left=h, color=colour, alpha=0.3, height=0.7, hatch="///", edgecolor=colour)
        ax.barh(row, f - s, left=s, color=colour, height=0.7)
        reused = [fl for fl, (case, _) in cases.get(jid, {}).items() if fl in written and case == "hit"]
        if reused:
            ax.plot(s, row, marker="*", color="black", markersize=8, zorder=3)
    ax.set_yticks(range(len(own)))
    ax.set_yticklabels([f"{wf.jobs[i].get('task', i)} ({i})" for i in own.index], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"seconds from the workflow's arrival ({arrival:.0f} s)")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(color=colours(i % 20), label=n) for i, n in enumerate(nodes[:8])]
    handles += [Patch(facecolor="white", edgecolor="grey", hatch="///", label="cores held, files loading"),
                Line2D([], [], marker="*", color="black", linestyle="", label="read an output from memory")]
    ax.legend(handles=handles, fontsize=7, loc="lower right", ncol=2, title="node", title_fontsize=7)
    ax.set_title(title or f"workflow {workflow}: tasks by start", fontsize=9)
    fig.tight_layout()
    return save(fig, path)


# ---- in the report -----------------------------------------------------------------

def add_to_run(result, workload_path, jobs_csv, decisions_csv):
    """Attach the run's per-workflow table (``result.workflows``: None for a workload without workflows)."""
    result.workflows = None
    if workload_path is None or not may_hold_workflows(workload_path):
        return
    wf = WorkflowJobs.read(workload_path)
    if not wf.jobs:
        return
    decisions = read_decisions(decisions_csv) if decisions_csv is not None else None
    result.workflows = (per_workflow(jobs_csv, decisions, wf), wf, decisions)


def may_hold_workflows(path):
    """A byte search for the ``workflow`` job field: a workload of a million independent jobs is not parsed again."""
    import mmap
    with open(path, "rb") as fh:
        try:
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(b'"workflow"') >= 0
        except ValueError:
            return False


def report_section(results, raw, fig_dir):
    """(HTML of the workflows section, {key: figure}) for the runs whose workloads hold workflows."""
    import html as _html
    runs = [r for r in results if getattr(r, "workflows", None) is not None]
    if not runs:
        return "", {}
    figs = {}
    out = ["<h2>Workflows (makespan, critical-path stretch, output reuse, data moved)</h2>",
           "<p>Per run, over its workflows: mean and largest makespan (last task's end − arrival), mean "
           "makespan / critical path (the longest chain of task run times), the share of reads of an output served "
           "from memory, and the data the workflows moved: loaded from Lustre, from other nodes' memories, and "
           "written back (GB).</p>",
           "<table><tr><th>run</th><th>workflows</th><th>tasks done</th><th>makespan (h)</th><th>max (h)</th>"
           "<th>CP stretch</th><th>output reuse</th><th>Lustre GB</th><th>nodes GB</th><th>written back GB</th></tr>"]
    for r in runs:
        t = r.workflows[0]
        reads, hits = t["output_reads"].sum(), t["output_hits"].sum()
        out.append(f"<tr><td>{_html.escape(r.name)}</td><td>{len(t)}</td>"
                   f"<td>{int(t['completed'].sum())}/{int(t['tasks'].sum())}</td>"
                   f"<td>{t['makespan'].mean() / 3600:.2f}</td><td>{t['makespan'].max() / 3600:.2f}</td>"
                   f"<td>{t['cp_stretch'].mean():.2f}</td><td>{(hits / reads if reads else float('nan')):.1%}</td>"
                   f"<td>{t['bytes_from_lustre'].sum() / 1e9:.1f}</td><td>{t['bytes_from_nodes'].sum() / 1e9:.1f}</td>"
                   f"<td>{t['bytes_written_back'].sum() / 1e9:.1f}</td></tr>")
    out.append("</table>")
    for r in runs:
        table, wf, decisions = r.workflows
        first = str(table["workflow"].iloc[0])
        slug = "".join(c if c.isalnum() else "_" for c in r.name)
        path = gantt(raw[r.name], decisions, wf, first, fig_dir / f"workflow_gantt_{slug}.png",
                     f"Workflow {first} by task — {r.name}")
        figs[f"workflow:{r.name}"] = path
        out.append(f"<figure><img src='figures/{path.name}' style='max-width:100%'><figcaption>Workflow {first} of "
                   f"run {_html.escape(r.name)}, one row per task in the order it took its cores: hatched while it "
                   "held its cores waiting for its files, solid while computing, coloured by node; a star where the "
                   "task read an output from memory (reused).</figcaption></figure>")
    return "\n".join(out), figs
