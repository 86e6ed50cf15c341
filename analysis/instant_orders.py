"""The other orders of one instant, for `batloc validate`'s replay under `lru` and `value`.

Under Batsim's timing the events of one instant reach a scheduler in several messages (contract §4,
measured: a job's JOB_SUBMITTED, then in the next message another job's JOB_COMPLETED of that instant):
a job may start at t on a node before the scheduler hears of a job's end at t there. The replay ends
jobs first; under `lru` and `value` the order changes what a start may evict (a file whose last user
ended is evictable, and its last use later), so the replay can evict another file than the scheduler
did and call a later hit false (MCT on the saturated day's first 6 000 jobs: 16 of 6 000 starts).
The records do not tell the order. So where a start at t follows ends at t on its node, the replay
keeps, beside its own state (ends first), the alternatives in which the instant's starts so far came
before those ends, until the decision log tells them apart (a hit needs its file loaded, a wait a load
in flight, a miss neither) or they hold the same files. A start's logged cases that the replay's own
state contradicts but an alternative agrees with make that alternative the replay's state; a violation
counts only when no alternative agrees (false hit), or when all that agree are over capacity.
"""

import copy

from batloc.locality.cache import SAME_INSTANT

LIMIT = 8                       # alternatives kept per node at most
DEFERRABLE = ("end", "output", "unpin")


def clone(cache):
    """A copy of a node's memory that shares its census (read only by the copy's evictions)."""
    c = copy.copy(cache)
    c.files = {f: copy.copy(r) for f, r in cache.files.items()}
    c.overflows = []
    c._started_files = set(cache._started_files)
    return c


def signature(cache):
    return tuple(sorted((f, r.users, r.loaded, r.pins) for f, r in cache.files.items()))


def agrees(before, cases):
    """Whether statuses `before` a start match its logged cases."""
    want = {"hit": "loaded", "wait": "loading", "miss": "absent"}
    return all(want.get(case, was) == was for was, case in zip(before, cases))


class OtherOrders:
    def __init__(self, enabled):
        self.enabled = enabled
        self.alts = {}          # node -> [cache]
        self.instant = {}       # node -> (t, [snapshot of the state and of each alternative], [deferred], [starts])

    def _instant(self, node, t, cache):
        held = self.instant.get(node)
        if held is None or abs(held[0] - t) >= SAME_INSTANT:
            held = self.instant[node] = (t, [clone(c) for c in [cache] + self.alts.get(node, [])], [], [])
        return held

    def deferrable(self, node, t, cache, apply):
        """An end-like event (`apply(cache)`) at t on `node`, before it changes `cache`."""
        if self.enabled:
            self._instant(node, t, cache)[2].append(apply)

    def apply(self, node, apply):
        for c in self.alts.get(node, ()):
            apply(c)

    def start(self, node, t, cache, start, cases, before, used):
        """A start (`start(cache)` -> (statuses before, used bytes after)) already applied to `cache`, the
        replay's state (giving `before`, `used`), and to be applied to the alternatives. Returns (the state
        to keep: `cache` or the first alternative agreeing with the logged `cases` where `cache` does not,
        its statuses before the start, whether every state agreeing with the cases is over capacity)."""
        over = used > cache.capacity + 1e-6
        if not self.enabled:
            return cache, before, over
        held = self.instant.get(node)
        if held is not None and abs(held[0] - t) >= SAME_INSTANT:
            held = None
        results = [(cache, before, used)] + [(c, *start(c)) for c in self.alts.get(node, ())]
        if held is not None:
            if held[2]:
                for snap in held[1]:        # the instant's starts so far, then this one, before its ends
                    c = clone(snap)
                    for s in held[3]:
                        s(c)
                    b, u = start(c)
                    for e in held[2]:
                        e(c)
                    results.append((c, b, u))
            held[3].append(start)
        agreeing = [r for r in results if agrees(r[1], cases)]
        chosen = results[0] if agrees(before, cases) or not agreeing else agreeing[0]
        kept, seen = [], {signature(chosen[0])}
        for c, _, _ in agreeing:
            sig = signature(c)
            if sig not in seen and len(kept) < LIMIT:
                seen.add(sig)
                kept.append(c)
        self.alts[node] = kept
        if agreeing:
            over = all(u > c.capacity + 1e-6 for c, _, u in agreeing)
        return chosen[0], chosen[1], over
