"""The engine's end of the link when the decision process runs inside the engine (``--in-process``).

Batsim 5 can load a decision component as a library and call it; here a
pybatsim scheduler, unchanged, is loaded into the engine's process
(``schedulers.loading``) and called at each message, without ZeroMQ and
without a thread: pybatsim's ``Batsim`` object gets
``schedulers.link.LocalNetwork`` instead of its socket, the engine delivers
each message's bytes to it and runs pybatsim's own handler for one message
(``do_next_event``), and takes the answer's bytes back. The bytes are those of
a ZeroMQ run (same encoder and decoder on both ends), so the outputs are too.

A call costs what the scheduler's work costs: no second process or thread to
wake (measured: a scheduler in a child process over a pipe cost 20 % more
CPU on a saturated slice, ZeroMQ 36 %; ``docs/performance.md``). What a call
cannot do by itself — give up on a scheduler that hangs, act on a signal in
the middle of one, survive a scheduler that segfaults, exits or exhausts the
memory — the engine's supervisor does (``supervisor``): each call is stamped
in memory it shares (`stamp`), and the supervisor ends a call that outlives
the reply timeout or a signal, or an engine that died in one, and rebuilds
the outputs from the run's journal. A scheduler that raises (anything but
SystemExit: KeyboardInterrupt and other BaseExceptions too) or stops
(``SystemExit``: it printed its one line) ends the run here, as a scheduler
that died over ZeroMQ does: an EngineError at that simulated time, the
outputs written; its traceback, if any, is printed first by the scheduler's
own ``sys.excepthook``, as its process would.
"""

import contextlib
import sys
import time


from .errors import EngineError, Interrupted


class InProcessLink:
    def __init__(self, scheduler, options_text="{}", verbosity="warning", timed=False, stamp=None,
                 export_prefix=None, stop=None):
        """`export_prefix`: the engine's own (absolute), given to a batloc policy whose options name none, so that
        its decision log lands beside jobs.csv as in a robin run (the analysis reads both). `stop`: the engine's
        ``signals.StopOnSignal``."""
        from batloc.schedulers.loading import LoadError, batloc_policy, load, options_json, pybatsim_logging

        self.name = scheduler
        self.stamp = stamp   # supervisor.Stamp: when the current call began (None outside calls)

        try:
            options = options_json(options_text, "--scheduler-options")
        except LoadError as e:
            raise EngineError(str(e)) from None
        if export_prefix is not None and isinstance(options, dict) and "export_prefix" not in options \
                and batloc_policy(scheduler):
            options["export_prefix"] = export_prefix
        # pybatsim's launcher sets up logging before it loads a scheduler: so do we, at its -v level
        pybatsim_logging(verbosity)
        started = time.thread_time()
        if stamp is not None:
            stamp.loading()
        # signals.StopOnSignal: the scheduler loads with the signals unblocked, so that what it starts does not
        # inherit them blocked (its calls run in the simulation's thread, which has them unblocked for good)
        try:
            with stop.unblocked() if stop is not None else contextlib.nullcontext():
                self.scheduler = load(scheduler, options)
        except LoadError as e:
            raise EngineError(f"--in-process: {e}") from None
        except SystemExit as e:   # the scheduler refused its options (it printed its line)
            raise EngineError(f"the in-process scheduler {scheduler} did not start (exit status {e.code})") from None
        except Interrupted:
            raise                 # a signal to the engine while the scheduler loads
        except BaseException as e:  # noqa: BLE001  (its own KeyboardInterrupt, say: ours are Interrupted)
            raise EngineError(f"--in-process: {scheduler} raised {type(e).__name__} while loading") from None
        finally:
            if stamp is not None:
                stamp.idle()
        self.bs = None            # pybatsim's Batsim, made at the first message (its constructor reads it)
        self.network = None
        self.ended = False
        # CPU seconds spent in the scheduler: loading it, then pybatsim's handler and its callbacks; only
        # when asked (`timed`): two reads of the thread's clock per message cost 1-2 % of a saturated run
        self.cpu = time.thread_time() - started if timed else None
        self.clock = time.thread_time if timed else _no_clock

    def exchange(self, payload, now):
        """Run the scheduler over the message `payload` (bytes); return its answer's bytes, or raise EngineError."""
        if self.ended:
            raise EngineError(f"the engine sent a message at t={now:.6f} after SIMULATION_ENDS")
        started = self.clock()
        stamp = self.stamp
        if stamp is not None:
            stamp.call(now)
        try:
            if self.bs is None:
                self._start(payload)
            else:
                self.network.deliver(payload)
                self.ended = not self.bs.do_next_event()
        except SystemExit as e:
            raise EngineError(f"the in-process scheduler {self.name} stopped at simulated time {now:.6f} "
                              f"(exit status {e.code})") from None
        except BaseException as e:  # noqa: BLE001  (whatever the scheduler raises ends the run, in one line)
            sys.excepthook(type(e), e, e.__traceback__)
            raise EngineError(f"the in-process scheduler {self.name} failed at simulated time {now:.6f}: "
                              f"{type(e).__name__} (see above)") from None
        finally:
            if stamp is not None:
                stamp.idle()
            if self.cpu is not None:
                self.cpu += self.clock() - started
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
