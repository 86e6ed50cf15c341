"""docs/reproduction.md's study figures, regenerated: each setup's `batloc study paper`, then its blocks rewritten.

    python benchmarks/reproduction.py                       # the default setups (2 weeks, both walltime rules)
    python benchmarks/reproduction.py --setups all          # every setup of the document (hours on 2 cores)
    python benchmarks/reproduction.py --setups default --out out/reproduction --no-run   # rewrite from outputs

Each setup runs `batloc study paper` into OUT/<setup>/ (complete runs are kept,
so a second call only rewrites), reads its report's comparison and writes
OUT/<setup>/figures.json. Then every block of docs/reproduction.md between
`<!-- reproduction.py: NAME -->` and `<!-- /reproduction.py -->` whose setups all
have figures is rewritten; the others are left as they are, and named.
The trace is `$BATLOC_TRACES`/, else ../shared/data/traces/ beside the checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reproduction.md"
KTH, SDSC = "KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz"
LOAD_FREE = '{"walltime_includes_load": false}'

# setup -> (what it changes, trace, extra arguments of batloc study paper)
SETUPS = {
    "default": ("paper's rules (default)", KTH, []),
    "default-load-free": ("the load not counted against the walltime", KTH, ["--options", LOAD_FREE]),
    "period30": ("`scheduling_period: 30`", KTH, ["--options", '{"scheduling_period": 30}']),
    "lru": ("`cache: lru`", KTH, ["--options", '{"cache": "lru"}']),
    "sdsc": ("SDSC-SP2 instead of KTH-SP2 (2 other weeks, 7 nodes)", SDSC, []),
    "full": ("paper's rules, 12 weeks (`--full`)", KTH, ["--full"]),
    "full-load-free": ("12 weeks, the load not counted against the walltime", KTH, ["--full", "--options", LOAD_FREE]),
}
DEFAULT_SETUPS = ("default", "default-load-free")
VARIANTS = ("eft", "lea", "leo", "lem")


def traces() -> Path:
    return Path(os.environ.get("BATLOC_TRACES") or ROOT.parent / "shared" / "data" / "traces")


def run_setup(name: str, out: Path) -> None:
    _, trace, extra = SETUPS[name]
    cmd = [sys.executable, "-m", "batloc.cli.main", "study", "paper", "--trace", str(traces() / trace),
           "-o", str(out / name), "-q", *extra]
    t0 = time.monotonic()
    code = subprocess.run(cmd).returncode
    if code not in (0, 1):
        raise SystemExit(f"reproduction: setup {name} stopped (exit {code})")
    (out / name / "wall.json").write_text(json.dumps({"seconds": time.monotonic() - t0}))


def figures(name: str, out: Path) -> dict:
    """The setup's figures from its outputs: Table II/III rows, sessions, kills, verdicts."""
    from batloc.analysis.report import build_report
    from batloc.study import note
    from batloc.study.description import load
    from batloc.study.prepare import prepare

    folder = out / name
    report = build_report(folder, log=lambda m: None)
    comp = report.comparison

    def row(table, cols):
        return {c: (None if table.empty or c not in table.columns else float(table.loc["all", c])) for c in cols}

    sess = note.sessions_table(comp).set_index("scheduler")
    _, trace, extra = SETUPS[name]
    study = load(None, "--full" in extra, {"trace": str(traces() / trace), "output-dir": str(folder)})
    prepared = prepare(study, log=lambda m: None)
    _, kills = note.kills_table(report.results)
    wall = json.loads((folder / "wall.json").read_text())["seconds"] if (folder / "wall.json").exists() else None
    data = {
        "weeks": [w.label for w in prepared.weeks],
        "table2": row(comp.transfer_table, VARIANTS + tuple(v + "-bf" for v in VARIANTS)),
        "table3": row(comp.core_time_table, VARIANTS),
        "sessions": {s: {"faster": float(sess.loc[s, "faster %"]), "slower": float(sess.loc[s, "slower %"])}
                     for s in sess.index},
        "kills": {s: {k: v for k, v in t.items() if k != "rule"} for s, t in kills.items()},
        "verdicts": note.verdicts(comp, prepared),
        "wall_minutes": None if wall is None else wall / 60,
    }
    (folder / "figures.json").write_text(json.dumps(data, indent=1))
    return data


def _pct(v, digits=1) -> str:
    if v is None:
        return "–"
    text = f"{v:.{digits}f}"
    return ("0." + "0" * digits if float(text) == 0 else text).replace("-", "−") + " %"


