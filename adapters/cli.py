"""`batloc-stage-proxy`: make any Batsim 4 scheduler pay for loading input files.

    batloc-stage-proxy --bind tcp://127.0.0.1:28000 --connect tcp://localhost:28001 \\
        [--cache paper|strict|lru] [--decisions PREFIX_decisions.csv | --export-prefix PREFIX] \\
        [--walltime-excludes-load] [--one-node] [-- SCHEDCMD ...]

The engine (run with --enable-dynamic-jobs) connects to --bind as it would to
a scheduler; the proxy connects to the wrapped scheduler at --connect. With a
trailing SCHEDCMD the proxy starts it in its own process group and stops it
on exit; if --connect is omitted then, the proxy picks a free local port and
appends `-s tcp://127.0.0.1:PORT` to SCHEDCMD (pybatsim's and batsched's flag).
Exit status 0 iff the simulation ended and the wrapped scheduler (if started
here) exited with 0.
"""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import threading

from batloc.engine.checks import timeout_seconds
from batloc.engine.network import REPLY_TIMEOUT
from batloc.locality.cache import MODELS
from batloc.outputs import OutputError
from batloc.processes import LOOPBACK, free_port, pybatsim_command, stop_group, stop_tagged, tagged_environment

from .errors import ProxyError
from .proxy import StageProxy
from .relay import Relay

PROG = "batloc-stage-proxy"


