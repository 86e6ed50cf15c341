"""The staging proxy's own cost, shown beside the staged runs' numbers so that they are read with it.

The proxy (adapters/) gives a file-unaware scheduler the same loads as
batloc's policies, by its own rule: a job's file is loaded into the memory
of every node of its allocation before the job starts, and a job whose file
does not fit there next to the files in use waits, holding its cores, until
it fits on all its nodes at once. Stock schedulers allocate the lowest free
resource ids, so a job often spans two nodes: it loads its file twice and
waits for room on both. Those waits are the proxy's rule meeting a
node-unaware scheduler, not the scheduler's file-unawareness; the report
counts them (metrics: `nodes`, `memory_wait`), and the proxy's `--one-node`
(robin: `one-node: true`) keeps an allocation that fits one node there.
"""

from __future__ import annotations

from .tables import HOUR, Column, frame, to_html

RULE = ("The staging proxy loads a job's file into the memory of every node its scheduler allocated it "
        "before the job starts, and a job whose file does not fit there next to the files in use waits for "
        "room, holding its cores, until it fits on all its nodes at once (first come first served per node; "
        "counted as file wait). Stock schedulers take the lowest free resource ids whatever the nodes, so a job "
        "may span two nodes: it then loads its file on each and waits for room on each. These waits are the "
        "proxy's rule meeting a node-unaware scheduler, not the price of ignoring files: read the staged runs' "
        "waits and core-hours with them. A run staged with <code>one-node: true</code> (the proxy's "
        "<code>--one-node</code>, a stated deviation) moves an allocation that fits one node onto a node with "
        "the cores free at that instant, which separates the two costs.")

COLUMNS = [
    Column("jobs_multi_node", "jobs spanning nodes", integer=True),
    Column("multi_node_pct", "spanning nodes (% of evaluated)"),
    Column("memory_waits", "jobs that waited for room in memory", integer=True),
    Column("memory_waits_multi_node", "of them spanning nodes", integer=True),
    Column("total_memory_wait", "wait for room, total (h)", 1 / HOUR),
    Column("max_memory_wait", "longest wait for room (h)", 1 / HOUR),
]


def html_section(results) -> str:
    staged = [r for r in results if r.staged]
    if not staged:
        return ""
    rows = []
    for r in staged:
        s = dict(r.summary)
        n = s.get("jobs_evaluated") or 0
        s["multi_node_pct"] = 100.0 * s.get("jobs_multi_node", 0) / n if n else float("nan")
        sched = (r.meta or {}).get("scheduler") or {}
        rows.append({**s, "run": r.name, "one node": "yes" if sched.get("one_node") else "no"})
    table = frame(rows, COLUMNS, [("run", "run"), ("one node", "one-node option")])
    return ("<h2>The staging proxy's cost (staged runs)</h2>"
            f"<p class='note'>{RULE}</p>" + to_html(table, keep=1))
