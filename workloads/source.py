"""Open a trace file (plain or gzip) and turn I/O failures into one clear error."""

import gzip
import os

from .errors import WorkloadError


# A job line of any trace format is a few hundred characters; reading one line at a time up to this
# bound keeps a corrupt file (one 2 GiB "line") from filling the memory before it is found out.
MAX_LINE = 1 << 20


def read_lines(path, max_line=MAX_LINE):
    """Yield (line number, text without newline); a read failure or an over-long line is a WorkloadError."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        # latin-1 never fails to decode: a stray byte must not abort a million-line trace.
        handle = gzip.open(path, "rt", encoding="latin-1") if gzipped else open(path, encoding="latin-1")
        with handle:
            number = 0
            while text := handle.readline(max_line + 1):
                number += 1
                if len(text) > max_line and not text.endswith("\n"):
                    raise WorkloadError(f"{path}:{number}: line longer than {max_line} characters: not a trace "
                                        "line (is this the right file?)")
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
