"""One node's memory (its page cache) under the four memory models.

This is the *actual* state, changed only by what really happens: a job starts
or ends on the node, a load begins or completes. Planning looks ahead with
``file_outlook``. Pure Python, importable on its own (the file-staging adapter
and the validator replay events through it).

Models (semantics note, "File availability and the memory model"):
- ``paper``:  a file stays while a job using it runs or waits on the node, and
  after its last user ends only until another job starts on the node;
- ``strict``: a file stays only while a job using it runs or waits, and through
  the instant its last user ends: a job starting in that very instant finds it
  (as in the authors' no-persistence build, where the end is processed first
  and the file stays valid for that second); at any later instant it is gone;
- ``lru``:    a file stays until room is needed for a new file (capacity = the
  node's memory), least recently used first; a file in use is never evicted;
- ``authors``: the authors' published simulator's own rule (docs/authors-simulator.md,
  R9), ``strict`` where a load is concerned too: a file whose last user ends
  while its load is in flight also stays through that instant, still
  loading (a job starting then waits for the rest of that load, which goes
  on), and a file is loaded once *its* load is over: a load begun by an
  earlier user that ended before it, for a file loaded again since, loads
  nothing the node keeps (that simulator keeps one load end per file and node).
  Only this model makes the validator accept such a start.

A job may read several files (a workflow task: its inputs and its parents'
outputs): ``start_files``/``end_files`` take them all at once, so that under
``paper`` a job never evicts one of its own files. A job's *outputs* appear
at its end (``add_output``): loaded, unused, then kept or evicted by the model
like any file whose last user just ended; an output being written back to
Lustre is *pinned* (``pin``/``unpin``): in memory, counted, never evicted.
"""

from dataclasses import dataclass

MODELS = ("paper", "strict", "lru", "authors")
# Models that drop a file after the instant its last user ends (and hold no memory for it then).
UNTIL_LAST_END = ("strict", "authors")


# authors: a load completing this much before the file's current load end is an
# earlier, stale one (a reload starts in a later second than the load it replaces).
STALE = 0.5
# One instant, as the outputs print it (six decimals) and `batloc validate` replays it: when the engine times
# Batsim's messages (contract §4), the events of one instant reach a scheduler a few link latencies apart, so a job's
# end can arrive 0.2 µs after a start of "its" instant; both are the same instant for the memory model.
SAME_INSTANT = 1e-6


@dataclass
class Resident:
    size: float
    loaded: bool          # False while its load is in flight
    load_end: float       # estimated end while loading, actual end once loaded
    users: int            # jobs running or waiting on the node that use it
    last_use: float       # last time a user started (LRU order)
    seq: int              # insertion order, to break LRU ties deterministically
    pins: int = 0         # write-backs in flight: dirty pages no model may drop

    @property
    def held(self):
        """In use or pinned: no model evicts it, every model counts it."""
        return self.users > 0 or self.pins > 0


