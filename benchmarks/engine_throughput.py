"""Engine throughput: 100 000 delay jobs over a week on Rackham (486 × 20 cores), end to end.

The decision process is the simplest possible (first-come first-served on the
lowest free core ids, raw ZeroMQ + json), in its own process, so the figure
includes every ZeroMQ round trip. Prints jobs/s and the engine's peak RSS.
Target (issue 2): >= 5 000 jobs/s and < 2 GiB.

Both processes run on one CPU, as robin runs them: they take turns, and a
wake-up across CPUs costs more than a message's work on virtual machines.
`--no-pin` lets the OS place them, for comparison.

    python benchmarks/engine_throughput.py [--jobs 100000] [--platform platforms/rackham.xml]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from batloc.processes import free_port, pin_to

HERE = os.path.dirname(os.path.abspath(__file__))
RAW_FCFS = os.path.join(HERE, "raw_fcfs.py")   # costs almost nothing: the engine dominates


def make_workload(path, n, seed=1):
    rng = random.Random(seed)
    week = 7 * 24 * 3600
    subtimes = sorted(rng.uniform(1, week) for _ in range(n))
    jobs, profiles = [], {}
    for i, t in enumerate(subtimes):
        delay = rng.randrange(1000, 14000, 10)
        name = f"d{delay}"
        profiles[name] = {"type": "delay", "delay": delay}
        jobs.append({"id": i, "subtime": round(t, 3), "res": rng.randint(1, 10), "walltime": delay * 2,
                     "profile": name})
    with open(path, "w") as f:
        json.dump({"nb_res": 9720, "jobs": jobs, "profiles": profiles}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--platform", default=os.path.join(HERE, "..", "platforms", "rackham.xml"))
    ap.add_argument("--no-pin", action="store_true", help="do not put engine and scheduler on one CPU")
    args = ap.parse_args()
    if not os.path.exists(args.platform):
        sys.exit(f"platform not found: {args.platform} (generate it with `batloc platform`)")
    with tempfile.TemporaryDirectory() as tmp:
        wl = os.path.join(tmp, "w.json")
        make_workload(wl, args.jobs)
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        cpu = min(os.sched_getaffinity(0))
        pin = None if args.no_pin else pin_to(cpu)
        sched = subprocess.Popen([sys.executable, RAW_FCFS, endpoint], preexec_fn=pin)
        start = time.monotonic()
        eng = subprocess.Popen([sys.executable, "-m", "batloc.engine", "-p", args.platform, "-w", wl,
                                "-e", os.path.join(tmp, "out"), "-s", endpoint, "-q"], preexec_fn=pin)
        _, status, usage = os.wait4(eng.pid, 0)
        wall = time.monotonic() - start
        eng.returncode = os.waitstatus_to_exitcode(status)
        _, _, sched_usage = os.wait4(sched.pid, 0)
        if eng.returncode != 0:
            sys.exit(f"engine failed with exit code {eng.returncode}")
        with open(os.path.join(tmp, "out_jobs.csv")) as f:
            rows = sum(1 for _ in f) - 1
    rss_gib = usage.ru_maxrss / (1024 * 1024)
    print(f"placement       {'OS-chosen CPUs' if args.no_pin else f'engine and scheduler on CPU {cpu}'}")
    print(f"jobs            {rows}")
    print(f"wall time       {wall:.1f} s")
    print(f"throughput      {rows / wall:,.0f} jobs/s   (target >= 5 000)")
    print(f"engine peak RSS {rss_gib:.2f} GiB   (target < 2 GiB)")
    cpu_of = lambda u: u.ru_utime + u.ru_stime  # noqa: E731
    print(f"CPU time        engine {cpu_of(usage):.1f} s, decision process {cpu_of(sched_usage):.1f} s")


if __name__ == "__main__":
    main()
