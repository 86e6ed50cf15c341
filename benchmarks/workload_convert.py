"""Benchmark: convert a 1-million-line SWF trace to Batsim JSON; print wall time and peak memory.

    python3 benchmarks/workload_convert.py [--lines 1000000] [--keep DIR]

The trace is synthetic (written in a temporary directory): Rackham-sized jobs,
a few percent of them cancelled or wider than a node, so every reader path runs.
The conversion runs as `batloc workload from-swf` in a child process, so the
peak memory printed is the converter's own. Target: < 60 s and < 4 GiB.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

CHUNK = 200_000


def write_trace(path, lines, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as out:
        out.write("; Version: 2.2\n; Computer: synthetic benchmark trace\n"
                  "; UnixStartTime: 1641168000\n; MaxNodes: 486\n; MaxProcs: 9720\n")
        submit = 0
        for first in range(0, lines, CHUNK):
            n = min(CHUNK, lines - first)
            gaps = rng.exponential(20.0, n).astype(np.int64)
            times = submit + np.cumsum(gaps)
            submit = int(times[-1])
            procs = rng.choice([1, 2, 4, 8, 16, 20, 40], n, p=[.4, .15, .15, .1, .08, .1, .02])
            run = np.maximum(1, rng.lognormal(7.5, 1.5, n).astype(np.int64))
            req = run * 2 + 60
            status = np.where(rng.random(n) < 0.03, 5, 1)
            run = np.where((status == 5) & (rng.random(n) < 0.5), -1, run)
            users = rng.integers(1, 1000, n)
            ids = np.arange(first + 1, first + n + 1)
            rows = np.column_stack([ids, times, run, procs, req, status, users])
            out.write("".join(
                f"{j} {t} 0 {r} {p} -1 -1 {p} {q} -1 {s} {u} 1 -1 1 -1 -1 -1\n"
                for j, t, r, p, q, s, u in rows.tolist()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--keep", help="directory to keep the trace and the JSON in (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or tmp
        os.makedirs(directory, exist_ok=True)
        trace, output = os.path.join(directory, "bench.swf"), os.path.join(directory, "bench.json")
        started = time.perf_counter()
        write_trace(trace, args.lines)
        print(f"trace: {args.lines} lines, {os.path.getsize(trace) / 1e6:.0f} MB "
              f"(written in {time.perf_counter() - started:.1f} s)")
        command = [sys.executable, "-m", "batloc.cli.main", "workload", "from-swf", trace, "-o", output]
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if result.returncode:
            sys.exit(f"conversion failed: {result.stderr.strip()}")
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        print(result.stdout.strip())
        print(f"convert: {elapsed:.1f} s wall, peak RSS {peak_kib / 2**20:.2f} GiB, "
              f"JSON {os.path.getsize(output) / 1e6:.0f} MB")
        print(f"target: < 60 s and < 4 GiB -> {'OK' if elapsed < 60 and peak_kib < 4 * 2**20 else 'MISSED'}")


if __name__ == "__main__":
    main()
