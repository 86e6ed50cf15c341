"""`batloc scheduler SCHEDULER [-s ENDPOINT] [-o JSON]`: pybatsim's launcher, with one-line errors and loopback.

pybatsim 3.2.1's own launcher (`pybatsim`) decodes ``-o`` and binds its socket
before any batloc code runs, so a malformed ``-o`` or a port already taken ends
in its tracebacks; and it listens on every interface (``tcp://*:28000``) by
default. This command reads the same arguments, says what is wrong in one line
(exit status 2), listens on 127.0.0.1 unless told otherwise, then hands the
scheduler to pybatsim's loop. SCHEDULER is a file (``schedulers/lea.py``), a
name robin takes (``lea``, ``lea-bf``: batloc's policy, with backfilling for
``-bf``) or the name of one of pybatsim's stock schedulers (``schedFcfs``).
Logs at warning, as every batloc launch path (``-v info`` for pybatsim's
line per message).
"""

import argparse
import errno
import socket
import sys

from batloc.reading import DESCRIPTION_BYTES, Refused, read_bytes
from batloc.schedulers.loading import pybatsim_logging

PROG = "batloc scheduler"
DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"
BAD_INPUT = 2


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    p.add_argument("scheduler", help="a scheduler file (schedulers/lea.py), a name robin takes (lea, lea-bf) or a "
                                     "pybatsim stock scheduler (schedFcfs)")
    p.add_argument("-s", "--socket-endpoint", default=DEFAULT_ENDPOINT,
                   help=f"where to listen for the engine (default: {DEFAULT_ENDPOINT}; pybatsim's is tcp://*:28000)")
    options = p.add_mutually_exclusive_group()
    options.add_argument("-o", "--options", default="{}", help="the scheduler's options, a JSON object")
    options.add_argument("-O", "--options-file", help="a file holding the options as JSON")
    p.add_argument("-t", "--timeout", type=int, default=2000,
                   help="milliseconds between two looks at a silent engine (pybatsim's default: 2000)")
    p.add_argument("-v", "--verbosity", default="warning", choices=("debug", "info", "warning", "error", "critical"),
                   help="pybatsim's log level (default: warning; info logs every message, megabytes a run)")
    return p.parse_args(argv)


class LaunchError(Exception):
    """What stops the scheduler before it runs, in one line."""


def read_options(args):
    if args.options_file:
        try:
            text = read_bytes(args.options_file, DESCRIPTION_BYTES, "options file").decode("utf-8")
        except Refused as e:
            raise LaunchError(str(e)) from None
        except OSError as e:
            raise LaunchError(f"cannot read the options file {args.options_file}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise LaunchError(f"the options file {args.options_file} is not UTF-8 text") from None
        where = args.options_file
    else:
        text, where = args.options, "-o"
    from batloc.schedulers.loading import LoadError, options_json

    try:
        return options_json(text, where)
    except LoadError as e:
        raise LaunchError(str(e)) from None


def load(name, options):
    """The scheduler, loaded as pybatsim's launcher does (robin's names too), each failure one line
    (``schedulers.loading``)."""
    from batloc.schedulers.loading import LoadError
    from batloc.schedulers.loading import load as load_scheduler

    try:
        return load_scheduler(name, options)
    except LoadError as e:
        raise LaunchError(str(e)) from None


def check_endpoint(endpoint):
    """A port in use or a malformed TCP endpoint as one line, before pybatsim binds (and would raise).

    A plain socket is bound and released without listening: a ZeroMQ probe would
    accept an engine already trying the port and then drop it, which the engine
    takes for a dead scheduler. A port taken in the instant between is caught in
    `launch`; other transports (ipc://) are left to pybatsim.
    """
    if not endpoint.startswith("tcp://"):
        return
    host, sep, port = endpoint[len("tcp://"):].rpartition(":")
    if port == "*":
        return   # any free port, ZeroMQ's choice
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise LaunchError(f"cannot listen on {endpoint}: expected tcp://HOST:PORT, e.g. {DEFAULT_ENDPOINT}")
    host = host.strip("[]")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as ZeroMQ binds
        try:
            probe.bind(("" if host == "*" else host, int(port)))
        except OSError as e:
            raise LaunchError(_bind_error(endpoint, e)) from None


def _bind_error(endpoint, e):
    if e.errno == errno.EADDRINUSE:
        return (f"cannot listen on {endpoint}: the port is in use (another scheduler or program listens there; "
                "choose another with -s)")
    return f"cannot listen on {endpoint}: {e.strerror or e}"


def launch(args):
    import zmq
    from batsim.tools.launcher import launch_scheduler

    pybatsim_logging(args.verbosity)
    options = read_options(args)
    check_endpoint(args.socket_endpoint)
    scheduler = load(args.scheduler, options)
    _load_planning_core(scheduler)
    try:
        return launch_scheduler(scheduler, args.socket_endpoint, None, options, args.timeout, False)
    except zmq.ZMQError as e:
        if e.errno != errno.EADDRINUSE:
            raise
        raise LaunchError(_bind_error(args.socket_endpoint, e)) from None


def _load_planning_core(scheduler):
    """Loads (or compiles, minutes, said on stderr) a planning scheduler's
    compiled core in a thread while pybatsim binds and waits for the engine.

    The engine gives a scheduler `--ready-timeout` (robin's flag form: 10 s) to
    listen, then its reply timeout (600 s) to answer: a scheduler that loaded
    its core before listening missed the first under load (30 s from the
    cache). Bound first, it answers the first message once the core is there
    (``PlanningScheduler.onSimulationBegins`` waits for this thread)."""
    import threading

    from batloc.schedulers.boundary import note
    from batloc.schedulers.planning.planner import load_kernel
    from batloc.schedulers.planning.scheduler import PlanningScheduler

    if isinstance(scheduler, PlanningScheduler):
        threading.Thread(target=load_kernel, args=(note,), name="planning-core", daemon=True).start()


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return launch(args)
    except LaunchError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr, flush=True)
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