class NodeCache:
    def __init__(self, capacity: float, model: str = "paper"):
        if model not in MODELS:
            raise ValueError(f"unknown memory model {model!r}; expected one of {', '.join(MODELS)}")
        self.capacity = float(capacity)
        self.model = model
        self.files = {}          # file -> Resident, in insertion order
        self._seq = 0
        self.overflows = []      # (time, file, used_bytes) when a load could not fit
        # Files of the jobs that started at the latest start instant (paper model):
        # a start at the very instant a file's last user ends evicts it too,
        # whichever of the two events arrives first.
        self._started_at, self._started_files = None, set()

    # ---- queries ------------------------------------------------------
    def status(self, file, now=None):
        """'absent', 'loading' or 'loaded'; give `now` to see a strict file whose
        last user ended before it as gone (it is dropped at the next event)."""
        if now is not None:
            self._drop_ended(now)
        r = self.files.get(file)
        if r is None:
            return "absent"
        return "loaded" if r.loaded else "loading"

    def used_bytes(self):
        # strict: a file kept through its last user's end instant only serves a
        # start in that instant; it holds no memory (the authors' build, whose
        # rule this is, has no memory capacity at all).
        if self.model in UNTIL_LAST_END:
            return sum(r.size for r in self.files.values() if r.held)
        return sum(r.size for r in self.files.values())

    def room_for(self, size, now):
        """Whether a new file of `size` bytes fits next to the files in use (running, waiting or loading).

        Every model may drop an unused file to make room (paper: any start drops them; lru: as
        needed; strict: they hold none), so only the files in use count.
        """
        self._drop_ended(now)
        return sum(r.size for r in self.files.values() if r.held) + size <= self.capacity

    def room_for_files(self, files, now):
        """Whether a job reading `files` ((file, size), ...) fits next to the files in use: its start holds
        every one of them, the absent ones and the ones resident but unused alike (an output left by its
        producer, a file whose last user ended), so those count as much as a load; the ones already in
        use count once. Equal to ``room_for`` of the absent files' bytes when none of its files is
        resident unused (every job of a single-file run that fitted before still fits)."""
        self._drop_ended(now)
        claimed = {}
        for f, size in files:
            r = self.files.get(f)
            if r is None:
                claimed[f] = size
            elif not r.held:
                claimed[f] = r.size
        return sum(r.size for r in self.files.values() if r.held) + sum(claimed.values()) <= self.capacity

    def orphans(self):
        """Loaded files no running or waiting job uses: (file, size) in insertion order."""
        return [(f, r.size) for f, r in self.files.items() if r.users == 0 and r.loaded]

    # ---- events -------------------------------------------------------
    def start_job(self, file, size, now, load_end=None):
        """A job using `file` starts (holds its cores) at `now`.

        Returns (case, evicted): case is 'hit' (in memory), 'wait' (a load is in
        flight) or 'miss' (the caller starts a load ending around `load_end`),
        or 'none' for a job without file; evicted lists the files dropped.
        """
        cases, evicted = self.start_files(((file, size),) if file is not None else (), now, load_end)
        return (cases[0] if cases else "none"), evicted

    def start_files(self, files, now, load_end=None):
        """A job reading `files` ((file, size), ...; none: a job without file) starts at `now`.

        Returns (cases, evicted): one case per file, in order ('hit', 'wait' or
        'miss', as ``start_job``), and the files dropped. ``load_end``: one end
        for every load begun, or a dict file -> end (the validator's replay)."""
        evicted = self._drop_ended(now)
        own = {f for f, _ in files}
        if self.model == "paper":
            # Another job starting on the node ends the survival of unused files.
            for f, r in list(self.files.items()):
                if not r.held and f not in own:
                    del self.files[f]
                    evicted.append(f)
            if self._started_at is None or abs(now - self._started_at) >= SAME_INSTANT:
                self._started_at, self._started_files = now, set()
            # a job without file is remembered as None: it evicts every file at its instant
            self._started_files.update(own or (None,))
        cases = []
        for file, size in files:
            r = self.files.get(file)
            if r is not None:
                case = "hit" if r.loaded else "wait"
            else:
                case = "miss"
                if self.model == "lru":
                    # never one of its own files, resident but not yet counted as used: its start holds it
                    evicted += self._make_room(size, now, file, keep=own)
                self._seq += 1
                end = load_end.get(file, now) if isinstance(load_end, dict) else load_end
                r = self.files[file] = Resident(float(size), False, end if end is not None else now,
                                                0, now, self._seq)
            r.users += 1
            r.last_use = now
            cases.append(case)
        return cases, evicted

    def load_done(self, file, now):
        self._drop_ended(now)
        r = self.files.get(file)
        if r is not None and not (self.model == "authors" and now < r.load_end - STALE):
            r.loaded = True
            r.load_end = now

    def end_job(self, file, now):
        """A job using `file` ended (or was killed). Returns the files dropped."""
        return self.end_files((file,) if file is not None else (), now)

    def end_files(self, files, now):
        """A job reading `files` (names) ended (or was killed). Returns the files dropped."""
        dropped = self._drop_ended(now)
        for file in files:
            r = self.files.get(file)
            if r is None:
                continue
            r.users = max(0, r.users - 1)
            if r.users == 0:
                r.last_use = max(r.last_use, now)
                # strict keeps a loaded file through the instant e (_drop_ended), authors any file.
                if r.pins == 0 and ((not r.loaded and self.model != "authors") or self._started_since(file, now)):
                    del self.files[file]
                    dropped.append(file)
        return dropped

    def _started_since(self, file, now):
        """paper: a file whose last user ends at e survives until a job starts in [e, t]; one
        that started at e itself, with another file, before this end arrived, counts.
        (strict keeps a loaded file through the instant e: ``_drop_ended``.)"""
        return (self.model == "paper" and self._started_at is not None
                and abs(now - self._started_at) < SAME_INSTANT
                and any(f != file for f in self._started_files))

    def add_output(self, file, size, now, pinned=False):
        """`file` (`size` bytes), written by a job that ended at `now` on this node, is in memory:
        loaded and unused, as a file whose last user just ended (``pinned``: until ``unpin``).
        Returns the files dropped (lru: to make room)."""
        dropped = self._drop_ended(now)
        r = self.files.get(file)
        if r is None:
            if self.model == "lru":
                dropped += self._make_room(size, now, file)
            self._seq += 1
            r = self.files[file] = Resident(float(size), True, now, 0, now, self._seq)
        r.loaded, r.load_end, r.last_use = True, now, max(r.last_use, now)
        if pinned:
            r.pins += 1
        elif r.users == 0 and self._started_since(file, now):
            del self.files[file]
            dropped.append(file)
        return dropped

    def pin(self, file):
        r = self.files.get(file)
        if r is not None:
            r.pins += 1

    def unpin(self, file, now):
        """A write-back of `file` ended at `now`: unpinned, it is kept or dropped as the model says,
        as if its last user ended then. Returns the files dropped."""
        dropped = self._drop_ended(now)
        r = self.files.get(file)
        if r is None or r.pins == 0:
            return dropped
        r.pins -= 1
        if not r.held:
            r.last_use = max(r.last_use, now)
            if self._started_since(file, now):
                del self.files[file]
                dropped.append(file)
        return dropped

    def _drop_ended(self, now):
        """strict, authors: drop the files whose last user ended before `now`."""
        if self.model not in UNTIL_LAST_END:
            return []
        gone = [f for f, r in self.files.items() if not r.held and r.last_use < now]
        for f in gone:
            del self.files[f]
        return gone

    def _make_room(self, size, now, file, keep=()):
        """Evict unused files but `keep`, in ``eviction_key`` order, until `size` more bytes fit; an overflow
        otherwise."""
        evicted = []
        used = self.used_bytes()
        if used + size > self.capacity:
            victims = sorted((self.eviction_key(f, r), f) for f, r in self.files.items()
                             if not r.held and f not in keep)
            for _, f in victims:
                if used + size <= self.capacity:
                    break
                used -= self.files.pop(f).size
                evicted.append(f)
        if used + size > self.capacity:
            self.overflows.append((now, file, used + size))
        return evicted

    def eviction_key(self, file, resident):
        """The order in which unused files leave to make room (lru): least recently used, then first loaded."""
        return resident.last_use, resident.seq
