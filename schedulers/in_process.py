"""The scheduler's end of ``batloc-batsim --in-process``: a child of the engine that loads one pybatsim
scheduler and answers the engine's messages over a pair of pipes.

Why a child and not a call inside the engine: a scheduler called in the
engine's own thread holds the engine hostage — while it hangs, nothing can
act on a timeout or a SIGTERM, and when it segfaults, calls ``os._exit`` or
is killed for its memory, the engine dies with it and no row is written.
Here the engine waits for each answer as it waits for a ZeroMQ one (reply
timeout, signals, a peer that died), and the scheduler runs unchanged:
pybatsim's own ``Batsim`` loop, whose network handler reads and writes these
pipes (``link.PipeNetwork``) with the encoder and decoder of a ZeroMQ run, so
both modes exchange the same bytes. A pipe costs about 5 µs a round trip
where ZeroMQ costs 100-150 µs (``docs/performance.md``).

The child answers ``READY`` once loaded (or ``LOAD_ERROR`` and its one
line), then one ``ANSWER`` per ``MESSAGE`` (``pipes``), or ``FAILED`` and the
name of what the scheduler raised (its traceback is on stderr first, printed
by its ``sys.excepthook`` as its own process would).
A scheduler that exits (``SystemExit``: it printed its own line) just ends the
process; the engine reads its exit status. The child ignores SIGINT, SIGTERM
and SIGHUP (the engine acts on them and then ends it) and dies with the
engine (``PR_SET_PDEATHSIG``), so a killed engine leaves no scheduler behind.
"""

import os
import signal
import sys

from batloc.schedulers.pipes import FAILED, LOAD_ERROR, READY, Frames, PeerGone


def _die_with(parent):
    """Be killed when the engine dies, whatever kills it (Linux); a parent already gone ends us now."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass   # not Linux: a dead engine still closes the pipe, which ends a child waiting for a message
    if os.getppid() != parent:
        os._exit(1)


def serve(scheduler, frames):
    """pybatsim's own loop over the pipes, until SIMULATION_ENDS is answered."""
    import batsim.batsim as pybatsim

    from batloc.schedulers.link import PipeNetwork

    network = PipeNetwork(frames)
    # Batsim's constructor makes its own handler by this module-level name (and reads the first message)
    real = pybatsim.NetworkHandler
    pybatsim.NetworkHandler = lambda endpoint, timeout=None, type=None: network
    try:
        bs = pybatsim.Batsim(scheduler, "in-process", None)
    finally:
        pybatsim.NetworkHandler = real
    bs.start()


def main(argv=None):
    import json

    from batloc.schedulers.loading import LoadError, load, pybatsim_logging

    read_fd, write_fd, parent, name, options, verbosity = (sys.argv[1:] if argv is None else argv)
    _die_with(int(parent))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    frames = Frames(int(read_fd), int(write_fd))
    pybatsim_logging(verbosity)
    try:
        try:
            scheduler = load(name, json.loads(options))
        except LoadError as e:
            frames.write(LOAD_ERROR, str(e).encode())
            return 1
        except SystemExit:
            raise   # the scheduler refused its options in its own line: its exit status tells the engine
        except BaseException as e:  # noqa: BLE001  (KeyboardInterrupt raised by the scheduler's own code)
            frames.write(LOAD_ERROR, f"{name} raised {type(e).__name__} while loading".encode())
            return 1
        frames.write(READY)
        try:
            serve(scheduler, frames)
        except PeerGone:
            return 0   # the engine ended the run (its own line says why): leave, files flushed by a normal exit
        except SystemExit:
            raise
        except BaseException as e:  # noqa: BLE001  (whatever the scheduler raises ends the run, in one line)
            sys.excepthook(type(e), e, e.__traceback__)
            sys.stderr.flush()
            frames.write(FAILED, type(e).__name__.encode())
            return 1
        return 0
    except PeerGone:
        return 1


if __name__ == "__main__":
    sys.exit(main())
