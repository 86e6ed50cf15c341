"""The one exception the engine shows users: a message, never a traceback."""


class EngineError(Exception):
    """A problem with the inputs or with the decision process, described for a person."""
