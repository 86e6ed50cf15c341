"""How long the README's two commands take on this machine from scratch: `python3 benchmarks/fresh_install.py`.

Each command runs in its own clean clone of this repository's HEAD (commit
first: uncommitted changes are not measured), in a new virtualenv, with an
empty pip cache (PIP_CACHE_DIR) and empty batloc caches (XDG_CACHE_HOME: the
SimGrid wheel and the planning core's compile; BATLOC_NUMBA_CACHE and
BATLOC_SIMGRID_CACHE unset), as a new user runs them:

    bash scripts/install.sh && batloc demo            (the README's first command; target <= 12 min)
    bash scripts/install.sh && python3 -m pytest -q   (the second, what CI runs; target <= 25 min)

Prints a table: wall and CPU time (of every process the command started) of
each command and of its steps as install.sh and the demo say them, the load
average before and after (other work on the machine slows the wall time, not
the CPU), and the log's path. Exits 1 if a command fails. Not a test: the
first command compiles SimGrid and the planning core (about 15 CPU-minutes).

    python3 benchmarks/fresh_install.py [--only first|second] [--keep DIR]
    python3 benchmarks/fresh_install.py --wheel [--keep DIR]

`--wheel` measures the wheel route of docs/install.md instead: batloc's
wheel (`pip wheel --no-deps .`) and the lines of its `wheel-install` block
run word for word in an empty folder (pip compiles SimGrid from PyPI itself).
Needs network access to PyPI, and cmake, g++ and the Boost headers (or root,
for install.sh to install them).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "first": "bash scripts/install.sh && batloc demo",
    "second": "bash scripts/install.sh && python3 -m pytest -q",
}
TARGETS = {"first": 12 * 60, "second": 25 * 60}
# the steps in the log: (row, the line that starts it, the line that ends it); None: the command's start or end
STEPS = [
    ("SimGrid's compile (in the background)", r"SimGrid 4\.1 is compiled", r"SimGrid: built in"),
    ("pip: batloc's dependencies", r"installing batloc's dependencies",
     r"compiling the planning core|planning core compiled|batloc install: ok"),
    ("the planning core's compile", r"compiling the planning core once", r"planning core compiled in"),
    ("install.sh, all", None, r"batloc install: ok"),
    ("what follows it (the demo, or the tests)", r"batloc install: ok", None),
]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def fresh_env(work: Path) -> dict:
    """The environment of a new user's shell with a new virtualenv activated and empty caches."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PIP_CONSTRAINT", "BATLOC_NUMBA_CACHE", "BATLOC_SIMGRID_CACHE")}
    outer = os.environ.get("VIRTUAL_ENV")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not (outer and p.startswith(outer))]
    env["PATH"] = os.pathsep.join([str(work / "venv" / "bin")] + path)
    env["VIRTUAL_ENV"] = str(work / "venv")
    env["PIP_CACHE_DIR"] = str(work / "empty-pip-cache")
    env["XDG_CACHE_HOME"] = str(work / "empty-cache")
    return env


def timed_lines(text: str) -> list[tuple[float, str]]:
    """The log's lines, each after the stamp the runner put before it."""
    out = []
    for line in text.splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            out.append((float(stamp), rest))
        except ValueError:
            continue
    return out


def step_rows(lines, t0, end):
    rows = []
    for label, start, stop in STEPS:
        a = t0 if start is None else next((t for t, line in lines if re.search(start, line)), None)
        if a is None:
            continue
        b = end if stop is None else next((t for t, line in lines if t >= a and re.search(stop, line)), None)
        if b is not None:
            rows.append((f"  {label}", b - a))
    return rows


