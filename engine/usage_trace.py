"""Batsim 4.2.1's `usage_trace` profile: per-rank CPU usage traces, replayed as SimGrid parallel tasks.

What Batsim does (``profiles.cpp``, ``jobs_execution.cpp``, ``batsim.cpp`` at
v4.2.1, SimGrid 3.34's ``xbt_replay.cpp``):

- the profile's `trace` file, relative to the workload file's folder, lists one
  file per rank (each line right-trimmed, relative to the list's folder);
- rank i runs as an actor on allocated host i mod the job's size, replaying its
  file with SimGrid's replay runner: lines trimmed, empty lines and lines
  starting with '#' skipped, a last line without a newline never read (the
  reader stops at end of file), a line for another rank ignored; each action
  ``RANK m_usage USAGE FLOPS`` is one L07 parallel task on k copies of the
  rank's host, FLOPS each, k = max(round(USAGE x cores), 1), waited for;
- a rank done puts 4 bytes into a mailbox the job's executor (on its first host)
  takes one at a time: so the ranks' ends cross the platform one after the
  other, in the order the ranks finished; the job ends at the last one;
- at the walltime the executor kills the ranks still running (their tasks stop,
  unlike a parallel task's, which runs on).

Everything here is SimGrid's own work (parallel tasks, transfers): the engine
asks its bindings for exactly those activities, so the timing is SimGrid's.
"""

import math
import os
import re

from batloc.reading import TRACE_BYTES, Refused, clipped, excerpt, read_bytes, size_text

from .errors import EngineError

ACTION = "m_usage"          # the only replay action Batsim registers (batsim.cpp)
TERMINATION_BYTES = 4       # a rank's end, put into the executor's mailbox
PATH_SHOWN = 300            # a trace path longer than this (a list's line may be anything) is cut in errors
_SPACE = " \t\n\v\f\r"      # what boost::trim and std::stod skip (the C locale's isspace)
_SEPARATORS = re.compile(r"[ \t]+")
# The longest prefix std::stod reads as a decimal number (it ignores what follows)
_STOD = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))", re.I)


class UsageTrace:
    """A phase: each rank's actions [(usage, flops), ...] on its host; the executor's host gets their ends."""

    __slots__ = ("ranks", "executor")

    def __init__(self, ranks, executor):
        self.ranks = ranks          # [(host, [(usage, flops), ...]), ...] in rank order
        self.executor = executor


def phase(trace, hosts):
    """The phase of a usage-trace profile whose rank files read as `trace` ([[(usage, flops)...]...]) on `hosts`."""
    # Batsim's default mapping: round-robin over the job's requested resources (= its allocation here)
    return UsageTrace([(hosts[rank % len(hosts)], actions) for rank, actions in enumerate(trace)], hosts[0])


class TraceBudget:
    """What one workload's usage traces may read: files inside the workload's folder (unless `anywhere`, the
    engine's --traces-anywhere: Batsim follows any path), TRACE_BYTES in all (a list may name one rank file a
    million times)."""

    def __init__(self, workload_path, anywhere=False):
        self.folder = os.path.realpath(os.path.dirname(os.path.abspath(workload_path)))
        self.anywhere = anywhere
        self.left = TRACE_BYTES

    def read(self, path, where, what):
        """The text of one trace file, counted against the budget; EngineError names it and the bound."""
        if not self.anywhere:
            real = os.path.realpath(path)
            if os.path.commonpath([self.folder, real]) != self.folder:
                raise EngineError(f"{where}: {what} {clipped(path, PATH_SHOWN)} is outside the workload's folder {self.folder}: "
                                  "not read (batloc-batsim --traces-anywhere follows it, as Batsim does)")
        try:
            raw = read_bytes(path, self.left, f"{where}: {what}")
        except OSError as e:
            raise EngineError(f"{where}: {what} {clipped(path, PATH_SHOWN)} cannot be read: {e.strerror}") from None
        except Refused as e:
            if e.bound is None:
                raise EngineError(str(e)) from None
            raise EngineError(f"{path} ({where}: {what}) would take the usage traces this workload reads past "
                              f"{size_text(TRACE_BYTES)}, their bound: not read") from None
        self.left -= len(raw)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EngineError(f"{where}: {what} {path} is not UTF-8 text") from None


def read_trace(workload_path, where, trace, budget=None):
    """Every rank's actions of the usage trace `trace` (the profile's field) of the workload at `workload_path`,
    read within `budget` (a ``TraceBudget``: the workload's folder, a bound in bytes)."""
    if not isinstance(trace, str):
        raise EngineError(f"{where}: trace must be a file name (a string), got {excerpt(trace)}")
    budget = budget or TraceBudget(workload_path)
    list_path = os.path.join(os.path.dirname(workload_path), trace)
    text = budget.read(list_path, where, "its trace")
    ranks = []
    for number, line in enumerate(_getlines(text, last_without_newline=True), 1):
        name = line.rstrip(_SPACE)
        if not name:
            raise EngineError(f"{list_path}:{number}: an empty line names no rank trace file ({where})")
        ranks.append(_read_rank(os.path.join(os.path.dirname(list_path), name), len(ranks), where, budget))
    if not ranks:
        raise EngineError(f"{list_path}: names no rank trace file ({where})")
    return ranks


