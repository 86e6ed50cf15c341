"""Open a trace file (plain or gzip) and turn I/O failures into one clear error."""

import gzip
import os

from .errors import WorkloadError


def read_lines(path):
    """Yield (line number, text without newline); any read failure becomes a WorkloadError."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        # latin-1 never fails to decode: a stray byte must not abort a million-line trace.
        handle = gzip.open(path, "rt", encoding="latin-1") if gzipped else open(path, encoding="latin-1")
        with handle:
            for number, text in enumerate(handle, 1):
                yield number, text.rstrip("\r\n")
    except (OSError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise WorkloadError(f"{path}: cannot read: {reason}") from None


def is_number(text):
    """Whether a trace field reads as a number (the readers report the first field that does not)."""
    try:
        float(text)
        return True
    except ValueError:
        return False