def block_table2(data: dict) -> str:
    rows = ["| file-wait reduction vs FCFS | EFT | LEA | LEO | LEM |", "|---|---|---|---|---|",
            "| paper (12 Rackham weeks, ~2 M jobs) | 0.9 % | 17.1 % | 0.9 % | 7.1 % |"]
    for name in ("full", "default", "full-load-free", "default-load-free"):
        if name in data:
            rows.append(f"| batloc, {SETUPS[name][0]} | " + " | ".join(_pct(data[name]["table2"][v]) for v in VARIANTS)
                        + " |")
    return "\n".join(rows)


def block_kills(data: dict) -> str:
    names = [n for n in ("default", "default-load-free", "full", "full-load-free") if n in data]
    order = {v: i for i, v in enumerate(("fcfs",) + VARIANTS)}
    variants = sorted(data[names[0]]["kills"], key=lambda v: (v.endswith("-bf"), order.get(v.removesuffix("-bf"), 9), v))
    head = "| variant | " + " | ".join(f"{SETUPS[n][0]}: killed (by their load)" for n in names) + " |"
    rows = [head, "|---|" + "---|" * len(names)]
    for v in variants:
        cells = []
        for n in names:
            k = data[n]["kills"].get(v)
            ev = max(1, k["evaluated"]) if k else 1
            cells.append("–" if k is None else
                         f"{100 * k['killed'] / ev:.1f} % ({100 * k['by_load'] / ev:.1f} %)")
        rows.append(f"| {v.upper()} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def block_verdicts(data: dict) -> str:
    return "\n".join(f"- **{table}**: {text}" for table, text in data["default"]["verdicts"])


def block_setups(data: dict) -> str:
    rows = ["| setup, 2 weeks | EFT | LEA | LEO | LEM | LEA sessions faster / slower | wall time |",
            "|---|---|---|---|---|---|---|"]
    for name in ("default", "default-load-free", "period30", "lru", "sdsc"):
        if name not in data:
            continue
        d = data[name]
        lea = d["sessions"].get("lea", {})
        wall = f"{d['wall_minutes']:.1f} min" if d.get("wall_minutes") else "–"
        rows.append(f"| {SETUPS[name][0]} | " + " | ".join(_pct(d["table2"][v]) for v in VARIANTS)
                    + f" | {lea.get('faster', float('nan')):.1f} % / {lea.get('slower', float('nan')):.1f} % | {wall} |")
    return "\n".join(rows)


BLOCKS = {   # name -> (setups it needs, renderer)
    "table2": (("default",), block_table2),
    "kills": (("default",), block_kills),
    "verdicts": (("default",), block_verdicts),
    "setups-2w": (("default",), block_setups),
}


def rewrite(data: dict) -> list[str]:
    text = DOC.read_text()
    left = []
    for name, (needs, render) in BLOCKS.items():
        pattern = re.compile(rf"(<!-- reproduction.py: {re.escape(name)} -->\n)(.*?)(<!-- /reproduction.py -->)", re.S)
        if not pattern.search(text):
            left.append(f"{name} (no such block)")
            continue
        if not all(n in data for n in needs):
            left.append(f"{name} (needs {', '.join(needs)})")
            continue
        stamp = f"*Generated by `benchmarks/reproduction.py` on {time.strftime('%Y-%m-%d')}.*\n\n"
        text = pattern.sub(lambda m: m.group(1) + stamp + render(data) + "\n" + m.group(3), text)
    DOC.write_text(text)
    return left


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setups", default=",".join(DEFAULT_SETUPS), help=f"comma-separated, or all ({', '.join(SETUPS)})")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "reproduction")
    ap.add_argument("--no-run", action="store_true", help="only read the setups' outputs and rewrite the document")
    args = ap.parse_args(argv)
    names = list(SETUPS) if args.setups == "all" else [s for s in args.setups.split(",") if s]
    unknown = [n for n in names if n not in SETUPS]
    if unknown:
        raise SystemExit(f"reproduction: unknown setup(s) {unknown}; known: {', '.join(SETUPS)}")
    data = {}
    for name in SETUPS:
        folder = args.out / name
        if name in names:
            if not args.no_run:
                run_setup(name, args.out)
            data[name] = figures(name, args.out)
        elif (folder / "figures.json").exists():
            data[name] = json.loads((folder / "figures.json").read_text())
    left = rewrite(data)
    print(f"reproduction: {DOC} rewritten from {', '.join(data)}"
          + (f"; left as they were: {'; '.join(left)}" if left else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
