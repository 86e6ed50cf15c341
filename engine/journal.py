"""The run's journal: what a killed engine leaves behind to rebuild its outputs from (``recovery``).

The outputs are written at the end of a run (``export``); a run killed with
-9, by the OOM killer, or with its machine's power left on but its process
gone, would leave nothing but temporary files. So, as the run goes, the
engine appends to ``<prefix>_journal.<pid>.tmp`` every event that shapes a
row of its outputs — a job submitted (a registered one with its fields), a
job started, a job ended where it ran (both with the number of compute
resources then busy: the machine states), a row written (an end the server
heard of, or a rejection), a job's metadata set — and, before each message
to its scheduler, a checkpoint with the simulated time. Each checkpoint's
batch is one JSON line, written in one ``write`` (no ``fsync``: the kernel
keeps it once written, whatever happens to the process); a line cut short by
a kill is ignored, so the journal always replays to a checkpoint.

Replayed on the workloads it names, the journal gives the state the engine
had at that checkpoint, from which ``recovery`` writes the very files the
engine would have written had it been stopped there (by SIGTERM, say):
every job that had ended, byte for byte as in a run left to finish, and
every other job with its last state. The engine holds a lock on the file
while it runs: a journal whose lock is free belongs to a dead run.
"""

import fcntl
import glob
import json
import os
import time

import orjson

from batloc.reading import JOURNAL_BYTES, Refused, read_bytes

from .errors import EngineError

FORMAT = 1
SUFFIX = "_journal"


def path_of(prefix, pid):
    return f"{prefix}{SUFFIX}.{pid}.tmp"


def left_behind(prefix):
    """The journals of runs with this prefix that died (their lock is free), oldest first."""
    found = []
    for path in glob.glob(glob.escape(prefix) + SUFFIX + ".*.tmp"):
        pid = path[len(prefix) + len(SUFFIX) + 1:-len(".tmp")]
        if not pid.isdigit():
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)   # a FIFO under that name is not waited on
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            continue   # its engine still runs
        finally:
            os.close(fd)
        found.append(path)
    return sorted(found, key=lambda p: os.path.getmtime(p) if os.path.exists(p) else 0.0)


class Journal:
    """The writing end: the engine's `Exporter` hands it events; `checkpoint` writes them out."""

    def __init__(self, path, header):
        self.path = path
        try:
            self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except OSError as e:
            raise EngineError(f"cannot write the run's journal {path}: {e.strerror}") from None
        fcntl.flock(self.fd, fcntl.LOCK_EX)   # released by the kernel however the engine ends
        self.pending = []      # the records since the last checkpoint (the exporter adds them)
        self.now = None        # the last checkpoint's simulated time
        self._write(orjson.dumps({"journal": FORMAT, "pid": os.getpid(), "started": time.time(), **header}) + b"\n")

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def checkpoint(self, now):
        """Write the events since the last checkpoint and this checkpoint, in one line and one write."""
        pending = self.pending
        if not pending and now == self.now:
            return
        pending.append(("@", now))
        data = orjson.dumps(pending, option=orjson.OPT_APPEND_NEWLINE)
        written = os.write(self.fd, data)
        if written < len(data):   # a regular file takes it all at once but for a full disk, which then raises
            self._write(data[written:])
        pending.clear()
        self.now = now

    def close(self, remove):
        if self.fd is None:
            return
        os.close(self.fd)
        self.fd = None
        if remove:
            try:
                os.remove(self.path)
            except OSError:
                pass


class Unreadable(Exception):
    """A journal that cannot be replayed; the message says why, in one line."""


def read(path):
    """(header, records up to the last checkpoint, the number of checkpoints, damage) of a journal; `damage` is
    None, or what was left out: a line that is no batch followed by more (a kill cuts only the last one short),
    from which nothing is replayed."""
    try:
        data = read_bytes(path, JOURNAL_BYTES, "journal")
    except Refused as e:   # a FIFO, /dev/zero or a directory under a journal's name: not waited on, not read whole
        raise Unreadable(str(e)) from None
    except OSError as e:
        raise Unreadable(f"cannot read {path}: {e.strerror}") from None
    lines = data.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise Unreadable(f"{path}: not a batloc-batsim journal (its first line is not one)") from None
    if not isinstance(header, dict) or header.get("journal") != FORMAT:
        raise Unreadable(f"{path}: not a batloc-batsim journal of format {FORMAT}")
    records, checkpoints, damage = [], 0, None
    for number, line in enumerate(lines[1:], 2):
        try:
            batch = orjson.loads(line)
        except orjson.JSONDecodeError:
            # cut short by the kill (or empty: the end): a batch not written whole does not count; but a kill
            # leaves nothing after it, so more lines mean the file was damaged in the middle
            after = sum(1 for rest in lines[number:] if rest.strip())
            if after:
                damage = (f"damaged at line {number} (not a whole batch, {after} more line(s) after it, left out): "
                          f"replayed up to the checkpoint before it")
            break
        if not (isinstance(batch, list) and batch and batch[-1][0] == "@"):
            raise Unreadable(f"{path}: line {number} is not a batch of records ending in a checkpoint")
        records.extend(batch)
        checkpoints += 1
    return header, records, checkpoints, damage
