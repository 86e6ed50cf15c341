"""SimGrid 3.34's clock under its L07 model, float for float: Batsim's sleeps, messages and data transfers.

Batsim's events often fall on the same instant *mathematically* (a job started
five messages after t = 0 ends after 10 s just as the submission of t = 10,
late by five messages, arrives); which one SimGrid sees first then depends on
its floating-point sums, and so does what the scheduler is told. This clock
does SimGrid's arithmetic (``EngineImpl::solve``, ``HostL07Model``,
``Model::next_occurring_event_full``, ``double_update``, ``FairBottleneck`` at
v3.34) on the actions Batsim would have: each step moves the clock by the
smallest of every action's remaining latency, remaining work over its rate, or
remaining sleep; then every action is worn down by that step, in the order the
actions began, and those worn to nothing (within SimGrid's precision) end
together, in that order.

Three kinds of action, as SimGrid's L07 host model has them:

- a *sleep* (``this_actor::sleep_for``, an activity's timeout): a duration worn
  down by each step, ended below 1 ns. Every running delay job is one, so they
  live in one array worn down at once (numpy does SimGrid's very subtraction
  on each element; the order they end in is kept by a sequence number);
- a *transfer* (a 1-byte message, a job's data staging or I/O phase: a parallel
  task of transfers only): it waits its routes' largest latency, then its
  fraction left (1.0 at the start) goes at the rate SimGrid's linear system
  gives it, recomputed with SimGrid's fair-bottleneck solver whenever a
  transfer starts or stops using the links (``Lmm``);
- an empty task (no link, no work): it ends at the next step, taking no time.
"""

import os
import sys

import numpy as np

PRECISION_TIMING = 1e-9          # SimGrid's precision/timing
PRECISION_WORK = 1e-5            # SimGrid's precision/work-amount (the linear system's snap)
PRECISION_REMAINS = 1e-5 * 1e-9  # precision/work-amount x precision/timing, for a transfer's fraction left
TCP_GAMMA = 4194304.0            # network/TCP-gamma: L07 bounds a transfer's rate by gamma / (2 x latency x bytes)
DBL_MAX = 1.7976931348623157e308
INF = float("inf")


class Sleep:
    __slots__ = ("seq", "slot", "done", "alive")

    def __init__(self, seq, slot, done):
        self.seq = seq
        self.slot = slot
        self.done = done     # what happens when it ends
        self.alive = True


class Shape:
    """What a transfer is made of, as L07Action's constructor reads its routes: one element per link it crosses
    (its bytes over that link: summed on a shared link, the largest on a FATPIPE one), its largest latency, the
    bound that latency puts on its rate; and its rate when alone on its links, once known."""

    __slots__ = ("elements", "latency", "net_bound", "lone")

    def __init__(self, elements, latency, net_bound):
        self.elements = elements
        self.latency = latency
        self.net_bound = net_bound
        self.lone = None


class Transfer:
    """A parallel task of transfers only, one variable of SimGrid's linear system."""

    __slots__ = ("seq", "slot", "done", "alive", "latency", "shape", "elements", "rate", "penalty", "bound",
                 "remains", "pace")

    def __init__(self, seq, done, shape):
        self.seq = seq
        self.slot = None           # its place in the clock's arrays; None for a message (plain floats)
        self.remains = 0.0         # a message's fraction left
        self.pace = 0.0            # a message's rate in the steps: its rate as of the last solve
        self.done = done
        self.alive = True
        self.shape = shape
        self.latency = shape.latency
        self.elements = shape.elements   # [(Constraint, consumption weight)] in the order the task was expanded
        self.rate = 0.0
        self.penalty = 0.0
        self.bound = -1.0          # none until its latency is paid


class Constraint:
    """A link of SimGrid's linear system: its bandwidth, its sharing policy, the transfers using it."""

    __slots__ = ("name", "bound", "fatpipe", "users", "lights", "remaining", "usage")

    def __init__(self, name, bound, fatpipe):
        self.name = name
        self.bound = bound
        self.fatpipe = fatpipe
        self.users = []      # enabled (transfer, weight), most recently enabled first (SimGrid's push_front)
        self.lights = []     # messages alone on it, at their lone rate, kept out of `users` until another comes
        self.remaining = 0.0
        self.usage = 0.0


