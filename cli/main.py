"""`batloc <command> ...`: one entry point whose subcommands live with their concept.

Each subcommand is a module exposing `main(argv) -> int`; it is imported only
when used, so `batloc workload ...` never pays for SimGrid or matplotlib.
"""

import importlib
import os
import sys

COMMANDS = {
    "demo": ("batloc.cli.demo", "run a small end-to-end simulation on the embedded engine"),
    "platform": ("batloc.platforms.cli", "generate SimGrid platform files (Rackham and your own cluster)"),
    "workload": ("batloc.workloads.cli", "turn traces into file-annotated Batsim workloads"),
    "report": ("batloc.analysis.cli", "build report.html and summary.csv from simulation outputs"),
    "validate": ("batloc.analysis.validate", "check a run's outputs for impossible schedules"),
    "scheduler": ("batloc.cli.scheduler", "run a pybatsim scheduler (schedulers/lea.py, schedFcfs) on 127.0.0.1"),
    "study": ("batloc.study.cli", "run a study in one command (paper: Gonthier et al.'s Tables I-III)"),
}


def usage() -> str:
    lines = ["usage: batloc <command> [options]   (batloc --version: its version)", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run `batloc <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        import batloc
        print(f"batloc {batloc.__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"batloc: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(COMMANDS[name][0])
        return int(module.main(rest) or 0)
    except BrokenPipeError:
        # `batloc workload stats … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:   # Ctrl-C where a command does not say more itself (importing pandas, say)
        print(f"batloc {name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
