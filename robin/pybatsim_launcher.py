"""`python -m batloc.robin.pybatsim_launcher ARGS…`: pybatsim's own launcher, its -v level kept on stderr.

pybatsim 3.2.1's launcher sets the root logger's level from `-v`, but its
high-level scheduler API (`batsim.sched`: schedFcfs, schedFiller, …) gives each
scheduler loggers of their own at INFO, with their own stderr handler, which
also pass every record on to the root's handler: each event is printed twice
whatever `-v` says (about 1.8 MB of log per simulated week). Run through here,
every stderr handler drops the records below `-v`'s level; files written by
those loggers (out_events.csv) keep every record. robin starts the pybatsim
commands of a description this way, with `-v warning` unless told otherwise.
"""

import logging
import os
import sys

from batloc.schedulers.loading import LEVELS, stderr_handlers_at


def verbosity(argv) -> int:
    """The level pybatsim's -v/--verbosity names (pybatsim's default: info)."""
    for i, a in enumerate(argv):
        if a in ("-v", "--verbosity") and i + 1 < len(argv):
            return LEVELS.get(argv[i + 1].lower(), logging.INFO)
        for flag in ("--verbosity=", "-v"):
            if a.startswith(flag) and len(a) > len(flag):
                return LEVELS.get(a[len(flag):].lower(), logging.INFO)
    return logging.INFO


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    stderr_handlers_at(verbosity(argv))
    # `python -m` put the working directory first on sys.path: a folder named `schedulers` there
    # (this repository's root) would hide pybatsim's own stock schedulers
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    from batsim.cmds.launcher import main as launch

    sys.argv = ["pybatsim", *argv]
    return launch()


if __name__ == "__main__":
    sys.exit(main())
