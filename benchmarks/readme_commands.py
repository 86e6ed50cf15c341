"""Does every command of the README work as written, on a loaded machine? Runs them all, timed.

Every code block of README.md runs as written, in order, in one folder (so
that a block finds what an earlier one wrote, as in a reader's terminal),
while another simulation runs beside them the whole time (stock FCFS in the
engine's process on a synthetic Rackham day, restarted as often as it ends:
batloc.testing.readme). Prints a table (block, wall seconds, status) and exits
1 if a block fails. The short blocks are also a test that CI runs
(tests/package/test_package_readme.py); this script adds the long ones:

- the install blocks run from their `&&` on, on the install that runs this
  script (`bash scripts/install.sh` itself on a fresh machine is
  benchmarks/fresh_install.py's measure); the test suite's block only with --tests;
- the example from a trace uses the real KTH-SP2 log, linked into the folder
  under its own name from --traces (not copied into the project);
- Batsim's own files: --batsim names a clone of oar-team/batsim (a bare one
  does), linked into the folder as `batsim`;
- the paper's study finds the traces in `../shared/data/traces/`, as its
  study file says: --traces is linked there;
- the Python block, if batloc.api is there.

    nice python3 benchmarks/readme_commands.py --traces ../shared/data/traces --batsim BATSIM_CLONE [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from batloc.testing.readme import BackgroundLoad, blocks, run, simulation_load

ROOT = Path(__file__).resolve().parents[1]
TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "data" / "traces",
                   help="folder holding KTH-SP2-1996-2.1-cln.swf.gz (default: ../shared/data/traces)")
    p.add_argument("--batsim", type=Path, help="a clone of oar-team/batsim (the Batsim's-files block)")
    p.add_argument("--tests", action="store_true", help="also run the test suite's block (python3 -m pytest -q)")
    p.add_argument("--no-load", action="store_true", help="run the blocks on an idle machine")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per block (default 3600)")
    p.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = p.parse_args(argv)

    if not (args.traces / TRACE).exists():
        p.error(f"{args.traces / TRACE} not found (--traces)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="readme-"))
    reader = work / "reader"
    reader.mkdir(parents=True, exist_ok=True)
    (reader / TRACE).unlink(missing_ok=True)
    (reader / TRACE).symlink_to((args.traces / TRACE).resolve())
    shared = work / "shared" / "data"
    shared.mkdir(parents=True, exist_ok=True)
    if not (shared / "traces").exists():
        (shared / "traces").symlink_to(args.traces.resolve())
    if args.batsim is not None and not (reader / "batsim").exists():
        (reader / "batsim").symlink_to(args.batsim.resolve())

    rows, failed = [], 0
    load = BackgroundLoad(simulation_load(work / "load"), work / "load") if not args.no_load else None
    try:
        if load:
            load.__enter__()
        for block in blocks(ROOT / "README.md"):
            text, note = block.text, ""
            if block.install:
                if "pytest" in text and not args.tests:
                    rows.append((block, None, "skipped (--tests)"))
                    continue
                text, note = block.after_install(), " (after install)"
            if block.names("git -C batsim") and args.batsim is None:
                rows.append((block, None, "skipped (--batsim)"))
                continue
            if block.python and importlib.util.find_spec("batloc.api") is None:
                rows.append((block, None, "skipped (no batloc.api)"))
                continue
            print(f"readme_commands: line {block.line}: {text.splitlines()[0]}", file=sys.stderr, flush=True)
            rc, wall, out, cpu = run(text, block.python, reader, args.timeout)
            (work / f"block-{block.line}.log").write_text(out)
            status = f"ok{note}" if rc == 0 else f"FAILED rc={rc}{note}: {out.strip().splitlines()[-1:]}"
            failed += rc != 0
            rows.append((block, (wall, cpu), status))
    finally:
        if load:
            load.__exit__(None, None, None)

    print(f"{'README block':<64} {'wall (s)':>9} {'CPU (s)':>9}  status")
    for block, times, status in rows:
        first = block.text.splitlines()[0]
        label = f"{block.line}: {first if len(first) <= 58 else first[:57] + '…'}"
        wall, cpu = times if times else ("", "")
        print(f"{label:<64} {wall if wall == '' else f'{wall:9.1f}':>9} {cpu if cpu == '' else f'{cpu:9.1f}':>9}"
              f"  {status}")
    if load:
        print(f"beside them: {load.started} run(s) of another simulation ({' '.join(load.command[3:5])} …), "
              f"{load.failed} failed on its own")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; logs in {work}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