class Lmm:
    """SimGrid's linear system over links, solved as ``lmm::FairBottleneck::do_solve`` does, float for float."""

    def __init__(self):
        self.constraints = {}
        self.dirty = set()   # constraints whose transfers changed since the last solve
        self.changed = []    # transfers whose rate was set since the clock last read them

    def constraint(self, name, bandwidth, fatpipe):
        c = self.constraints.get(name)
        if c is None:
            c = self.constraints[name] = Constraint(name, bandwidth, fatpipe)
        return c

    def enable(self, t):
        """`t`'s latency is paid (or it had none): it takes its share from the next solve on."""
        t.penalty = 1.0
        if t.shape.net_bound < DBL_MAX:   # L07Action::update_bound
            t.bound = t.shape.net_bound
        if not t.elements:
            t.rate = 1.0   # a variable on no resource gets 1 (FairBottleneck): its remains, 0, end it at once
            self.changed.append(t)
            return
        alone = True
        for c, w in t.elements:
            if c.lights:
                self.join(c)
            if c.users:
                alone = False
            c.users.insert(0, (t, w))
        if alone:   # nothing else on its links (a message, a lone load): its rate depends on them alone
            t.rate = self.lone_rate(t)
            self.changed.append(t)
        else:
            self.dirty.update(c for c, _ in t.elements)

    def light(self, t):
        """A message with no latency, alone on its links (Batsim's, on batloc's layout always): its lone rate at
        once, and none of the solver's bookkeeping unless another transfer comes on one of its links (``join``)."""
        t.penalty = 1.0
        t.pace = t.rate = self.lone_rate(t)
        for c, _ in t.elements:
            c.lights.append(t)

    def join(self, c):
        """Another transfer comes on `c`: the messages alone there so far take their place in the solver, as the
        oldest users of their links (they were enabled before it)."""
        for t in c.lights:
            for other, w in t.elements:
                if other is not c:
                    other.lights.remove(t)
                other.users.append((t, w))
                self.dirty.add(other)
        c.lights = []

    def disable(self, t):
        if t.penalty > 0 and t.elements and t in t.elements[0][0].lights:
            for c, _ in t.elements:
                c.lights.remove(t)
            t.penalty = 0.0
            return
        if t.penalty > 0:
            for c, _ in t.elements:
                users = c.users
                if len(users) == 1:
                    c.users = []
                    self.dirty.discard(c)
                else:
                    c.users = [u for u in users if u[0] is not t]
                    self.dirty.add(c)
        t.penalty = 0.0
        t.rate = 0.0

    @staticmethod
    def lone_rate(t):
        """`t`'s rate alone on its links: the same for every transfer of its shape (a platform's links keep their
        bandwidth on the engine's clock)."""
        rate = t.shape.lone
        if rate is None:
            rate = t.shape.lone = fair_bottleneck([t], [c for c, _ in t.elements], {c: [(t, w)] for c, w in t.elements})[0]
        return rate

    def solve(self):
        """Recompute the rates of the transfers sharing a link with one that started or stopped."""
        if not self.dirty:
            return
        seen_c, order, seen_v, in_v, todo = set(), [], [], set(), list(self.dirty)
        self.dirty = set()
        while todo:   # the connected part of the system: SimGrid's selective update solves it alone
            c = todo.pop()
            if c in seen_c:
                continue
            seen_c.add(c)
            order.append(c)
            for t, _ in c.users:
                if t not in in_v:
                    in_v.add(t)
                    seen_v.append(t)
                    todo.extend(other for other, _ in t.elements if other not in seen_c)
        if len(seen_v) == 1 or all(len(t.elements) == 1 and t.elements[0][0].fatpipe for t in seen_v):
            # alone, or each on one FATPIPE link only (batloc's node links): a FATPIPE link gives every transfer
            # its whole bandwidth, so the solver's first round saturates each one's link and ends: its lone rate
            for t in seen_v:
                t.rate = self.lone_rate(t)
        else:
            for t, rate in zip(seen_v, fair_bottleneck(seen_v, [c for c in order if c.users])):
                t.rate = rate
        self.changed.extend(seen_v)


