"""SimGrid 3.34's clock under its L07 model, float for float, for Batsim's sleeps and 1-byte messages.

Batsim's events often fall on the same instant *mathematically* (a job started
five messages after t = 0 ends after 10 s just as the submission of t = 10,
late by five messages, arrives); which one SimGrid sees first then depends on
its floating-point sums, and so does what the scheduler is told. This clock
does SimGrid's arithmetic (``EngineImpl::solve``, ``HostL07Model``,
``Model::next_occurring_event_full``, ``double_update`` at v3.34) on the
actions Batsim would have: each step moves the clock by the smallest of every
action's remaining latency, remaining bytes over its rate, or remaining sleep;
then every action is worn down by that step, in the order the actions began,
and those worn to nothing (within SimGrid's precision) end together, in that
order. Transfers and computations of jobs stay real SimGrid activities; they
end the step at which SimGrid ends them (``external``).
"""

PRECISION_TIMING = 1e-9          # SimGrid's precision/timing
PRECISION_WORK = 1e-5 * 1e-9     # precision/work-amount x precision/timing, for remaining work
TCP_GAMMA = 4194304.0            # network/TCP-gamma: L07 bounds a transfer's rate by gamma / (2 x latency)

SLEEP, COMM, ZERO = 0, 1, 2


class Action:
    __slots__ = ("kind", "left", "latency", "rate", "done", "alive")

    def __init__(self, kind, left, done, latency=0.0, rate=0.0):
        self.kind = kind
        self.left = left          # SLEEP: max_duration; COMM: remaining work (1.0: the byte)
        self.latency = latency
        self.rate = rate          # COMM: the byte's rate once its latency is over
        self.done = done          # what happens when it ends
        self.alive = True


class L07Clock:
    def __init__(self):
        self.now = 0.0
        self.actions = []   # in the order they began

    def sleep(self, seconds, done):
        action = Action(SLEEP, seconds, done)
        self.actions.append(action)
        return action

    def message(self, latency, bandwidth, done):
        """A 1-byte transfer over a route of `latency` whose slowest link carries `bandwidth` bytes/s."""
        if bandwidth is None:   # no link at all: L07 ends it at the next step, taking no time
            action = Action(ZERO, 0.0, done)
        else:
            rate = bandwidth if latency <= 0 else min(bandwidth, TCP_GAMMA / (2.0 * latency))
            action = Action(COMM, 1.0, done, latency, rate)
        self.actions.append(action)
        return action

    def cancel(self, action):
        if action is not None and action.alive:
            action.alive = False
            self.actions.remove(action)

    def next_delta(self):
        """How far the next step moves the clock, or None when no action is left."""
        best = None
        for a in self.actions:
            if a.kind == SLEEP:
                value = a.left
            elif a.kind == COMM:
                value = a.latency if a.latency > 0 else (a.left / a.rate if a.left > 0 else 0.0)
            else:
                value = 0.0
            if best is None or value < best:
                best = value
        return best

    def step(self, delta):
        """Move the clock by `delta`; return the actions that end, in the order they began."""
        self.now += delta
        ended, kept = [], []
        for a in self.actions:
            if a.kind == SLEEP:
                a.left -= delta
                if a.left < PRECISION_TIMING:
                    a.left = 0.0
                finished = a.left <= 0
            elif a.kind == COMM:
                if a.latency > 0:
                    if a.latency > delta:
                        a.latency -= delta
                        if a.latency < PRECISION_TIMING:
                            a.latency = 0.0
                    else:
                        a.latency = 0.0
                    finished = False   # its rate was 0 during this step: the byte starts at the next
                else:
                    a.left -= a.rate * delta
                    if a.left < PRECISION_WORK:
                        a.left = 0.0
                    finished = a.left <= 0
            else:
                finished = True
            if finished:
                a.alive = False
                ended.append(a)
            else:
                kept.append(a)
        self.actions = kept
        return ended
