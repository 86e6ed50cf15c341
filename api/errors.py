"""The one error type of batloc's Python API."""


class BatlocError(Exception):
    """What went wrong, in one line naming the input, run, job or option at fault (never a traceback from deep
    inside: the API raises it from the error batloc's commands would have printed)."""
