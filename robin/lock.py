"""One robin per output folder: two sweeps writing the same runs would overwrite each other's files.

The lock is an flock on ``OUTPUT_DIR/.robin.lock``: the kernel releases it when
its robin ends, however it ends, so a killed robin never leaves the folder
locked. The file names the holder (pid, start time) for the refusal message.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

NAME = ".robin.lock"


class FolderInUse(RuntimeError):
    pass


class OutputLock:
    def __init__(self, folder: Path):
        self.path = Path(folder) / NAME
        self.fd = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another robin"
            os.close(fd)
            raise FolderInUse(f"output folder {self.path.parent} is in use by another robin ({holder}); "
                              "wait for it to end or choose another --output-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)   # releases the flock; the file stays, unlocked
            self.fd = None
