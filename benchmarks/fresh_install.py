"""Does the wheel install on a fresh machine as docs/install.md says? Its lines run word for word, timed.

Builds batloc's wheel from this checkout (`pip wheel --no-deps`), puts it in
an empty folder, and runs there, in one bash, the lines of docs/install.md's
`wheel-install` block exactly as written (a new virtualenv, the wheel with
SimGrid compiled from PyPI, pybatsim, then `batloc demo` in an empty folder),
with an empty pip cache (PIP_CACHE_DIR set to a new folder) so that SimGrid is
really compiled. Prints the wall and CPU time of each line and exits 1 if a
line fails. Not a test: the SimGrid compile takes about 12 CPU-minutes.

    python benchmarks/fresh_install.py [--keep DIR]

Needs network access to PyPI, and cmake, g++ and the Boost headers for SimGrid.
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


def readme_lines() -> list[str]:
    text = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"<!-- wheel-install[^>]*-->\n(.*?)<!-- /wheel-install -->", text, flags=re.S)
    if block is None:
        raise SystemExit("fresh_install: docs/install.md has no wheel-install block")
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, help="work in this (new) folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
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
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PIP_CONSTRAINT")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (os.environ.get("VIRTUAL_ENV") and p.startswith(os.environ["VIRTUAL_ENV"])))
    env["PIP_CACHE_DIR"] = str(work / "empty-pip-cache")
    env["BATLOC_NUMBA_CACHE"] = str(work / "empty-numba-cache")
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


if __name__ == "__main__":
    sys.exit(main())
