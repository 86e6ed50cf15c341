"""What the run's journal costs (issue 30: at most 5 %): the same run with and without it, alternately.

Two runs, each repeated `--repeat` times with the journal and with
`--no-journal`, one after the other so that both meet the same load:
- `engine`: the engine_throughput workload (delay jobs on Rackham) against
  the raw decision process over ZeroMQ, which costs almost nothing: the
  engine dominates, so the journal's share is the largest it can be;
- `fcfs`: batloc's FCFS in process (`--in-process`) on a saturated synthetic
  Rackham slice, stagings and all: a run as robin makes them.
Prints, per run, the median CPU time (engine, and scheduler when separate;
os.wait4, every thread) with and without the journal, the overhead (the
median over the pairs of runs made back to back of their ratio: on a loaded
machine CPU times swing by 10-20 % between identical runs), the journal's
size and its number of checkpoints (one write each), and checks that both
give byte-identical outputs. Engine and scheduler share one CPU.

    python benchmarks/journal_overhead.py [--jobs 20000] [--repeat 5] [--runs engine fcfs]
"""

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import threading

from engine_throughput import RAW_FCFS, make_workload

from batloc.processes import free_port, pin_to

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORM = os.path.join(ROOT, "platforms", "rackham.xml")
ENGINE = [sys.executable, "-m", "batloc.engine", "-p", PLATFORM, "-q"]


def journal_size(prefix, stop):
    """Watch for the run's journal while it runs; its last size and line count."""
    seen = {"bytes": 0, "lines": 0}
    folder = os.path.dirname(prefix)

    def watch():
        while not stop.is_set():
            for name in os.listdir(folder):
                if "_journal." in name:
                    try:
                        with open(os.path.join(folder, name), "rb") as f:
                            data = f.read()
                    except OSError:
                        continue
                    seen["bytes"], seen["lines"] = len(data), data.count(b'["@"')
            stop.wait(0.5)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return seen, thread


def run_engine(workload, prefix, journal, cpu):
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sched = subprocess.Popen([sys.executable, RAW_FCFS, endpoint], preexec_fn=pin_to(cpu))
    engine = subprocess.Popen(ENGINE + ["-w", workload, "-e", prefix, "-s", endpoint.replace("127.0.0.1", "localhost")]
                              + ([] if journal else ["--no-journal"]), preexec_fn=pin_to(cpu))
    _, status, usage = os.wait4(engine.pid, 0)
    engine.returncode = os.waitstatus_to_exitcode(status)
    _, _, sched_usage = os.wait4(sched.pid, 0)
    assert engine.returncode == 0, f"engine exit {engine.returncode}"
    return usage.ru_utime + usage.ru_stime, sched_usage.ru_utime + sched_usage.ru_stime


def run_fcfs(workload, prefix, journal, cpu):
    engine = subprocess.Popen(ENGINE + ["-w", workload, "-e", prefix, "--enable-dynamic-jobs", "--in-process",
                                        os.path.join(ROOT, "schedulers", "fcfs.py"), "--scheduler-options",
                                        '{"export_prefix": "%s"}' % prefix]
                              + ([] if journal else ["--no-journal"]), preexec_fn=pin_to(cpu))
    _, status, usage = os.wait4(engine.pid, 0)   # the scheduler, the engine's child, is counted in
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_utime + usage.ru_stime, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20_000, help="delay jobs of the `engine` run")
    ap.add_argument("--duration", default="6h", help="length of the saturated slice of the `fcfs` run")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runs", nargs="+", default=["engine", "fcfs"], choices=["engine", "fcfs"])
    args = ap.parse_args()
    cpu = min(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        workloads = {}
        if "engine" in args.runs:
            workloads["engine"] = os.path.join(tmp, "delays.json")
            make_workload(workloads["engine"], args.jobs)
        if "fcfs" in args.runs:
            workloads["fcfs"] = os.path.join(tmp, "slice.json")
            subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", workloads["fcfs"],
                            "--platform", PLATFORM, "--duration", args.duration, "--load", "1.2", "--jobs-per-file",
                            "8", "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run([sys.executable, "-c", "from batloc.schedulers.planning.planner import warm_up; warm_up()"],
                           check=True)
        print(f"{'run':<7} {'journal':>8} {'CPU s (median)':>15} {'all CPU s':>28} {'sched s':>8} "
              f"{'overhead':>9} {'journal MB':>10} {'checkpoints':>11}  same outputs", flush=True)
        for name in args.runs:
            runner = run_engine if name == "engine" else run_fcfs
            times = {True: [], False: []}
            sched = {True: [], False: []}
            size = None
            for i in range(args.repeat):
                for journal in (True, False):
                    prefix = os.path.join(tmp, f"{name}-{int(journal)}", "out")
                    os.makedirs(os.path.dirname(prefix), exist_ok=True)
                    stop = threading.Event()
                    seen, watcher = journal_size(prefix, stop) if journal else (None, None)
                    cpu_s, sched_s = runner(workloads[name], prefix, journal, cpu)
                    if watcher is not None:
                        stop.set()
                        watcher.join()
                        size = seen
                    times[journal].append(cpu_s)
                    if sched_s is not None:
                        sched[journal].append(sched_s)
            same = all(filecmp.cmp(os.path.join(tmp, f"{name}-1", f"out_{f}.csv"),
                                   os.path.join(tmp, f"{name}-0", f"out_{f}.csv"), shallow=False)
                       for f in ("jobs", "schedule", "machine_states"))
            # each pair ran back to back, under the same load: the median of their ratios is the least noisy figure
            paired = statistics.median(a / b - 1 for a, b in zip(times[True], times[False]))
            on, off = statistics.median(times[True]), statistics.median(times[False])
            for journal in (True, False):
                med = statistics.median(times[journal])
                s = f"{statistics.median(sched[journal]):>8.2f}" if sched[journal] else f"{'-':>8}"
                extra = (f"{100 * paired:>8.1f}% {size['bytes'] / 1e6:>10.1f} {size['lines']:>11}  {same}"
                         if journal else "")
                print(f"{name:<7} {'yes' if journal else 'no':>8} {med:>15.2f} "
                      f"{' '.join(f'{t:.1f}' for t in times[journal]):>28} {s} {extra}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