def run_command(name: str, work: Path) -> tuple[int, list]:
    """Clones, makes the virtualenv and runs the README's command `name` in `work`; returns (exit status, rows)."""
    work.mkdir(parents=True)
    clone = work / "batloc"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    base = getattr(sys, "_base_executable", sys.executable)
    env = fresh_env(work)
    load_before = load()
    cpu0, t0 = children_cpu(), time.time()
    subprocess.run([base, "-m", "venv", str(work / "venv")], check=True, env=env)
    # every line stamped with the time it came, so that the steps can be timed from the log
    stamp = "while IFS= read -r line; do printf '%s %s\\n' \"$(date +%s.%N)\" \"$line\"; done"
    script = f"set -o pipefail; ( {COMMANDS[name]} ) 2>&1 | {stamp}"
    print(f"fresh_install: {name}: `{COMMANDS[name]}` in {clone} (load average {load_before})", flush=True)
    proc = subprocess.run(["bash", "-c", script], cwd=clone, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    wall, cpu = time.time() - t0, children_cpu() - cpu0
    (work / "log.txt").write_text(proc.stdout)
    lines = timed_lines(proc.stdout)
    rows = [(f"{COMMANDS[name]} (venv included)", wall, cpu, proc.returncode)]
    rows += [(label, seconds, None, None) for label, seconds in step_rows(lines, t0, t0 + wall)]
    rows.append((f"  load average before / after: {load_before} / {load()}", None, None, None))
    return proc.returncode, rows


def fresh(args) -> int:
    work = args.keep or Path(tempfile.mkdtemp(prefix="batloc-fresh-"))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        raise SystemExit(f"fresh_install: {work} is not empty")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    print(f"fresh_install: {time.strftime('%Y-%m-%d %H:%M')}, commit {head}, {os.cpu_count()} cores", flush=True)
    status, table = 0, []
    for name in (["first", "second"] if args.only is None else [args.only]):
        code, rows = run_command(name, work / name)
        status = status or code
        table += rows
        target = "≤" if rows[0][1] <= TARGETS[name] else ">"
        table.append((f"  target {TARGETS[name] // 60} min: {'met' if code == 0 and target == '≤' else 'missed'}",
                      None, None, None))
    print(f"\n{'command / step':<72} {'wall (s)':>9} {'CPU (s)':>8} {'exit':>5}")
    for label, wall, cpu, code in table:
        cells = [f"{wall:>9.0f}" if wall is not None else " " * 9, f"{cpu:>8.0f}" if cpu is not None else " " * 8,
                 f"{code:>5}" if code is not None else ""]
        print(f"{label:<72} {' '.join(cells)}")
    print(f"logs: {work}/*/log.txt")
    return 1 if status else 0


def readme_lines() -> list[str]:
    text = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"<!-- wheel-install[^>]*-->\n(.*?)<!-- /wheel-install -->", text, flags=re.S)
    if block is None:
        raise SystemExit("fresh_install: docs/install.md has no wheel-install block")
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def wheel_route(args) -> int:
    """docs/install.md's wheel-install lines, word for word, in an empty folder with an empty pip cache."""
    work = args.keep or Path(tempfile.mkdtemp(prefix="batloc-fresh-"))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        raise SystemExit(f"fresh_install: {work} is not empty")
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], check=True)
    wheel = next(dist.glob("batloc-*.whl"))
    here = work / "machine"
    here.mkdir()
    shutil.copy(wheel, here / wheel.name)
    env = fresh_env(work)
    del env["VIRTUAL_ENV"]    # the README's first line makes and activates its own
    env["PATH"] = env["PATH"].split(os.pathsep, 1)[1]
    lines = readme_lines()
    # one bash, so that the virtualenv the first line activates and the folder the last enters hold for the next
    script = "set -e\n" + "".join(f"echo '@@ line {i}'; date +%s.%N\n{line}\n" for i, line in enumerate(lines))
    script += "echo '@@ end'; date +%s.%N\n"
    print(f"fresh_install: {wheel.name} in {here}, empty pip cache {env['PIP_CACHE_DIR']}", flush=True)
    cpu0, t0 = children_cpu(), time.time()
    proc = subprocess.run(["bash", "-c", script], cwd=here, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    cpu = children_cpu() - cpu0
    (work / "log.txt").write_text(proc.stdout)
    marks = re.findall(r"@@ (line \d+|end)\n([0-9.]+)", proc.stdout)
    print(f"{'docs/install.md line':<60} {'wall (s)':>9}")
    for (name, start), (_, end) in zip(marks, marks[1:]):
        i = int(name.split()[1])
        shown = lines[i] if len(lines[i]) <= 58 else lines[i][:55] + "..."
        print(f"{shown:<60} {float(end) - float(start):>9.0f}")
    if len(marks) <= len(lines):   # the line after the last mark failed
        i = len(marks) - 1
        print(f"{lines[i][:58]:<60} {'failed':>9}")
    print(f"{'all (CPU of every process, s)':<60} {cpu:>9.0f}")
    print(f"{'all (wall, s)':<60} {time.time() - t0:>9.0f}")
    print(f"log: {work / 'log.txt'}")
    return 0 if proc.returncode == 0 else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(COMMANDS), help="run one of the two commands (default: both)")
    ap.add_argument("--wheel", action="store_true", help="measure docs/install.md's wheel-install lines instead")
    ap.add_argument("--keep", type=Path, help="work in this (new) folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    return wheel_route(args) if args.wheel else fresh(args)


if __name__ == "__main__":
    sys.exit(main())
