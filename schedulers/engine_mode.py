"""Which of the embedded engine's modes a scheduler's options need (contract §4), for those that start the engine.

Kept apart from the scheduler modules so that robin and the engine read it without loading pybatsim or numba.
"""


def wants_instant_engine(options: dict) -> bool:
    """Whether these scheduler options need the embedded engine's instant mode (contract §4): the `authors`
    profile reproduces a C simulator whose clock sees every event of one second at once; under Batsim's
    message timing an instant's ends and starts may reach it in several messages, and its mean stretch on
    oracle-saturated drifted 7-20 % from C's (within 2 % in the instant mode). robin and the in-process
    engine turn the mode on for it; over ZeroMQ it is the engine's `--instant`."""
    return isinstance(options, dict) and options.get("profile") == "authors"
