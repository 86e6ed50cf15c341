"""A sweep's runs as Dask tasks: `robin SWEEP.yaml --dask [ADDRESS | local[:N]]`.

Each run (engine + scheduler, pinned together on one CPU of its worker's
machine) is one task. Dask places the tasks on workers and retries them:
once when the run's processes fail (`retries=1`; not an invalid schedule,
which would only be invalid again), and, on the LocalCluster robin
starts, once when its worker dies under it (`allowed-failures` 1; a remote
scheduler keeps its own setting). What robin still does itself is only what
Dask cannot know about: a run's port is taken on its worker when it starts,
its two process groups die with the worker (robin.guard), and a stop request
reaches the runs of this sweep on every worker.

Outputs are written by the workers straight into the sweep's output folder:
workers and robin must see the same file system at the same paths (as with
batexpe). robin reads which runs are complete there, and builds the report
there at the end. The sweep itself (what is complete, the tally, the
display, the report) is robin.sweep's, as with threads.
"""

from __future__ import annotations

import copy
import logging
import signal
import sys
import threading
import time
import uuid
from contextlib import contextmanager

from batloc.processes import LOOPBACK

from . import process as robin_process
from . import runs as robin_runs
from .outcome import FAILED, NOT_STARTED, STOPPED, SUCCESS, outcome_message, outcome_status

LOCAL = "local"
DASHBOARD_PORT = 8787  # Dask's usual one; Dask takes a free port when it is busy
STOP_WAIT = 30.0       # how long a stopped sweep waits for its running runs to record themselves


class DaskUnavailable(RuntimeError):
    pass


class RunFailed(Exception):
    """A run that failed on its worker; the message is robin's failure message (reason + log tails)."""


# --- on the workers ---------------------------------------------------------

_STOPS: dict[str, robin_process.Stop] = {}
_STOPS_LOCK = threading.Lock()


def _stop_of(sweep_id: str) -> robin_process.Stop:
    with _STOPS_LOCK:
        return _STOPS.setdefault(sweep_id, robin_process.Stop())


def stop_sweep(sweep_id: str, signum: int) -> None:
    """Run on every worker by `Client.run`: the runs of this sweep stop (other sweeps' runs go on)."""
    _stop_of(sweep_id).set(signum)


def forget_sweep(sweep_id: str) -> None:
    with _STOPS_LOCK:
        _STOPS.pop(sweep_id, None)


def run_one(spec: robin_runs.RunSpec, sweep_id: str):
    """The task: one run on this worker. Returns (status, wall seconds, message); raises RunFailed so
    that Dask retries a run whose processes failed (an invalid schedule would only be invalid again)."""
    stop = _stop_of(sweep_id)
    if stop.is_set():
        return NOT_STARTED, 0.0, ""
    spec = copy.deepcopy(spec)   # an in-process cluster shares the object with the client
    robin_runs.bind_commands(spec)
    outcome = robin_runs.execute(spec, log=lambda msg: None, stop=stop)
    status = outcome_status(outcome, stop)
    if status == FAILED:
        raise RunFailed(robin_runs.failure_message(spec, outcome))
    return status, outcome.wall_seconds, outcome_message(spec, outcome) if status != SUCCESS else ""


def _interrupts_ignored(distributed):
    """A worker plugin: a LocalCluster's workers share robin's terminal, whose Ctrl-C is robin's to
    handle (it stops the runs in order), not theirs. A plugin also reaches workers restarted later."""

    class IgnoreInterrupts(distributed.WorkerPlugin):
        name = "batloc-robin-ignore-sigint"

        def setup(self, worker):
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            except ValueError:   # not the main thread: nothing to protect there
                pass

    return IgnoreInterrupts()


# --- on robin's side --------------------------------------------------------

def _import_dask():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise DaskUnavailable("--dask needs the dask and distributed packages: pip install 'batloc[dask]'") from None
    return distributed


def check_installed() -> None:
    """DaskUnavailable, naming how to install it, when dask or distributed is missing."""
    _import_dask()