def _getlines(text, last_without_newline):
    """std::getline's lines: the text after the last newline is a line only if the reader keeps it (Batsim's
    list of rank files does; SimGrid's replay reader stops at end of file and drops it)."""
    lines = text.split("\n")
    tail = lines.pop()
    if tail and last_without_newline:
        lines.append(tail)
    return lines


def _read_rank(path, rank, where, budget):
    """SimGrid 3.34's ReplayReader on one rank's file, with Batsim's m_usage action."""
    me = str(rank)
    actions = []
    for number, line in enumerate(_getlines(budget.read(path, where, f"rank {rank}'s trace"), False), 1):
        line = line.strip(_SPACE)
        if not line or line.startswith("#"):
            continue
        tokens = _SEPARATORS.split(line)
        if tokens[0] != me:
            continue   # SimGrid ignores an action for another actor (with a warning)
        here = f"{path}:{number}"
        if len(tokens) < 2 or tokens[1] != ACTION:
            raise EngineError(f"{here}: unknown replay action {excerpt(tokens[1] if len(tokens) > 1 else '')} ({where}); "
                              f"Batsim knows only {ACTION}")
        if len(tokens) < 4:
            raise EngineError(f"{here}: {ACTION} needs a usage and a number of flops ({where})")
        usage, flops = _stod(tokens[2], here, "usage"), _stod(tokens[3], here, "flops")
        if not (math.isfinite(usage) and 0.0 <= usage <= 1.0):
            raise EngineError(f"{here}: invalid usage {clipped(tokens[2])}: not in [0,1] ({where}; Batsim aborts on it)")
        if not (math.isfinite(flops) and flops >= 0.0):
            raise EngineError(f"{here}: invalid flops {clipped(tokens[3])}: not positive and finite ({where}; Batsim aborts "
                              "on it)")
        actions.append((usage, flops))
    return actions


def _stod(text, here, what):
    match = _STOD.match(text)
    if match is None:
        raise EngineError(f"{here}: {what} {excerpt(text)} is not a number")
    return float(match.group(1))


def cores_used(usage, host):
    """Batsim's usage_trace_replayer: round(usage x cores), at least 1 (C's round: halves away from zero)."""
    return max(math.floor(usage * host.core_count + 0.5), 1)


class Replay:
    """A usage-trace phase in flight: each rank's current task, then the ranks' ends one at a time."""

    __slots__ = ("sim", "job", "phase", "next_action", "rank_of", "done", "sending")

    def __init__(self, sim, job, phase):
        self.sim = sim
        self.job = job
        self.phase = phase
        self.next_action = [0] * len(phase.ranks)
        self.rank_of = {}        # activity -> rank (its task), or -1 (the end in transfer)
        self.done = []           # ranks done, waiting for their end to cross to the executor
        self.sending = None      # the rank whose end is in transfer

    def start(self):
        self.job.activities = []
        for rank in range(len(self.phase.ranks)):
            self.next_task(rank)

    def next_task(self, rank):
        host, actions = self.phase.ranks[rank]
        i = self.next_action[rank]
        if i == len(actions):
            self.done.append(rank)
            if self.sending is None:
                self.send_next()
            return
        self.next_action[rank] = i + 1
        usage, flops = actions[i]
        k = cores_used(usage, host)
        self.sim.sync_simgrid()
        act = self.sim.sg.this_actor.exec_init([host] * k, [flops] * k, []).start()
        self.track(act, rank)

    def send_next(self):
        rank = self.done.pop(0)
        self.sending = rank
        src = self.phase.ranks[rank][0]
        self.sim.sync_simgrid()
        act = self.sim.sg.Comm.sendto_async(src, self.phase.executor, TERMINATION_BYTES)
        self.sim.comms_in_flight += 1   # a Batsim message may share its links (``mailbox``)
        self.job.moves_bytes = True
        self.track(act, -1)

    def track(self, act, rank):
        self.rank_of[act] = rank
        self.job.activities.append(act)
        self.sim.track_activity(self.job, act, self.sim.now)

    def finished(self, act):
        """`act` ended: start what follows it; True when the last rank's end reached the executor."""
        rank = self.rank_of.pop(act)
        self.job.activities.remove(act)
        if rank >= 0:
            self.next_task(rank)
            return False
        self.sim.comms_in_flight -= 1
        self.job.moves_bytes = False
        self.sending = None
        if self.done:
            self.send_next()
            return False
        return not self.rank_of
