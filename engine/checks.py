"""Checks of the values that enter the engine (workloads, platforms, decisions): one home for their wording.

Every check raises `EngineError` with one line naming where the value came
from (file and job, or event and time) and the field at fault. Numbers must
be finite: NaN compares false with everything, so one NaN delay or timestamp
would freeze the engine's clock, and JSON cannot carry it to the scheduler.
"""

import math

from batloc.reading import excerpt as shown   # a value as a message quotes it: a hostile one may be huge

from .errors import EngineError


def is_number(value):
    return not isinstance(value, bool) and isinstance(value, (int, float))


def number(value, what, where, minimum=None, positive=False):
    """`value` as a float if it is a finite number (and >= `minimum`, or > 0 if `positive`)."""
    if not is_number(value):
        raise EngineError(f"{where}: {what} must be a number, got {shown(value)}")
    try:
        result = float(value)
    except OverflowError:   # an integer beyond any float
        result = math.inf
    if not math.isfinite(result):
        raise EngineError(f"{where}: {what} must be a finite number, got {shown(value)}")
    if minimum is not None and result < minimum:
        raise EngineError(f"{where}: {what} must be >= {minimum}, got {shown(value)}")
    if positive and result <= 0:
        raise EngineError(f"{where}: {what} must be > 0, got {shown(value)}")
    return result


def integer(value, what, where, minimum=None, maximum=None):
    """`value` if it is an integer in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise EngineError(f"{where}: {what} must be an integer, got {shown(value)}")
    if minimum is not None and value < minimum:
        raise EngineError(f"{where}: {what} must be >= {minimum}, got {shown(value)}")
    if maximum is not None and value > maximum:
        raise EngineError(f"{where}: {what} must be <= {maximum}, got {shown(value)}")
    return value


def string(value, what, where):
    if not isinstance(value, str):
        raise EngineError(f"{where}: {what} must be a string, got {shown(value)}")
    return value


def walltime(value, where):
    """A walltime: absent, null or -1 for none (returned as -1.0), else a finite positive number."""
    if value is None or (is_number(value) and value == -1):
        return -1.0
    try:
        ok = is_number(value) and math.isfinite(float(value)) and value > 0
    except OverflowError:
        ok = False
    if not ok:
        raise EngineError(f"{where}: walltime must be a finite number > 0 (or -1 for none), got {shown(value)}")
    return float(value)


def non_finite_field(value, path=""):
    """The path (e.g. 'input_size' or 'seq[2]') of the first NaN or infinite number inside a JSON value."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "value"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite_field(item, f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key))
        if found is not None:
            return found
    return None


def non_text_field(value, path=""):
    """The path of the first string (or key) inside a JSON value holding a lone UTF-16 surrogate, else None.

    JSON's ``\\ud800`` escapes decode to such characters, which no UTF-8 output or message can carry.
    """
    if isinstance(value, str):
        return None if _is_text(value) else (path or "value")
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        here = f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)
        if isinstance(key, str) and not _is_text(key):
            return f"{path}[key {shown(key)}]" if path else f"key {shown(key)}"
        found = non_text_field(item, here)
        if found is not None:
            return found
    return None


def _is_text(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def timeout_seconds(text):
    """A command-line timeout: finite seconds >= 0, 0 meaning no limit (returned as None)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a timeout is a finite number of seconds >= 0 (0: no limit), got {text!r}")
    return value or None
