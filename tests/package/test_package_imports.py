"""batloc's modules import one way: no circle anywhere in the tree, counting the imports made
inside functions too (a delayed import only hides a circle until the day it runs first), and
no scheduler family imports an entry file of schedulers/ (those are pybatsim's to load).

Read from the source with `ast`, nothing imported: a module `a.b.c` importing `x.y` depends on
`x.y` and its packages; a package's own modules do not count as depending on it.
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOT_BATLOC = {"tests", "benchmarks", "build", "scripts", "nix", "docs", "out", "runs", "dist", "batloc-demo"}
# the top level of schedulers/ that is shared plumbing, not an entry file
SHARED = {"__init__", "base", "boundary", "admission", "dispatch", "link", "loading", "workflows"}


def _modules():
    mods = {}
    for path in REPO.rglob("*.py"):
        rel = path.relative_to(REPO)
        if rel.parts[0] in NOT_BATLOC or rel.parts[0].startswith(".") or rel == Path("setup.py"):
            continue
        parts = ["batloc", *rel.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imported(name, path, tree, mods):
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                dep = ".".join(parts[:i])
                if dep in mods and dep != name and not name.startswith(dep + "."):
                    yield dep


def _graph():
    mods = _modules()
    return {name: set(_imported(name, path, ast.parse(path.read_text(), str(path)), mods))
            for name, path in mods.items()}


def _circles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, deps = work[-1]
            for w in deps:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_the_finder_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_counts_imports_inside_functions():
    graph = _graph()
    assert len(graph) > 150
    # batloc.robin.sweep imports robin.kernel at the top and the report's builder inside a function
    assert "batloc.robin.kernel" in graph["batloc.robin.sweep"]
    assert "batloc.analysis.report" in graph["batloc.robin.sweep"]


def test_no_import_circle_in_the_tree():
    assert _circles(_graph()) == []


def test_no_scheduler_family_imports_an_entry_file():
    graph = _graph()
    entries = {f"batloc.schedulers.{p.stem}" for p in (REPO / "schedulers").glob("*.py") if p.stem not in SHARED}
    assert {"batloc.schedulers.lea", "batloc.schedulers.cons_tabu"} <= entries
    families = {name for name in graph if name.count(".") >= 3 and name.startswith("batloc.schedulers.")}
    assert "batloc.schedulers.planning.planner" in families
    wrong = {name: sorted(graph[name] & entries) for name in families if graph[name] & entries}
    assert wrong == {}


# docs/architecture.md's layers: a package imports only from its own layer or the ones before it
LAYERS = {"outputs": 0, "reading": 0, "locality": 0, "platforms": 0, "processes": 0, "command": 0, "shipped": 0,
          "workloads": 1, "engine": 1, "schedulers": 1, "adapters": 1,
          "analysis": 2,
          "robin": 3, "study": 3, "cli": 3, "testing": 3, "api": 3}


def test_a_package_imports_only_its_layer_or_the_ones_below():
    # the engine's in-process mode once loaded its scheduler through cli.scheduler and robin.pybatsim_launcher
    graph = _graph()
    packages = {name.split(".")[1] for name in graph if name.count(".") >= 1}
    assert packages <= set(LAYERS) | {"setup"}, packages - set(LAYERS)
    upward = sorted((name, dep) for name, deps in graph.items() for dep in deps
                    if name.count(".") and dep.count(".")
                    and LAYERS.get(dep.split(".")[1], 0) > LAYERS.get(name.split(".")[1], 0))
    assert upward == []
