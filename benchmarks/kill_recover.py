"""kill -9 of the engine at a random instant of a 10 000-job run, then `batloc-batsim --recover` (issue 30).

For each mode (`zeromq`: batloc's FCFS as its own process; `in-process`), one
uninterrupted run of a saturated synthetic Rackham slice (about 10 000 jobs,
stagings and all) is the reference; then `--kills` runs are each killed with
SIGKILL at an instant drawn uniformly over the reference's simulation (from
its first message to its end, wall clock), and recovered. Each recovery must
give:
- one row per workload job, each with a state Batsim writes;
- for every job that had ended (a final state), the reference run's row, byte
  for byte, and those rows are the reference's first rows (jobs.csv is in
  completion order: nothing that ended before the last one kept is lost);
- at least as many ended workload jobs as the engine's progress file counted
  before the kill (it is rewritten about once a second, apart from the journal).
Prints one line per kill and a summary; exits 1 if any check failed.

    python benchmarks/kill_recover.py [--kills 20] [--modes zeromq in-process] [--duration 29800s] [--seed 1]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

from batloc.outputs import read_rows
from batloc.processes import free_port, pin_to

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORM = os.path.join(ROOT, "platforms", "rackham.xml")
FCFS = os.path.join(ROOT, "schedulers", "fcfs.py")
ENGINE = [sys.executable, "-m", "batloc.engine", "-p", PLATFORM, "--enable-dynamic-jobs", "-q"]
UNFINISHED = ("SUBMITTED", "RUNNING", "NOT_SUBMITTED")
STATES = UNFINISHED + ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                       "COMPLETED_KILLED", "REJECTED")


class Run:
    """One run of the engine and FCFS in `mode`, its outputs under `prefix`."""

    def __init__(self, mode, workload, prefix, cpu):
        self.prefix = prefix
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        self.progress = prefix + "_progress"
        options = json.dumps({"export_prefix": prefix})
        args = ENGINE + ["-w", workload, "-e", prefix, "--progress-file", self.progress]
        self.sched = None
        if mode == "in-process":
            args += ["--in-process", FCFS, "--scheduler-options", options]
        else:
            port = free_port()
            self.sched = subprocess.Popen([sys.executable, "-m", "batloc.cli.main", "scheduler", FCFS, "-v", "warning",
                                           "-s", f"tcp://127.0.0.1:{port}", "-o", options],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pin_to(cpu))
            args += ["-s", f"tcp://localhost:{port}"]
        self.started = time.monotonic()
        self.engine = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pin_to(cpu))
        self.first_message = None

    def journal(self):
        folder = os.path.dirname(self.prefix)
        names = [n for n in os.listdir(folder) if n.startswith(os.path.basename(self.prefix) + "_journal.")]
        return os.path.join(folder, names[0]) if names else None

    def wait_first_message(self):
        """Wall seconds from the start to the engine's first checkpoint (its first message to the scheduler)."""
        while self.first_message is None:
            path = self.journal()
            if path is not None:
                with open(path, "rb") as f:
                    if b'["@"' in f.read():
                        self.first_message = time.monotonic() - self.started
                        break
            if self.engine.poll() is not None:
                raise RuntimeError(f"the engine ended before its first message: {self.engine.stderr.read()}")
            time.sleep(0.01)
        return self.first_message

    def done(self):
        _, err = self.engine.communicate()
        if self.sched is not None:
            self.sched.wait()
        if self.engine.returncode != 0:
            raise RuntimeError(f"engine exit {self.engine.returncode}: {err.strip()[-300:]}")
        return time.monotonic() - self.started

    def kill(self):
        """SIGKILL the engine; the progress file's count of ended jobs just before (None: it had ended)."""
        if self.engine.poll() is not None:
            return None
        try:
            with open(self.progress) as f:
                counted = int(f.read().split()[2])
        except (OSError, IndexError, ValueError):
            counted = 0
        self.engine.send_signal(signal.SIGKILL)
        self.engine.communicate()
        if self.sched is not None:   # it sees the engine leave and exits; at worst it is killed
            try:
                self.sched.wait(30)
            except subprocess.TimeoutExpired:
                self.sched.kill()
                self.sched.wait()
        return counted


