"""Open a trace file (plain or gzip) or a JSON input, within bounds, and turn I/O failures into one clear error."""

import gzip
import io
import json
import os

from batloc.reading import TRACE_FILE_BYTES, Refused, open_checked, read_bytes, size_text

from .errors import WorkloadError


# A job line of any trace format is a few hundred characters; reading one line at a time up to this
# bound keeps a corrupt file (one 2 GiB "line") from filling the memory before it is found out.
MAX_LINE = 1 << 20


def read_lines(path, max_line=MAX_LINE, limit=TRACE_FILE_BYTES):
    """Yield (line number, text without newline); a read failure, an over-long line, a file that is not a regular
    one or holds more than `limit` bytes (after gzip) is a WorkloadError."""
    path = os.fspath(path)
    try:
        raw = open_checked(path, limit, "trace")
        with raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            # latin-1 never fails to decode: a stray byte must not abort a million-line trace.
            handle = io.TextIOWrapper(gzip.GzipFile(fileobj=raw) if gzipped else raw, encoding="latin-1")
            number = total = 0
            while text := handle.readline(max_line + 1):
                number += 1
                total += len(text)
                if len(text) > max_line and not text.endswith("\n"):
                    raise WorkloadError(f"{path}:{number}: line longer than {max_line} characters: not a trace "
                                        "line (is this the right file?)")
                if total > limit:   # a gzip file that unpacks to more than a plain one may hold
                    raise WorkloadError(f"{path}: unpacks to more than {size_text(limit)}, the bound batloc reads "
                                        "of a trace")
                yield number, text.rstrip("\r\n")
    except Refused as exc:
        raise WorkloadError(str(exc)) from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise WorkloadError(f"{path}: cannot read: {reason}") from None


def read_json(path, limit, what):
    """The JSON document of `path` (a `what`: workload, WfCommons instance), read within `limit` bytes; a
    WorkloadError names the file, and the line and column of a syntax error."""
    try:
        raw = read_bytes(path, limit, what)
    except Refused as exc:
        raise WorkloadError(str(exc)) from None
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise WorkloadError(f"{path}: not UTF-8 text (a {what} is JSON)") from None
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg} at column {exc.colno} (is this a "
                            f"{what}?)") from None
    except RecursionError:
        raise WorkloadError(f"{path}: JSON nested too deeply to be a {what}") from None


def is_number(text):
    """Whether a trace field reads as a number (the readers report the first field that does not)."""
    try:
        float(text)
        return True
    except ValueError:
        return False
