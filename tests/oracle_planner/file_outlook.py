"""When a job's file is available on a node if it starts there at t (t'_k), and
what starting there would cost the files already in memory (LEA's eviction penalty).

The paper's three cases (semantics note, "File availability and the memory model"):
1. the file is present on k at t (kept by the memory model)      -> t'_k = t      ('hit')
2. a load of the file on k began at or before t, not finished    -> its end       ('wait')
3. otherwise                                                      -> t + size/BW_k ('miss')

"Present" and "in flight" look ahead over *windows*: each job holding cores on
the node, actual (running or waiting) or planned earlier in this pass, holds
its file from ``avail`` (load end, or start on a hit) to ``end`` (start +
walltime). Under ``paper`` a file also survives its last user's end until
another job starts on the node (a job planned earlier in the pass at the same
instant counts as starting first); under ``lru`` it stays until evicted for room.

A job of several files (issue 39; semantics note, "Shared storage") holds one
window per file, all of them its ``reads``: a start evicts (``paper``) only the
files the starting job does not read. ``evaluate_files`` gives its case per
file, t'_k = max(t + the load of its misses together, the ends of the loads it
waits for), and the penalty of the files other than its own.
"""

from dataclasses import dataclass
import math
from typing import Optional

from batloc.locality.cache import UNTIL_LAST_END


@dataclass
class Window:
    start: float
    avail: float
    end: float
    file: Optional[str]
    size: float
    staging: Optional[str] = None    # staging job this window loads or waits for
    reads: Optional[frozenset] = None   # every file of a job of several files (one window each)

    def read(self, file):
        """Whether the window's job reads `file` (a start evicts only the files its job does not read)."""
        return file in self.reads if self.reads is not None else file == self.file


@dataclass
class Outlook:
    case: str            # hit | wait | miss | none
    t_file: float        # t'_k
    overhead: float      # t'_k - t_k, computed so it equals size/BW exactly on a miss
    penalty_bytes: float # bytes of unused files in memory at t (LEA's eviction penalty numerator)
    staging: Optional[str] = None
    files: tuple = ()    # a job of several files: (file, case, when it is there) for each


