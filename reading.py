"""Reading a user's input file within bounds, and quoting a piece of it in an error (one home for every reader).

An input can be anything a path names: `/dev/zero`, a FIFO nobody writes, a
2 GB file without a newline, a `<cluster>` of two billion hosts. A reader that
trusts it reads for ever or fills the memory, silently, and only SIGKILL ends
it. So every reader of a user's file (the engine's workloads, profiles and
usage traces, the workload and run.json `batloc validate` and the report read,
platform files, the trace converters, robin's descriptions, scheduler options)
goes through here:

- `read_bytes` opens without blocking (a FIFO is not waited on), refuses what
  is not a regular file, refuses a file over its bound before reading it, and
  reads in chunks up to the bound, so that a signal is acted on between two
  chunks and a file that grows while read is cut at the bound;
- `excerpt` is what an error may echo of the input: a short, quoted piece.

The bounds are generous for real inputs and stated in the refusal, so a user
with a larger real input knows which one to raise: a 12-week Rackham workload
is about a million jobs and 300 MB of JSON; Rackham's platform is 1.1 MB for
10 207 hosts. Contract §1 and §2 list them.
"""

import os
import reprlib
import stat

MiB = 1 << 20
GiB = 1 << 30

# A Batsim JSON workload (the engine's, and every tool that reads one back).
WORKLOAD_BYTES = 2 * GiB
# Every usage-trace file one workload names, summed (its lists and its ranks' files, each time it is named).
TRACE_BYTES = 1 * GiB
# A SimGrid platform file; and the hosts it may declare (<cluster> and <cabinet> radicals counted whole).
PLATFORM_BYTES = 512 * MiB
PLATFORM_HOSTS = 1 << 20
# A trace to convert (SWF, sacct, Gonthier's CSV), after gzip; a WfCommons instance.
TRACE_FILE_BYTES = 16 * GiB
INSTANCE_BYTES = 1 * GiB
# The engine's crash journal (`--recover`): written by batloc, a few records a job and one checkpoint a message, yet
# found by a name any file may have (a FIFO there hung every later run with that prefix)
JOURNAL_BYTES = 4 * GiB
# Small files written by hand: robin's and a study's descriptions, scheduler options; and robin's run.json.
DESCRIPTION_BYTES = 16 * MiB
# What an error quotes of an input
EXCERPT = 60

CHUNK = 4 * MiB
# A UTF-8 byte order mark: SimGrid's platform parser and Batsim's JSON reader (rapidjson) refuse a file that starts
# with one (SimGrid's message then blames an "invalid continuation byte"), so batloc refuses it too, saying so
BOM = b"\xef\xbb\xbf"


class Refused(ValueError):
    """An input not read: not a regular file, or over its bound (`bound`, else None). The message names the
    file and the bound."""

    def __init__(self, message, bound=None):
        super().__init__(message)
        self.bound = bound


def size_text(n):
    """A byte count as a person reads it (the bounds are round binary numbers)."""
    for unit, size in (("GiB", GiB), ("MiB", MiB)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def check_regular(path, what="file", fd=None):
    """Refuse a path that is not a regular file (a FIFO, a device, a directory); return its size."""
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
    except OSError as exc:
        raise Refused(f"{path} ({what}) cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise Refused(f"{path} ({what}) is {kind}, not a regular file: not read")
    return st.st_size


def over(path, what, limit):
    return Refused(f"{path} ({what}) is larger than {size_text(limit)}, the bound batloc reads: not read", limit)


def read_bytes(path, limit, what="file", bom=False):
    """The whole content of the regular file `path`, at most `limit` bytes, else Refused; one that starts with a
    UTF-8 byte order mark is Refused too, unless `bom` (its format allows one: YAML).

    OSError (no such file, no permission) is left to the caller, which words it for its own input."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if check_regular(path, what, fd) > limit:
            raise over(path, what, limit)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(CHUNK, limit + 1 - total))
            if not chunk:
                raw = b"".join(chunks)
                if not bom and raw.startswith(BOM):
                    raise Refused(f"{path} ({what}) starts with a UTF-8 byte order mark (BOM), which SimGrid and "
                                  "Batsim cannot read either: save it without one")
                return raw
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:   # it grew while read
                raise over(path, what, limit)
    finally:
        os.close(fd)


def open_checked(path, limit, what="file", mode="rb", **kwargs):
    """`open(path, mode)` of a regular file of at most `limit` bytes (a reader that streams it bounds the rest)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)   # a FIFO is not waited on
    try:
        handle = os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise
    try:
        if check_regular(path, what, handle.fileno()) > limit:
            raise over(path, what, limit)
    except BaseException:
        handle.close()
        raise
    return handle


def clipped(text, limit=EXCERPT):
    """A text shown as it is when short (a number, a name), else as `excerpt` shows it."""
    return text if len(text) <= limit else excerpt(text, limit)


def excerpt(value, limit=EXCERPT):
    """`value` as repr shows it, cut to about `limit` characters: a text keeps its start and says its length;
    anything else is shown by ``reprlib`` (which never builds the whole repr of a huge list)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    shown = reprlib.Repr()
    shown.maxstring = shown.maxother = shown.maxlong = limit
    shown.maxlist = shown.maxtuple = shown.maxdict = shown.maxset = 6
    shown.maxlevel = 3
    return shown.repr(value)