def fair_bottleneck(variables, constraints, users=None):
    """The values of `variables` (enabled transfers) over `constraints`, as SimGrid 3.34 computes them (its
    quirks included: a variable taken out of the loop keeps its last increment, which a shared link
    subtracts again at each later round)."""
    value = {id(t): 0.0 for t in variables}
    mu = {id(t): 0.0 for t in variables}
    var_list = []
    for t in variables:
        if any(w != 0.0 for _, w in t.elements):
            var_list.append(t)
        else:
            value[id(t)] = 1.0
    live = {id(t) for t in var_list}
    cnst_list = list(constraints)
    if users is None:   # each constraint's users among `variables`, in its order (a lone rate ignores the others)
        users = {c: [(t, w) for t, w in c.users if id(t) in value] for c in cnst_list}
    for c in cnst_list:
        c.remaining = c.bound
        c.usage = 0.0
    while var_list:
        kept = []
        for c in cnst_list:
            nb = sum(1 for t, w in users[c] if w > 0 and id(t) in live)
            if nb > 0 and c.fatpipe:
                nb = 1
            if nb == 0:
                c.remaining = 0.0
                c.usage = 0.0
            else:
                c.usage = c.remaining / nb
                kept.append(c)
        cnst_list = kept
        still = []
        for t in var_list:
            min_inc = DBL_MAX
            for c, w in t.elements:
                if w > 0:
                    min_inc = min(min_inc, c.usage / w)
            if t.bound > 0:
                min_inc = min(min_inc, t.bound - value[id(t)])
            mu[id(t)] = min_inc
            value[id(t)] += min_inc
            if value[id(t)] == t.bound:
                live.discard(id(t))
            else:
                still.append(t)
        var_list = still
        kept = []
        for c in cnst_list:
            if not c.fatpipe:
                for t, w in users[c]:
                    c.remaining -= w * mu[id(t)]
                    if c.remaining < PRECISION_WORK:
                        c.remaining = 0.0
            else:
                for t, w in users[c]:
                    c.usage = min(c.usage, w * mu[id(t)])
                c.remaining -= c.usage
                if c.remaining < PRECISION_WORK:
                    c.remaining = 0.0
            if c.remaining <= 0.0:
                for t, w in users[c]:
                    if w > 0 and id(t) in live:
                        live.discard(id(t))
            else:
                kept.append(c)
        cnst_list = kept
        var_list = [t for t in var_list if id(t) in live]
    return [value[id(t)] for t in variables]


class Slots:
    """Actions of one kind in numpy arrays (attributes named by `fill`), the live ones packed in the first `n`
    slots (a released slot takes the last one's action), for SimGrid's per-step arithmetic on all at once."""

    def __init__(self, capacity, **fill):
        self.fill = fill
        for name, value in fill.items():
            setattr(self, name, np.full(capacity, value))
        self.owner = [None] * capacity
        self.n = 0

    def take(self, action):
        n = self.n
        if n == len(self.owner):
            for name, value in self.fill.items():
                setattr(self, name, np.concatenate([getattr(self, name), np.full(n, value)]))
            self.owner.extend([None] * n)
        action.slot = n
        self.owner[n] = action
        self.n = n + 1
        return n

    def release(self, action):
        slot, last = action.slot, self.n - 1
        if slot != last:
            moved = self.owner[slot] = self.owner[last]
            moved.slot = slot
            for name in self.fill:
                array = getattr(self, name)
                array[slot] = array[last]
        self.owner[last] = None
        action.slot = None
        self.n = last


# The least element of a 1-d array (ndarray.min without its Python wrapper: many calls on small arrays)
least = np.minimum.reduce
subtract = np.subtract
multiply = np.multiply

# A transfer still paying its latency moves nothing: its rate in the arrays is this, not 0, so that its fraction
# left over it (1e300) is never the least and a step wears nothing off it (1.0 - 1e-300 x delta == 1.0)
WAITING_RATE = 1e-300