class FileOutlook:
    """One node's outlook during a pass. The planner keeps it for the whole pass
    and ``add``s each window it plans on the node, instead of rebuilding it;
    what depends on the planned windows (the LRU replay, the unused files at t)
    is cached and dropped on ``add``."""

    def __init__(self, cache, actual, planned, now, ended_windows=False, per_file=False, projected=None):
        self.cache = cache
        self.ended_windows = ended_windows      # the authors' penalty (R11)
        self.per_file = per_file                # the authors' windows (R10, file_window "per_file")
        self.model = cache.model
        self.now = now
        self.planned = list(planned)
        soon = math.nextafter(now, math.inf)
        files = cache.files
        # A load slower than its estimate is still in flight: push its end past now. Under the load
        # model "shared" (`projected`: staging -> its end, replayed) a load in flight ends when its replay
        # says.
        projected = projected or {}
        self.actual = [
            Window(w.start, max(projected.get(w.staging, w.avail), soon), w.end, w.file, w.size, w.staging,
                   w.reads)
            if w.file is not None and w.file in files and not files[w.file].loaded else w
            for w in actual]
        self.windows = self.actual + self.planned
        self._unused = {}          # t -> [(file, size)] unused and not in use at t

    def add(self, window):
        """A window planned on the node in this pass (same as rebuilding with it)."""
        self.planned.append(window)
        self.windows.append(window)
        self._unused.clear()
        self._lru_key = None

    # ---- memory model -------------------------------------------------
    def _survives(self, file, since, t):
        """Does an unused `file` (unused since `since`) stay in memory until t?"""
        if self.model in UNTIL_LAST_END:
            return t == since        # kept through its last user's end instant only
        if self.model == "paper":
            for w in self.planned:
                if since <= w.start <= t and not w.read(file):
                    return False
            return True
        return file in self._lru_resident(t)

    def _lru_resident(self, t):
        """Files the LRU memory holds at t once planned loads up to t have made room."""
        key = ("lru", t)
        if getattr(self, "_lru_key", None) == key:
            return self._lru_cache
        files = {f: [r.size, r.last_use, r.seq] for f, r in self.cache.files.items()}
        seq = max((r.seq for r in self.cache.files.values()), default=0)
        used = sum(v[0] for v in files.values())
        for w in sorted((w for w in self.planned if w.start <= t and w.file is not None),
                        key=lambda w: w.start):
            if w.file in files:
                files[w.file][1] = w.start
                continue
            in_use = {x.file for x in self.windows if x.start <= w.start < x.end}
            for f in [f for _, _, f in sorted((v[1], v[2], f) for f, v in files.items())]:
                if used + w.size <= self.cache.capacity:
                    break
                if f not in in_use:
                    used -= files.pop(f)[0]
            seq += 1
            files[w.file] = [w.size, w.start, seq]
            used += w.size
        self._lru_key, self._lru_cache = key, files
        return files

    # ---- the three cases ---------------------------------------------
    def evaluate(self, file, size, t, bandwidth, penalty=True, load_time=None) -> Outlook:
        """The case at t; ``penalty=False`` skips the eviction penalty (0.0) for
        policies that do not use it; ``load_time(size, t)``: a miss's end under the
        load model "shared" (None: size / bandwidth, the paper's)."""
        if file is None:
            return Outlook("none", t, 0.0, self.penalty_bytes(None, t) if penalty else 0.0)
        if self.per_file:
            case, t_file = self._first_window(file, t)
            pen = self.penalty_bytes(file, t) if penalty else 0.0
            if case == "miss":
                return Outlook("miss", t + size / bandwidth, size / bandwidth, pen)
            return Outlook(case, t_file, t_file - t, pen)
        present, load_end, staging = self._case(file, t)
        pen = self.penalty_bytes(file, t) if penalty else 0.0
        if present:
            return Outlook("hit", t, 0.0, pen)
        if load_end is not None:
            return Outlook("wait", load_end, load_end - t, pen, staging)
        if load_time is not None:             # load_model "shared"
            end = load_time(size, t)
            return Outlook("miss", end, end - t, pen)
        overhead = size / bandwidth
        return Outlook("miss", t + overhead, overhead, pen)

    def evaluate_files(self, files, t, penalty, load_time, bandwidth=None):
        """A job of several files ((file, size), ...) at t: its misses are one load of their summed
        size, ending at ``load_time(bytes, t)``; t'_k is when its last file is there. With
        ``bandwidth`` (the node model's), a load that ends last has its duration as overhead
        exactly, as a job of one file's miss."""
        cases, missing, t_file, staging = [], 0.0, t, None
        for f, size in files:
            present, end, stg = self._case(f, t)
            if present:
                cases.append([f, "hit", t])
            elif end is not None:
                cases.append([f, "wait", end])
                t_file = max(t_file, end)
                staging = staging or stg
            else:
                cases.append([f, "miss", None])
                missing += size
        overhead = None
        if missing:
            miss_end = load_time(missing, t)
            if miss_end > t_file and bandwidth is not None:
                overhead = missing / bandwidth
            t_file = max(t_file, miss_end)
            for c in cases:
                if c[1] == "miss":
                    c[2] = miss_end
        pen = self.penalty_bytes({f for f, _ in files}, t) if penalty else 0.0
        case = "miss" if missing else "wait" if t_file > t else "hit"
        return Outlook(case, t_file, t_file - t if overhead is None else overhead, pen, staging,
                       tuple(tuple(c) for c in cases))

    def _case(self, file, t):
        """(present at t, else the end of the load in flight it would wait for or None, that load's staging)."""
        present, load_end, staging = False, None, None
        for w in self.windows:
            if w.file != file or w.start > t:
                continue
            if w.avail <= t:
                if t < w.end or self._survives(file, w.end, t):
                    present = True
                    break
            elif load_end is None or w.avail < load_end:
                load_end, staging = w.avail, w.staging
        if not present and load_end is None:
            r = self.cache.files.get(file)
            strict = self.model in UNTIL_LAST_END
            since = r.last_use if r is not None and strict else self.now
            if r is not None and (r.loaded or strict) and r.users == 0 and self._survives(file, since, t):
                present = True
        return present, load_end, staging

    def _first_window(self, file, t):
        """R10 as the authors' simulator plans: (case, t'_k) from the first of the
        file's windows [from, loaded at, to] (ends included) that holds t: the
        started jobs' one window (from now, loaded when their load ends, to
        their ends, which the state makes the latest planned end of every user
        since the load; [now, now, now] for a file whose last user ended now),
        then the pass's windows in placement order; ('miss', None) if none."""
        users = [w for w in self.actual if w.file == file]
        if users:
            loaded_at, until = max(self.now, *(w.avail for w in users)), max(w.end for w in users)
        else:
            r = self.cache.files.get(file)
            loaded_at = until = self.now if r is not None and r.users == 0 and r.last_use == self.now else None
        windows = ([(self.now, loaded_at, until)] if until is not None else []) + [
            (w.start, w.avail, w.end) for w in self.planned if w.file == file]
        for start, avail, end in windows:
            if start <= t <= end:
                return ("hit", t) if avail <= t else ("wait", avail)
        return "miss", None

    def penalty_bytes(self, file, t):
        """Bytes of files held in memory at t, other than `file` (a file, or a job's set of
        files), that no job holding cores over t uses: what starting a job there may cost (LEA)."""
        if self.ended_windows:
            return self._ended_window_bytes(file, t)
        if self.model in UNTIL_LAST_END:
            return 0.0
        unused = self._unused.get(t)
        if unused is None:
            unused = self._unused[t] = self._unused_at(t)
        if isinstance(file, (set, frozenset)):
            return float(sum(s for f, s in unused if f not in file))
        return float(sum(s for f, s in unused if f != file))

    def _ended_window_bytes(self, file, t):
        """The authors' penalty (R11): bytes of the other files whose last
        inserted window ends by t. Started jobs give a file one window, to
        their latest end; a file whose last user ended now, one ending now;
        each window planned in the pass replaces its file's end."""
        last = {}                                   # file -> [size, end], in insertion order
        for w in self.actual:
            if w.file is None:
                continue
            if w.file in last:
                last[w.file][1] = max(last[w.file][1], w.end)
            else:
                last[w.file] = [w.size, w.end]
        for f, r in self.cache.files.items():
            if r.users == 0 and r.last_use == self.now and f not in last:
                last[f] = [r.size, self.now]
        for w in self.planned:
            if w.file is None:
                continue
            if w.file in last:
                last[w.file][1] = w.end
            else:
                last[w.file] = [w.size, w.end]
        total = 0.0
        own = file if isinstance(file, (set, frozenset)) else {file}
        for f, (size, end) in last.items():
            if f not in own and end <= t:
                total += size
        return total

    def _unused_at(self, t):
        """(file, size) of the files in memory at t that no window over t uses,
        in the order their sizes are summed (independent of the job's file)."""
        in_use = set()
        ended = []
        for w in self.windows:
            if w.start <= t < w.end:
                in_use.add(w.file)
            elif w.file is not None and w.end <= t:
                ended.append(w)
        unused = {}
        if self.model == "lru":
            for f, v in self._lru_resident(t).items():
                unused[f] = v[0]
        else:
            # _survives under `paper`, with the planned starts after t set aside once.
            early = [w for w in self.planned if w.start <= t]
            now = self.now
            for f, r in self.cache.files.items():      # cache.orphans(), in its order
                if r.users == 0 and r.loaded and _survives_early(early, f, now):
                    unused[f] = r.size
            for w in ended:
                if _survives_early(early, w.file, w.end):
                    unused[w.file] = w.size
        return [(f, s) for f, s in unused.items() if f not in in_use and f is not None]


def _survives_early(early, file, since):
    """FileOutlook._survives under `paper`, given the planned windows that start by t."""
    for w in early:
        if since <= w.start and not w.read(file):
            return False
    return True
