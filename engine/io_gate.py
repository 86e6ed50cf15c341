"""Exclusive file-system access: one job's I/O at a time, first come first served.

A storage host with the property ``pfs_access=exclusive`` (contract §7) is
used by one job's transfers at a time: a phase that moves bytes to or from it
waits until the job using it has finished its phase, in the order the phases
asked, and is never pre-empted (Jeannot et al.'s machine model, where an I/O
middleware serialises the applications' I/O). Without the property, transfers
share the links as SimGrid's max-min model computes.

The engine asks ``admit`` before a phase starts; a job held back keeps that
phase and is resumed through the engine's ``io_granted`` when its turn comes;
the wait is part of the phase, so its walltime runs on meanwhile. ``leave`` is called whenever a job moves past a phase, ``forget`` when
a job ends (killed while waiting or holding).
"""

import itertools
from collections import deque

from batloc.platforms.generator import PFS_ACCESS as MODES

from .errors import EngineError


def exclusive_io(platform, resume):
    """The gate of `platform`'s exclusive storages, or None when every storage is shared."""
    hosts = []
    for r in platform.storage:
        mode = r.properties.get("pfs_access", "shared")
        if mode not in MODES:
            raise EngineError(f"{platform.path}: host {r.name!r} has pfs_access={mode!r} "
                              f"(expected one of {', '.join(MODES)})")
        if mode == "exclusive":
            hosts.append(r.name)
    return ExclusiveIO(hosts, resume) if hosts else None


class ExclusiveIO:
    def __init__(self, hosts, resume):
        self.hosts = frozenset(hosts)
        self.resume = resume
        self.holder = {}     # host name -> job granted the host
        self.running = set()  # jobs whose granted phase has started
        self.waiting = {h: deque() for h in self.hosts}
        self.where = {}      # job -> host it holds or waits for

    def _host(self, phase):
        hosts = self.hosts
        for src, dst, _ in phase.comms:
            if src.name in hosts:
                return src.name
            if dst.name in hosts:
                return dst.name
        return None

    def admit(self, job, phase):
        """True if `phase` of `job` may start now; otherwise the job queues with it."""
        host = self._host(phase)
        if host is None:
            return True
        holder = self.holder.get(host)
        if holder is None or holder is job:
            self.holder[host] = job
            self.where[job] = host
            self.running.add(job)
            return True
        self.waiting[host].append(job)
        self.where[job] = host
        job.runner = itertools.chain((phase,), job.runner)
        return False

    def leave(self, job):
        """`job` finished its phase: free the host it was using, if any."""
        if job in self.running:
            self._free(job)

    def forget(self, job):
        """`job` ended: drop it from the queue or free the host it held."""
        host = self.where.get(job)
        if host is None:
            return
        if self.holder.get(host) is job:
            self._free(job)
        else:
            self.waiting[host].remove(job)
            del self.where[job]

    def _free(self, job):
        host = self.where.pop(job)
        self.running.discard(job)
        del self.holder[host]
        queue = self.waiting[host]
        if queue:
            nxt = queue.popleft()
            self.holder[host] = nxt   # granted now: no later request may overtake it
            self.resume(nxt)
