"""The engine's end of the link when the decision process runs inside the engine (``--in-process``).

Batsim 5 can load a decision component as a library and call it; here a
pybatsim scheduler, unchanged, is loaded into the engine's process and
called at each message, without ZeroMQ and without a thread: pybatsim's
``Batsim`` object gets ``schedulers.link.LocalNetwork`` instead of its
socket, the engine delivers each message's bytes to it and runs pybatsim's
own handler for one message (``do_next_event``), and takes the answer's
bytes back. The bytes are those of a ZeroMQ run (same encoder and decoder on
both ends), so the outputs are too.

A scheduler that stops (``SystemExit``: it printed its one line) or raises
ends the run as a scheduler that died over ZeroMQ does: an EngineError at
that simulated time, the outputs written. Its traceback, if any, is printed
first by the scheduler's own ``sys.excepthook``, as its process would.
"""

import json
import logging
import sys
import time

from .errors import EngineError


class InProcessLink:
    def __init__(self, scheduler, options_text="{}", verbosity="warning", timed=False):
        from batloc.cli.scheduler import LaunchError, load
        from batloc.robin.pybatsim_launcher import LEVELS, stderr_handlers_at

        self.name = scheduler
        try:
            options = json.loads(options_text)
        except json.JSONDecodeError as e:
            raise EngineError(f"--scheduler-options is not JSON ({e.msg} at column {e.colno}): {options_text!r}; "
                              "options are a JSON object such as '{\"cache\": \"lru\"}'") from None
        # pybatsim's launcher sets up logging before it loads a scheduler: so do we, at its -v level
        level = LEVELS[verbosity]
        stderr_handlers_at(level)
        logging.basicConfig(format="[pybatsim - %(asctime)s - %(name)s - %(levelname)s] %(message)s", level=level)
        started = time.thread_time()
        try:
            self.scheduler = load(scheduler, options)
        except LaunchError as e:
            raise EngineError(f"--in-process: {e}") from None
        except SystemExit as e:   # the scheduler refused its options (it printed its line)
            raise EngineError(f"the in-process scheduler {scheduler} did not start (exit status {e.code})") from None
        self.bs = None            # pybatsim's Batsim, made at the first message (its constructor reads it)
        self.network = None
        self.ended = False
        self.answered = False
        # CPU seconds spent in the scheduler: loading it, then pybatsim's handler and its callbacks; only
        # when asked (`timed`): two reads of the thread's clock per message cost 1-2 % of a saturated run
        self.cpu = time.thread_time() - started if timed else None
        self.clock = time.thread_time if timed else _no_clock

    def exchange(self, payload, now):
        """Run the scheduler over the message `payload` (bytes); return its answer's bytes, or raise EngineError."""
        if self.ended:
            raise EngineError(f"the engine sent a message at t={now:.6f} after SIMULATION_ENDS")
        started = self.clock()
        try:
            if self.bs is None:
                self._start(payload)
            else:
                self.network.deliver(payload)
                self.ended = not self.bs.do_next_event()
        except SystemExit as e:
            raise EngineError(f"the in-process scheduler {self.name} stopped at simulated time {now:.6f} "
                              f"(exit status {e.code})") from None
        except Exception as e:  # noqa: BLE001  (whatever the scheduler raises ends the run, in one line)
            sys.excepthook(type(e), e, e.__traceback__)
            raise EngineError(f"the in-process scheduler {self.name} failed at simulated time {now:.6f}: "
                              f"{type(e).__name__} (see above)") from None
        finally:
            if self.cpu is not None:
                self.cpu += self.clock() - started
        self.answered = True
        answer = self.network.answer
        if answer is None:
            raise EngineError(f"the in-process scheduler {self.name} did not answer at simulated time {now:.6f}")
        return answer

    def _start(self, payload):
        """pybatsim's Batsim on a LocalNetwork: its constructor reads and answers the first message."""
        import batsim.batsim as pybatsim
        from batloc.schedulers.link import LocalNetwork

        network = self.network = LocalNetwork()
        network.deliver(payload)
        # Batsim's constructor makes its own handler by this module-level name: it gets ours
        real = pybatsim.NetworkHandler
        pybatsim.NetworkHandler = lambda endpoint, timeout=None: network
        try:
            self.bs = pybatsim.Batsim(self.scheduler, "in-process", None)
        finally:
            pybatsim.NetworkHandler = real

    @property
    def reached(self):
        """Whether the scheduler took the engine's first message."""
        return self.bs is not None or self.network is not None

    def close(self):
        pass


def _no_clock():
    return 0.0