# The most steps owed to the sleeps before they are worn anyway
OWED_SLEEP_STEPS = 64

PRECISION_BITS = int(np.array(PRECISION_TIMING).view(np.int64))   # l07_wear compares a double's bits


def compiled_wear():
    """``l07_wear``: the sleeps' wear compiled by numba (imported on demand: numba's import costs ~0.2 s of CPU,
    and its first use in a process ~0.15 s more)."""
    from . import l07_wear
    return l07_wear


# From how many jobs a run's clock imports numba for its compiled calls, numba not being in the process yet: the
# saturated day's 31 834 jobs save ~1 s of engine CPU with them, against ~0.3 s for numba's import and first use
COMPILED_FROM_JOBS = 20_000

# Transfers' shapes kept by their routes (a few hundred bytes each)
SHAPES_KEPT = 100_000


class L07Clock:
    def __init__(self, capacity=64, compiled=None, jobs=0):
        """`compiled`: the sleeps worn by owed steps in numba's compiled calls (True), by one numpy call per step
        (False), or (None) the first for a run of at least COMPILED_FROM_JOBS `jobs` (numba's import, ~0.3 s of
        CPU with its first use, is paid back at ~30 µs a job) or as soon as numba is in the process (a batloc
        policy in the engine's process has imported it). The same floats either way. The environment's
        BATLOC_COMPILED_CLOCK (1 or 0) sets it where None, for a check of either way through a run's own
        processes (``benchmarks/real_batsim.py``)."""
        if compiled is None:
            compiled = {"1": True, "0": False}.get(os.environ.get("BATLOC_COMPILED_CLOCK", ""))
            if compiled is None and jobs >= COMPILED_FROM_JOBS:
                compiled = True
        self.now = 0.0
        self.seq = 0
        self.sleeps = Slots(capacity, left=INF)                  # each sleep's remaining duration
        self.live = self.sleeps.left[:0]                          # its live part (a view, kept as sleeps come and go)
        # Steps not yet worn off the sleeps, while `low` (worn at every step) says that none ends: worn at the next
        # flush (``flush_sleeps``), each as its own step would. Every live sleep owes the same steps (a sleep
        # starts after a flush), so a slot's value may move to another (``Slots.release``) while steps are owed.
        self.sleep_owed = np.empty(OWED_SLEEP_STEPS)
        self.sleep_k = 0          # how many
        self.sleep_ends = np.empty(capacity, np.int64)   # scratch: the slots a step ends
        self.use_compiled = compiled
        self.compiled = None      # compiled_wear() once in use: until then no step is owed (sleep_k stays 0)
        # a step's delta as a 0-d float64 array: numpy subtracts it from the sleeps ~0.5 µs sooner than a Python
        # float (no scalar conversion per call); the same double, the same subtraction
        self.step_delta = np.empty(())
        self.moves = Slots(capacity, remains=INF, rate=1.0)      # each job transfer's fraction left and rate
        self.spare = np.empty(capacity)                           # scratch of the transfers' size
        # Steps not yet worn off the transfers in the arrays (while none can end, nor be the next to): worn all at
        # once at the next flush, each exactly as its own step would (``flush``)
        self.owed_steps = []
        self.owed = 0.0          # their sum
        self.fresh = False       # whether moves_low and moves_rmin hold for the arrays as last flushed
        self.moves_low = INF     # then: the least fraction over rate
        self.moves_rmin = INF    # and the least fraction left
        self.low = INF          # the least remaining sleep, kept exact
        self.messages = []      # messages and empty tasks (few at a time): plain floats, in the order they began
        self.latent = []        # transfers still paying their latency, in the order they began
        self.lmm = Lmm()
        self.shapes = {}        # routes -> their Shape (``shape``)

    @property
    def actions(self):
        return self.sleeps.n + self.moves.n + len(self.messages)

    # ---- actions ------------------------------------------------------------------------------------
    def sleep(self, seconds, done):
        """A CPU sleep of `seconds` (SimGrid's: a duration of 0 still ends at the next step only)."""
        self.seq += 1
        action = Sleep(self.seq, None, done)
        if self.sleep_k:
            self.flush_sleeps()   # the steps owed are not this sleep's
        elif self.compiled is None and self.use_compiled is not False \
                and (self.use_compiled or "numba" in sys.modules):
            self.compiled = compiled_wear()
        sleeps = self.sleeps
        slot = sleeps.take(action)   # first: it may grow the arrays
        sleeps.left[slot] = seconds
        self.live = sleeps.left[:sleeps.n]
        if seconds < self.low:
            self.low = seconds
        return action

    def shape(self, routes):
        """The shape of a parallel task moving bytes over `routes`, [(links, latency, bytes)] in the task's matrix
        order, each link as (name, bandwidth, latency, fatpipe): L07Action's constructor. A caller sending many
        alike (Batsim's messages) keeps it and gives it to `transfer`. Kept per routes: a day's stagings move a
        few thousand distinct files over the same routes, and a shape keeps its lone rate (a solve) once known."""
        key = tuple(routes)
        shape = self.shapes.get(key)
        if shape is None:
            shape = self._shape(routes)
            if len(self.shapes) < SHAPES_KEPT:
                self.shapes[key] = shape
        return shape

    def _shape(self, routes):
        latency = 0.0
        lat_current = 0.0
        weights = {}
        order = []
        for links, lat, size in routes:
            if size <= 0:
                continue
            latency = max(latency, lat)
            lat_current = max(lat_current, lat * size)
            for name, bandwidth, _, fatpipe in links:
                c = self.lmm.constraint(name, bandwidth, fatpipe)
                if c not in weights:
                    weights[c] = size
                    order.append(c)
                elif fatpipe:
                    weights[c] = max(weights[c], size)
                else:
                    weights[c] += size
        net_bound = TCP_GAMMA / (2.0 * lat_current) if lat_current > 0 else DBL_MAX
        return Shape([(c, weights[c]) for c in order], latency, net_bound)

    def transfer(self, routes, done, message=False):
        """A parallel task of transfers over `routes` (or of a `Shape` made of them) that calls `done` at its end;
        a `message` (at most a few in flight: Batsim's) is kept in plain floats rather than in the arrays."""
        shape = routes if type(routes) is Shape else self.shape(routes)
        self.seq += 1
        action = Transfer(self.seq, done, shape)
        remains = 1.0 if shape.elements else 0.0   # L07: a task on no resource costs nothing
        if message or not shape.elements:
            action.remains = remains
            self.messages.append(action)
            if message and shape.latency <= 0 and shape.elements and not any(c.users for c, _ in shape.elements):
                self.lmm.light(action)
                return action
        else:
            moves = self.moves
            self.flush()   # the steps owed are not this transfer's
            self.fresh = False
            slot = moves.take(action)   # first: it may grow the arrays
            moves.remains[slot] = remains
            moves.rate[slot] = WAITING_RATE
        if shape.latency <= 0:
            self.lmm.enable(action)
        else:
            self.latent.append(action)
        return action

    def send(self, shape, done):
        """`transfer(shape, done, message=True)`, shortest where the message is alone on its links with no latency
        and its lone rate known (Batsim's messages on batloc's platforms, nearly always): ``Lmm.light``'s work."""
        elements = shape.elements
        if shape.latency <= 0 and shape.lone is not None and elements:
            for c, _ in elements:
                if c.users:
                    return self.transfer(shape, done, message=True)
            self.seq += 1
            t = Transfer(self.seq, done, shape)
            t.remains = 1.0
            t.penalty = 1.0
            t.pace = t.rate = shape.lone
            self.messages.append(t)
            for c, _ in elements:
                c.lights.append(t)
            return t
        return self.transfer(shape, done, message=True)

    def message(self, route, done):
        """Batsim's 1-byte message over `route` = (links, latency)."""
        return self.transfer([(route[0], route[1], 1.0)], done, message=True)

    def cancel(self, action):
        if action is None or not action.alive:
            return
        action.alive = False
        if type(action) is Sleep:
            if self.sleep_k:
                self.flush_sleeps()   # its value against the least's, and the new least, as worn so far
            sleeps = self.sleeps
            lowest = sleeps.left[action.slot] <= self.low
            sleeps.release(action)
            self.live = sleeps.left[:sleeps.n]
            if lowest:
                self._new_low()
        else:
            if action.latency > 0:
                self.latent.remove(action)
            if action.slot is None:
                self.messages.remove(action)
            else:
                self.flush()
                self.fresh = False
                self.moves.release(action)
            self.lmm.disable(action)

    def _new_low(self):
        self.low = float(least(self.live)) if self.sleeps.n else INF

    # ---- steps ------------------------------------------------------------------------------------------
    def next_delta(self):
        """How far the next step moves the clock, or None when no action is left (next_occurring_event)."""
        best = self.low if self.sleeps.n else None
        lmm = self.lmm
        if lmm.dirty:
            lmm.solve()
        if lmm.changed:
            self.take_rates()
        for t in self.messages:
            pace = t.pace
            if pace > 0:
                value = t.remains / pace if t.remains > 0 else 0.0
                if best is None or value < best:
                    best = value
        for t in self.latent:
            if best is None or t.latency < best:
                best = t.latency
        if self.moves.n:
            # the steps owed leave the least fraction over rate about that much lower: far from the least action,
            # it need not be known exactly (a transfer that cannot be next)
            if not (self.fresh and best is not None and self.moves_low - self.owed > 2.0 * best):
                value = self.exact_low()
                if best is None or value < best:
                    best = value
        return best

    def take_rates(self):
        """The rates the last solve (or an enable) set, into the messages' paces and the arrays."""
        lmm = self.lmm
        rate = None
        for t in lmm.changed:
            if t.alive:
                if t.slot is None:
                    t.pace = t.rate
                else:
                    if rate is None:
                        self.flush()   # the steps owed were worn at the former rates
                        rate = self.moves.rate
                    rate[t.slot] = t.rate or WAITING_RATE   # no share (a link of no bandwidth): no progress
        lmm.changed = []

    def quick_step(self):
        """`next_delta` and `step` at once where the next step ends one message, or the least sleeps, and nothing
        else (nearly every step of a run: Batsim's messages one after the other, and the jobs' ends), the same
        float operations in the same order; None, having changed nothing that `next_delta` would not, where it
        is not that case (latencies paid, messages in parallel, a transfer in the arrays that could end or be
        next)."""
        messages = self.messages
        if len(messages) > 1 or self.latent:
            return None
        lmm = self.lmm
        if lmm.dirty:   # next_delta's first work, done here as there (it is not redone)
            lmm.solve()
        if lmm.changed:
            self.take_rates()
        n = self.sleeps.n
        if messages:
            t = messages[0]
            pace = t.pace
            remains = t.remains
            if pace <= 0 or remains <= 0:
                return None
            delta = remains / pace
            if n:
                low = self.low - delta
                if low < PRECISION_TIMING:   # a sleep ends with it (or is next): the general step
                    return None
        elif n:
            delta = self.low
        else:
            return None
        moves = self.moves.n
        if moves:
            if not self.fresh:
                self.exact_low()   # as next_delta would (and then need not)
            if not (self.moves_low - self.owed > 2.0 * delta and self.moves_rmin > 1e-12
                    and self.owed + delta <= 0.5 * self.moves_low):
                return None
        self.now += delta
        if moves:   # no transfer in the arrays can end before half its fraction is gone: the step is owed
            self.owed_steps.append(delta)
            self.owed += delta
        if not messages:
            return self.wear_sleeps(n, delta)
        if n:   # no sleep ends (low >= PRECISION_TIMING): the step is owed to them (``wear_sleeps``)
            if self.compiled is not None:
                self.owe_sleeps(delta)
            else:
                live = self.live
                d = self.step_delta
                d[()] = delta
                subtract(live, d, out=live)
            self.low = low
        remains -= pace * delta
        if remains < PRECISION_REMAINS:
            remains = 0.0
        t.remains = remains
        if remains <= 0 and t.penalty > 0:
            t.alive = False
            self.messages = []
            elements = t.elements
            if elements and t in elements[0][0].lights:   # Lmm.disable's work for a message alone on its links
                for c, _ in elements:
                    c.lights.remove(t)
                t.penalty = 0.0
            else:
                lmm.disable(t)
            return [t]
        return []

    def exact_low(self):
        """The least fraction over rate of the transfers in the arrays, every step owed worn first."""
        if self.owed_steps:
            self.flush()
        if not self.fresh:
            n = self.moves.n
            if self.compiled is not None:
                self.moves_low, self.moves_rmin = self.compiled.least_over_rate(self.moves.remains[:n],
                                                                                self.moves.rate[:n])
                self.fresh = True
                return self.moves_low
            spare = self.scratch()[:n]
            np.divide(self.moves.remains[:n], self.moves.rate[:n], out=spare)
            self.moves_low = float(least(spare))
            self.moves_rmin = float(least(self.moves.remains[:n]))
            self.fresh = True
        return self.moves_low

    def flush(self, delta=None):
        """Wear the transfers in the arrays by the steps owed (and `delta`), one after the other, exactly as step by
        step: each column [remains, rate x delta1, rate x delta2, ...] reduced by subtraction from the top."""
        owed = self.owed_steps
        if delta is not None:
            owed.append(delta)
        if owed:
            n = self.moves.n
            if n:
                remains, rate = self.moves.remains[:n], self.moves.rate[:n]
                if self.compiled is not None:
                    self.compiled.wear_moves(remains, rate, np.array(owed), len(owed))
                elif len(owed) <= 3:   # a few steps: one in-place pair of operations each (cheaper than the rows)
                    spare = self.scratch()[:n]
                    d = self.step_delta
                    for step in owed:
                        d[()] = step
                        multiply(rate, d, out=spare)   # SimGrid's update_remains(rate * delta)
                        subtract(remains, spare, out=remains)
                else:
                    # one row per step (the reduction then runs along the rows, element by element in place:
                    # the same left fold as along columns, at the speed of one subtraction per row)
                    rows = np.empty((len(owed) + 1, n))
                    rows[0] = remains
                    np.multiply.outer(owed, rate, out=rows[1:])
                    np.subtract.reduce(rows, axis=0, out=remains)
            self.owed_steps = []
            self.owed = 0.0
            self.fresh = False

    def remains(self, action):
        """The fraction of its work a transfer has left (SimGrid's get_remaining_ratio of a parallel task)."""
        if action.slot is None:
            return action.remains
        self.flush()
        return float(self.moves.remains[action.slot])

    def scratch(self):
        """A scratch array as long as the transfers' arrays."""
        if len(self.spare) != len(self.moves.remains):
            self.spare = np.empty(len(self.moves.remains))
        return self.spare

    def wear_sleeps(self, n, delta):
        """The `n` sleeps worn by a step of `delta`; those it ends, in the order they began.

        The step is owed while no sleep ends. Why no owed step can end a sleep unseen: `low` is the least sleep's
        value worn by each step as that sleep's slot would be (the same subtraction of the same doubles), and IEEE
        subtraction of one double is monotonic (a <= b gives a - d <= b - d), so the least stays the least and
        every sleep is >= `low` after every step; a step ends a sleep iff it leaves one below PRECISION_TIMING,
        so iff it leaves `low` below it, and that step flushes every step owed, itself last, before looking
        which ones end. (SimGrid's clamp of a sleep below precision to 0 applies to ending ones only.)"""
        if self.compiled is None:
            return self.wear_sleeps_now(n, delta)
        self.owe_sleeps(delta)
        low = self.low - delta
        if low >= PRECISION_TIMING:
            self.low = low
            return []
        sleeps = self.sleeps
        ends = self.sleep_ends
        if len(ends) < n:
            ends = self.sleep_ends = np.empty(len(sleeps.left), np.int64)
        # every step still owed, this one last; the slots below PRECISION_TIMING; the least of the others, the new low
        count, self.low = self.compiled.wear_ends(self.live, self.sleep_owed, self.sleep_k, ends, PRECISION_BITS)
        self.sleep_k = 0
        owner = sleeps.owner
        ended = [owner[slot] for slot in ends[:count].tolist()]
        for action in ended:
            action.alive = False
            sleeps.release(action)
        self.live = sleeps.left[:sleeps.n]
        if len(ended) > 1:
            ended.sort(key=seq_of)
        return ended

    def owe_sleeps(self, delta):
        """A step owed to the sleeps, worn with the others at the next flush (at once when OWED_SLEEP_STEPS are)."""
        k = self.sleep_k
        self.sleep_owed[k] = delta
        self.sleep_k = k + 1
        if k + 1 == OWED_SLEEP_STEPS:
            self.flush_sleeps()

    def flush_sleeps(self):
        """Wear the sleeps by the steps owed, one after the other, in order: each sleep gets exactly the subtractions
        its step-by-step wear would have given it."""
        k = self.sleep_k
        self.sleep_k = 0
        live = self.live
        if len(live):
            self.compiled.wear(live, self.sleep_owed, k)

    def wear_sleeps_now(self, n, delta):
        """`wear_sleeps` with no step owed: one numpy subtraction now."""
        sleeps = self.sleeps
        left = self.live
        d = self.step_delta
        d[()] = delta
        subtract(left, d, out=left)
        # the least stays the least (rounding is monotonic): worn down as the array is, it says whether any ends
        low = self.low - delta
        if low >= PRECISION_TIMING:
            self.low = low
            return []
        ended = [sleeps.owner[slot] for slot in (left < PRECISION_TIMING).nonzero()[0].tolist()]
        for action in ended:
            action.alive = False
            sleeps.release(action)
        self.live = sleeps.left[:sleeps.n]
        self._new_low()
        if len(ended) > 1:
            ended.sort(key=seq_of)
        return ended

    def step(self, delta):
        """Move the clock by `delta`; return the actions that end, in the order they began."""
        self.now += delta
        ended = []
        n = self.sleeps.n
        if n:
            ended = self.wear_sleeps(n, delta)
        lmm = self.lmm
        if self.latent:
            for t in list(self.latent):
                if t.latency > delta:
                    t.latency -= delta
                    if t.latency < PRECISION_TIMING:
                        t.latency = 0.0
                else:
                    t.latency = 0.0
                if t.latency <= 0.0:   # its rate comes with the next solve: this step moves nothing of it
                    self.latent.remove(t)
                    lmm.enable(t)
        done = []
        if self.messages:
            for t in self.messages:
                pace = t.pace
                if pace > 0 or t.remains > 0:
                    t.remains -= pace * delta   # SimGrid's update_remains(rate * delta), then its snap
                    if t.remains < PRECISION_REMAINS:
                        t.remains = 0.0
                if t.remains <= 0 and t.penalty > 0:
                    t.alive = False
                    done.append(t)
            if done:
                self.messages = [m for m in self.messages if m.alive]
                for t in done:
                    lmm.disable(t)
        moves = self.moves
        n = moves.n
        if n:
            if self.fresh and self.moves_rmin > 1e-12 and self.owed + delta <= 0.5 * self.moves_low:
                # no transfer can end before half its fraction is gone: the step is owed, worn at the next flush
                self.owed_steps.append(delta)
                self.owed += delta
                n = 0
            else:
                self.flush(delta)
        if n:
            remains = moves.remains[:n]
            if least(remains) < PRECISION_REMAINS:   # SimGrid's snap: worn below 1e-14, it ends
                finished = [moves.owner[slot] for slot in (remains < PRECISION_REMAINS).nonzero()[0].tolist()]
                for t in finished:
                    t.alive = False
                    moves.release(t)
                    lmm.disable(t)
                done += finished
        if done:
            if len(done) > 1:
                done.sort(key=seq_of)
            if ended:
                return merge(ended, done)
            return done
        return ended


def seq_of(action):
    return action.seq


def merge(a, b):
    """Two lists sorted by `seq`, merged."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i].seq < b[j].seq:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]