def check(prefix, reference, workload_ids, counted):
    """The recovered jobs.csv against the reference run's; (ended rows, unfinished rows, problems)."""
    lines = _lines(prefix + "_jobs.csv")
    ref_lines = _lines(reference + "_jobs.csv")
    rows = read_rows(prefix + "_jobs.csv")[1]
    problems = []
    own = [r["job_id"] for r in rows if r["workload_name"] == "w0"]
    if sorted(own) != sorted(workload_ids):
        problems.append(f"workload rows: {len(own)} for {len(workload_ids)} jobs")
    if any(r["final_state"] not in STATES for r in rows):
        problems.append("a row with an unknown state")
    ended = [r for r in rows if r["final_state"] not in UNFINISHED]
    if lines[:len(ended) + 1] != ref_lines[:len(ended) + 1]:
        problems.append("the ended jobs' rows are not the reference's first rows, byte for byte")
    ended_own = sum(1 for r in ended if r["workload_name"] == "w0")
    if ended_own < counted:
        problems.append(f"{ended_own} workload jobs ended, the progress file counted {counted} before the kill")
    return len(ended), len(rows) - len(ended), ended_own, problems


def _lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--modes", nargs="+", default=["zeromq", "in-process"], choices=["zeromq", "in-process"])
    ap.add_argument("--duration", default="29800s", help="submission period of the slice (29800 s: ~10 000 jobs)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="keep the runs in this folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cpu = min(os.sched_getaffinity(0))
    tmp = args.keep or tempfile.mkdtemp(prefix="batloc-kill-")
    os.makedirs(tmp, exist_ok=True)
    workload = os.path.join(tmp, "slice.json")
    subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", workload, "--platform",
                    PLATFORM, "--duration", args.duration, "--load", "1.2", "--jobs-per-file", "8", "--seed", "7"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-c", "from batloc.schedulers.planning.planner import warm_up; warm_up()"],
                   check=True)
    with open(workload) as f:
        workload_ids = [str(j["id"]) for j in json.load(f)["jobs"]]
    print(f"{len(workload_ids)} jobs; runs in {tmp}", flush=True)
    failures = 0
    for mode in args.modes:
        reference = os.path.join(tmp, mode, "reference", "out")
        run = Run(mode, workload, reference, cpu)
        first = run.wait_first_message()
        end = run.done()
        rows = read_rows(reference + "_jobs.csv")[1]
        print(f"{mode}: reference run {end:.1f} s wall (first message at {first:.1f} s), {len(rows)} rows", flush=True)
        print(f"{'mode':<11} {'kill':>4} {'at s':>6} {'t sim':>9} {'ended':>6} {'workload':>8} {'progress':>8} "
              f"{'unfinished':>10}  check", flush=True)
        for k in range(args.kills):
            prefix = os.path.join(tmp, mode, f"kill{k}", "out")
            run = Run(mode, workload, prefix, cpu)
            first_k = run.wait_first_message()
            at = first_k + rng.uniform(0, end - first)
            time.sleep(max(0.0, at - (time.monotonic() - run.started)))
            counted = run.kill()
            if counted is None:   # this run was quicker than the reference: it ended before the draw
                same = all(_lines(f"{prefix}{s}") == _lines(f"{reference}{s}") for s in
                           ("_jobs.csv", "_schedule.csv", "_machine_states.csv"))
                failures += not same
                print(f"{mode:<11} {k:>4} {at:>6.1f}  ended before the kill: outputs "
                      f"{'identical to the reference' if same else 'DIFFER from the reference'}", flush=True)
                continue
            res = subprocess.run([sys.executable, "-m", "batloc.engine", "--recover", prefix], capture_output=True,
                                 text=True)
            if res.returncode != 0 or not os.path.exists(prefix + "_jobs.csv"):
                failures += 1
                print(f"{mode:<11} {k:>4} {at:>6.1f}  recovery failed: {res.stderr.strip()[-300:]}", flush=True)
                continue
            reached = res.stderr.split("killed after t=")[1].split(",")[0] if "killed after t=" in res.stderr else "?"
            ended, unfinished, ended_own, problems = check(prefix, reference, workload_ids, counted)
            failures += bool(problems)
            print(f"{mode:<11} {k:>4} {at:>6.1f} {float(reached):>9.0f} {ended:>6} {ended_own:>8} {counted:>8} "
                  f"{unfinished:>10}  {'; '.join(problems) or 'ok'}", flush=True)
    print(f"{failures} failed check(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