def parse_args(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    else:
        command = []
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See docs/contract.md §3 for what a staging is.")
    # Loopback only unless asked: whoever reaches this port can drive the simulation.
    p.add_argument("-s", "--bind", default="tcp://127.0.0.1:28000",
                   help="where the engine connects (default: tcp://127.0.0.1:28000, this machine only; "
                        "e.g. tcp://0.0.0.0:28000 accepts engines from anywhere)")
    p.add_argument("--connect", default=None,
                   help="where the wrapped scheduler listens (default: tcp://localhost:28001, "
                        "or a free port given to SCHEDCMD)")
    p.add_argument("--cache", choices=MODELS, default="paper",
                   help="node memory model, as the schedulers' `cache` option (default: paper)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--decisions", help="write the decision log to this file")
    out.add_argument("--export-prefix", help="write the decision log to PREFIX_decisions.csv")
    wall = p.add_mutually_exclusive_group()
    wall.add_argument("--walltime-includes-load", dest="walltime_includes_load", action="store_true", default=True,
                      help="the paper's rule (default): a job's load counts against its walltime, so the proxy "
                           "kills it at the instant its scheduler executed it + its walltime, as batloc's "
                           "schedulers kill at t_k + walltime")
    wall.add_argument("--walltime-excludes-load", dest="walltime_includes_load", action="store_false",
                      help="the engine's walltime, counted from the execution (after the load), is the only kill "
                           "(batloc's schedulers: option walltime_includes_load false)")
    p.add_argument("--one-node", action="store_true",
                   help="a stated deviation: move an allocation that spans nodes onto one node when the job asks "
                        "for no more cores than a node has and one node has them free at that instant (the wrapped "
                        "scheduler keeps its own ids); separates node-unawareness from file-unawareness")
    p.add_argument("--scheduler-registers", action="store_true",
                   help="the wrapped scheduler registers jobs itself: show it the engine's dynamic-job "
                        "config and wait for its own NOTIFY registration_finished")
    p.add_argument("--ready-timeout", type=timeout_seconds, default=30.0,
                   help="seconds to wait for the wrapped scheduler's first answer (default: 30; 0: no limit)")
    p.add_argument("--reply-timeout", type=timeout_seconds, default=REPLY_TIMEOUT,
                   help=f"seconds to wait for any later answer (default: {REPLY_TIMEOUT:g}, as the engine; "
                        "0: no limit)")
    p.add_argument("--exit-timeout", type=timeout_seconds, default=10.0,
                   help="seconds a started SCHEDCMD has to exit after the simulation (default: 10; 0: no limit)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    args = p.parse_args(argv)
    args.command = command
    if len(args.command) == 1 and " " in args.command[0]:
        args.command = shlex.split(args.command[0])   # SCHEDCMD given as one quoted string
    return args


def _child_setup():
    # Own process group (so it can be stopped as a whole), and a SIGTERM if the
    # proxy dies without its `finally` (SIGKILL): no orphan keeps the port.
    os.setsid()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_child(command, tag_env):
    """The wrapped scheduler, in its own session, with `tag_env` (``processes.tagged_environment``)."""
    if command[0] == "pybatsim":
        # the one found beside this Python when no `pybatsim` is on PATH (an unactivated virtualenv),
        # at warning unless the command says otherwise (pybatsim logs every message at info)
        verbose = any(w.startswith(("-v", "--verbosity")) for w in command[1:])
        command = pybatsim_command() + command[1:] + ([] if verbose else ["-v", "warning"])
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=_child_setup, env=tag_env)
    except OSError as e:
        raise ProxyError(f"cannot start the wrapped scheduler {shlex.join(command)!r}: {e}") from None


def _terminate(signum, frame):
    raise SystemExit(128 + signum)   # unwinds through `finally`: the child is stopped


def run(args):
    say = (lambda text: None) if args.quiet else (lambda text: print(f"{PROG}: {text}", file=sys.stderr,
                                                                       flush=True))
    connect = args.connect
    command = list(args.command)
    if command and connect is None:
        connect = f"tcp://{LOOPBACK}:{free_port()}"
        command += ["-s", connect]
    connect = connect or "tcp://localhost:28001"
    decisions = args.decisions or (f"{args.export_prefix}_decisions.csv" if args.export_prefix else None)
    if decisions:
        try:    # now, not when the simulation begins: a wrong path is said before anything runs
            if os.path.dirname(decisions):
                os.makedirs(os.path.dirname(decisions), exist_ok=True)
            open(decisions, "a").close()
        except FileExistsError:
            raise ProxyError(f"cannot write the decision log {decisions}: {os.path.dirname(decisions)} "
                             "is a file, not a folder") from None
        except OSError as e:
            raise ProxyError(f"cannot write the decision log {decisions}: {e.strerror or e}") from None
    relay = Relay(args.cache, decisions, args.scheduler_registers, args.walltime_includes_load, args.one_node)
    child = proxy = None
    tag, tag_env = tagged_environment()
    try:
        # Bind first: if the port is taken there is no scheduler to clean up.
        proxy = StageProxy(args.bind, connect, relay, None, args.ready_timeout, args.reply_timeout)
        if command:
            child = start_child(command, tag_env)
            proxy.engine.child = proxy.sched.child = child
        say(f"engine side {args.bind}, scheduler {connect}"
            + (f" (started: {shlex.join(command)})" if command else "") + f", cache model {args.cache}, "
            + ("load counted against the walltime" if args.walltime_includes_load else "walltime from the execution")
            + (", allocations kept on one node when they fit" if args.one_node else ""))
        proxy.run()
        state = relay.state
        moved = relay.one_node.moved if relay.one_node else 0
        say(f"simulation ended at t={relay.now:.6f}: {proxy.messages} engine messages "
            f"({proxy.woken} forwarded), {state.nb_stagings if state else 0} stagings"
            + (f", {moved} allocations moved onto one node" if args.one_node else "")
            + (f", decisions in {decisions}" if decisions else ""))
        if child is not None:
            try:
                rc = child.wait(args.exit_timeout)
            except subprocess.TimeoutExpired:
                raise ProxyError(f"the wrapped scheduler did not exit within {args.exit_timeout:g} s "
                                 "after the simulation ended") from None
            if rc != 0:
                raise ProxyError(f"the wrapped scheduler exited with status {rc} after the simulation")
        return 0
    finally:
        if relay.state is not None and relay.state.log is not None:
            relay.state.log.close()
        if child is not None:
            stop_group(child)   # its whole group: pybatsim under a shell, or a scheduler's own children
            left = stop_tagged(tag)   # and what left the group (setsid, a daemon's double fork)
            if left:
                say(f"ended {len(left)} process(es) the wrapped scheduler left outside its process group: "
                    f"{'; '.join(left[:3])}")
        if proxy is not None:
            proxy.close()


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else list(argv))
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return run(args)
    except (ProxyError, OutputError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
