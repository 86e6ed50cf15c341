"""The README's code blocks as a newcomer runs them, for the test that runs the short ones and the script
that runs them all (tests/package/test_package_readme.py, benchmarks/readme_commands.py).

A block is an indented code block of README.md, run as written: a shell block
by `bash -e` (so that `a && b`, a heredoc and a pipe behave as in a terminal,
and the first failing line fails the block), a block that imports Python by
`python`. Blocks run in order in one folder, so that a later block finds what
an earlier one wrote, as a reader's terminal does.

`BackgroundLoad` keeps another simulation running beside them (restarted as
often as it ends), since a README command that works only on an idle machine
does not work.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from batloc.shipped import packaged


@dataclass(frozen=True)
class Block:
    line: int          # where it starts in the README, 1-based
    text: str          # its lines, indentation removed

    @property
    def python(self) -> bool:
        return bool(re.match(r"(import|from) \w", self.text))

    @property
    def install(self) -> bool:
        return "scripts/install.sh" in self.text

    def after_install(self) -> str:
        """The block without its leading `bash scripts/install.sh && `: what a test runs on an install CI
        has just made."""
        return re.sub(r"^bash scripts/install\.sh && ", "", self.text, flags=re.M)

    def names(self, word: str) -> bool:
        return word in self.text


def blocks(readme) -> list[Block]:
    """The indented code blocks of a Markdown file, in order (a block follows a blank line)."""
    lines = Path(readme).read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            start = i
            while i < len(lines) and (lines[i].startswith("    ") or (not lines[i].strip() and i + 1 < len(lines)
                                                                        and lines[i + 1].startswith("    "))):
                i += 1
            found.append(Block(start + 1, "\n".join(line[4:] for line in lines[start:i]).rstrip() + "\n"))
        else:
            i += 1
    return found


def run(block_text: str, python: bool, cwd, timeout: float, env=None) -> tuple[int, float, str, float]:
    """(exit status, wall seconds, stdout and stderr, CPU seconds of the block and all it waited for) of one
    block run as written in `cwd`; killed with its process group past `timeout`."""
    command = [sys.executable, "-c", block_text] if python else ["bash", "-e", "-c", block_text]
    start = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    chunks = []
    reader = threading.Thread(target=lambda: chunks.extend(proc.stdout), daemon=True)
    reader.start()
    killed = False
    while True:     # wait4, not Popen.wait: the block's own CPU, whatever else this process waits for
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout and not killed:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.2)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=10)
    out = "".join(chunks) + (f"\n(killed after {timeout:g} s)" if killed else "")
    return proc.returncode, time.monotonic() - start, out, usage.ru_utime + usage.ru_stime


class BackgroundLoad:
    """`command` run over and over in `cwd`, in its own process group, until the block ends."""

    def __init__(self, command: list[str], cwd, env=None):
        self.command, self.cwd, self.env = command, cwd, env
        self.started = 0
        self.failed = 0      # runs that ended badly on their own (not stopped here)
        self._proc = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            self._proc = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True)
            self.started += 1
            if self._proc.wait() != 0 and not self._stop.is_set():
                self.failed += 1

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        while self._thread.is_alive():      # a run may start between the flag and the kill: kill until none
            proc = self._proc
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._thread.join(timeout=1)


def simulation_load(folder) -> list[str]:
    """Another simulation to run beside the README's commands: stock FCFS in the engine's process on a
    synthetic Rackham day (about a minute of CPU), its inputs written into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    workload = folder / "load-day.json"
    if not workload.exists():
        subprocess.run([sys.executable, "-m", "batloc.cli.main", "workload", "synth", "-o", str(workload),
                        "--duration", "1d", "--load", "0.9", "--seed", "3"], check=True, capture_output=True)
    return [sys.executable, "-m", "batloc.engine", "-p", str(package_file("platforms/rackham.xml")), "-w",
            str(workload), "-e", str(folder / "load"), "--in-process", "schedFcfs", "--no-journal", "-q"]


def package_file(relative: str) -> Path:
    return Path(packaged(relative)).resolve()     # the load runs in a folder of its own
