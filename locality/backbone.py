"""Loads that share the file system's bandwidth (issue 39): the planning family's ``load_model: "shared"``.

Every load from Lustre (a staging into a node's memory, a write-back out of
one) crosses its node's link (bandwidth BW_k, its *cap*) and, on a platform
with a backbone, the backbone (bandwidth B, ``PlatformView.backbone``, read
from ``lustre``'s property ``bandwidth``). SimGrid shares a SHARED link by
max-min fairness: no load can go faster without slowing one that goes
slower. With n loads of equal caps b each gets min(b, B / n).

The planning model (docs/scheduler-semantics.md, "Shared storage"):

- a new load capped at ``cap`` beside ``n`` loads whose caps sum to ``caps``
  gets ``share`` = min(cap, max(B / (n + 1), B − caps)) — exactly max-min's
  share when the caps are equal, a lower bound of it otherwise (loads capped
  below the fair share leave the rest to the others);
- its end (``load_end``) integrates that share over time, the loads beside
  it being intervals [start, end) known in advance (loads in flight, loads
  planned earlier in the pass); it does not re-time them (list scheduling:
  a job sees the jobs before it);
- loads in flight are tracked between events by the exact max-min rates
  (``max_min``, water-filling) in ``ActualLoads``, whose ``projection`` gives
  each one's end if no other load began.

Without a backbone (B = +inf) a load takes size / cap, the paper's model.
Pure Python: the oracle pass uses these functions as they are; the compiled
pass is held to them.
"""

import math


def share(cap, n, caps, backbone):
    """Bytes/s a new load capped at `cap` gets beside `n` loads whose caps sum to `caps`."""
    return min(cap, max(backbone / (n + 1), backbone - caps))


def load_end(t, size, cap, intervals, backbone):
    """When a load of `size` bytes begun at `t` on a link of `cap` bytes/s ends, beside the loads
    `intervals` ((start, end, cap), ...) on a backbone of `backbone` bytes/s.

    At its full cap all along (no backbone, or never crowded) it ends at t + size / cap exactly, as
    under the paper's model."""
    if size <= 0:
        return t
    if not math.isfinite(backbone):
        return t + size / cap
    n, caps, events = 0, 0.0, []
    for s, e, c in intervals:
        if e <= t or e <= s:
            continue
        if s <= t:
            n += 1
            caps += c
        else:
            events.append((s, 1, c))
        events.append((e, -1, -c))
    events.sort()
    done, tau, at_cap, i = 0.0, t, True, 0
    while True:
        r = share(cap, n, caps, backbone)
        at_cap = at_cap and r == cap
        nxt = events[i][0] if i < len(events) else math.inf
        if done + r * (nxt - tau) >= size:
            return t + size / cap if at_cap else tau + (size - done) / r
        done += r * (nxt - tau)
        tau = nxt
        while i < len(events) and events[i][0] == nxt:
            n += events[i][1]
            caps += events[i][2]
            i += 1
        if n == 0:
            caps = 0.0


def max_min(caps, backbone):
    """SimGrid's max-min rates of loads capped at `caps` (a list) sharing `backbone`: progressive
    filling, each load at its cap or at the common level the rest share."""
    if not math.isfinite(backbone) or sum(caps) <= backbone:
        return list(caps)
    order = sorted(range(len(caps)), key=lambda j: caps[j])
    rates = [0.0] * len(caps)
    left = backbone
    for k, i in enumerate(order):
        level = left / (len(caps) - k)
        if caps[i] > level:
            for j in order[k:]:         # the rest share what is left equally
                rates[j] = level
            break
        rates[i] = caps[i]
        left -= caps[i]
    return rates


class ActualLoads:
    """The loads in flight through the backbone, their bytes left replayed at max-min rates between
    the events the scheduler sees (a load begun, a load ended: the engine's truth resets the model)."""

    def __init__(self, backbone):
        self.backbone = backbone
        self.t = 0.0
        self.left = {}           # load id -> [bytes left, cap]

    def __len__(self):
        return len(self.left)

    def begin(self, load_id, now, size, cap):
        self.advance(now)
        self.left[load_id] = [float(size), float(cap)]

    def end(self, load_id, now):
        self.advance(now)
        self.left.pop(load_id, None)

    def advance(self, now):
        """Wear the loads down from the last event to `now` (a load the model finishes early stays,
        with nothing left, until the engine ends it)."""
        while self.t < now:
            busy = [v for v in self.left.values() if v[0] > 0]
            if not busy:
                break
            rates = max_min([v[1] for v in busy], self.backbone)
            times = [v[0] / r for v, r in zip(busy, rates)]
            step = min(times)
            if step >= now - self.t:
                for v, r in zip(busy, rates):
                    v[0] = max(0.0, v[0] - r * (now - self.t))
                break
            for v, r, d in zip(busy, rates, times):
                # the loads that end in this step end exactly (no residue to crawl through)
                v[0] = 0.0 if d == step else max(0.0, v[0] - r * step)
            self.t += step
        self.t = max(self.t, now)

    def projection(self, now):
        """{load id: its end} if no other load began from `now` on (a load with nothing left ends now)."""
        self.advance(now)
        left = {k: v[0] for k, v in self.left.items()}
        caps = {k: v[1] for k, v in self.left.items()}
        ends, t = {}, now
        for k in [k for k, b in left.items() if b <= 0]:
            ends[k] = now
            del left[k]
        while left:
            keys = list(left)
            rates = max_min([caps[k] for k in keys], self.backbone)
            times = [left[k] / r for k, r in zip(keys, rates)]
            step = min(times)
            t += step
            for k, r, d in zip(keys, rates, times):
                if d == step:
                    ends[k] = t
                    del left[k]
                else:
                    left[k] -= r * step
        return ends
