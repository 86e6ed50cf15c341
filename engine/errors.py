"""The exceptions the engine shows users: a message, never a traceback."""

import signal


class EngineError(Exception):
    """A problem with the inputs or with the decision process, described for a person."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM, SIGINT or SIGHUP: the run stops (at simulated time `now`, if it had started).

    A KeyboardInterrupt, so that code which catches whatever a scheduler raises (``Exception``, or
    KeyboardInterrupt apart: the scheduler loader) lets it through instead of calling the scheduler broken."""

    def __init__(self, signum, now=None):
        self.signum = signum
        self.now = now
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name} " + ("before the simulation started" if now is None else f"at t={now:.6f}"))

    @property
    def exit_status(self):
        return 128 + self.signum