def local_workers(address: str, default: int) -> int | None:
    """N for `local` / `local:N` (default when N is absent), None for a scheduler address."""
    if address == LOCAL:
        return max(1, default)
    if address.startswith(LOCAL + ":"):
        text = address[len(LOCAL) + 1:]
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"--dask {address}: expected local:N with N ≥ 1 workers")
        return int(text)
    return None


@contextmanager
def connect(address: str, default_workers: int, log):
    """A Client on `address`, or on a LocalCluster bound to loopback only (scheduler, workers, dashboard)."""
    distributed = _import_dask()
    import dask

    n = local_workers(address, default_workers)
    if n is None:
        try:
            client = distributed.Client(address, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        with client:
            log(f"robin: Dask scheduler {address}, {len(client.scheduler_info()['workers'])} worker(s), "
                f"dashboard {client.dashboard_link}")
            yield client
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, host=LOOPBACK,
            dashboard_address=f"{LOOPBACK}:{DASHBOARD_PORT}", worker_dashboard_address=None,
            silence_logs=logging.ERROR)
    with cluster, distributed.Client(cluster) as client:
        client.register_plugin(_interrupts_ignored(distributed))
        log(f"robin: Dask LocalCluster of {n} worker(s) on {LOOPBACK}, scheduler {cluster.scheduler_address}, "
            f"dashboard {client.dashboard_link}")
        yield client


def run(todo: list[robin_runs.RunSpec], address: str, default_workers: int, log, display) -> None:
    """Run `todo` on Dask, recording each run's end on `display` (robin.sweep). Ctrl-C/SIGTERM: see robin.cli."""
    distributed = _import_dask()
    if not todo:
        return
    with connect(address, default_workers, display.say) as client:
        sweep_id = uuid.uuid4().hex
        futures = {client.submit(run_one, spec, sweep_id, key=f"robin-{spec.name}-{sweep_id[:8]}",
                                 retries=1, pure=False): spec for spec in todo}
        pending = set(futures)
        try:
            while pending and not robin_process.STOP.is_set():
                done = [f for f in pending if f.done()]
                for fut in done:
                    pending.discard(fut)
                    _record(fut, futures[fut], display, distributed)
                if not done:
                    time.sleep(0.1)
            if robin_process.STOP.is_set():
                _stop(client, sweep_id, pending, futures, display, distributed)
        finally:
            try:
                client.run(forget_sweep, sweep_id)
            except Exception:  # the cluster may be gone already; the entry is a few bytes
                pass


def _record(fut, spec, display, distributed) -> None:
    if fut.status == "cancelled":
        display.record(spec, NOT_STARTED)
        return
    if fut.status == "finished":
        status, wall, message = fut.result()
        display.record(spec, status, wall, message)
        return
    exc = fut.exception()
    if isinstance(exc, RunFailed):
        message = str(exc)
    elif isinstance(exc, distributed.KilledWorker):
        message = f"robin: run {spec.name} FAILED: its Dask worker died while running it, on every try"
    else:
        message = f"robin: run {spec.name} FAILED on Dask: {type(exc).__name__}: {exc}"
    display.record(spec, FAILED, 0.0, message)


def _stop(client, sweep_id, pending, futures, display, distributed) -> None:
    """Stop this sweep's runs on every worker, keep what finished, count what never started."""
    signum = robin_process.STOP.signum or signal.SIGTERM
    try:
        client.run(stop_sweep, sweep_id, signum)
    except Exception as exc:  # workers unreachable: their runs die with them (robin.guard)
        display.say(f"robin: could not reach every Dask worker to stop its runs: {exc}", sys.stderr)
    queued = [f for f in pending if f.key not in _running_keys(client)]
    client.cancel(queued)
    deadline = time.monotonic() + STOP_WAIT
    while pending and time.monotonic() < deadline:
        done = [f for f in pending if f.done()]
        for fut in done:
            pending.discard(fut)
            _record(fut, futures[fut], display, distributed)
        time.sleep(0.05)
    for fut in pending:   # still running after the wait: counted as stopped
        display.record(futures[fut], STOPPED)


def _running_keys(client) -> set:
    try:
        return {key for keys in client.processing().values() for key in keys}
    except Exception:
        return set()
