"""The simple L07 clock the engine's one is held to: every action an object, worn down one by one at each step.

SimGrid 3.34's ``HostL07Model::update_actions_state`` and ``next_occurring_event`` read as directly as Python
allows, with no array and no cache: sleeps and transfers in one list, in the order they began. The engine's
clock (``batloc.engine.l07_clock``) keeps sleeps in a numpy array and caches lone transfers' rates; both must
give the same floats at every step (``test_engine_l07_clock.py``).
"""

from batloc.engine.l07_clock import DBL_MAX, PRECISION_REMAINS, PRECISION_TIMING, TCP_GAMMA, Constraint, \
    fair_bottleneck


class Action:
    def __init__(self, done, max_duration=-1.0, latency=0.0, elements=(), net_bound=DBL_MAX, empty=False):
        self.done = done
        self.max_duration = max_duration
        self.latency = latency
        self.elements = list(elements)
        self.net_bound = net_bound
        self.remains = 1.0 if (elements or max_duration >= 0) and not empty else 0.0
        self.penalty = 0.0
        self.bound = -1.0
        self.rate = 0.0
        self.sleep = max_duration >= 0


class ReferenceClock:
    def __init__(self):
        self.now = 0.0
        self.actions = []
        self.constraints = {}

    def sleep(self, seconds, done):
        action = Action(done, max_duration=seconds)
        self.actions.append(action)
        return action

    def transfer(self, routes, done):
        latency, lat_current, weights, order = 0.0, 0.0, {}, []
        for links, lat, size in routes:
            if size <= 0:
                continue
            latency = max(latency, lat)
            lat_current = max(lat_current, lat * size)
            for name, bandwidth, _, fatpipe in links:
                c = self.constraints.setdefault(name, Constraint(name, bandwidth, fatpipe))
                if c not in weights:
                    weights[c] = size
                    order.append(c)
                else:
                    weights[c] = max(weights[c], size) if fatpipe else weights[c] + size
        net_bound = TCP_GAMMA / (2.0 * lat_current) if lat_current > 0 else DBL_MAX
        action = Action(done, latency=latency, elements=[(c, weights[c]) for c in order], net_bound=net_bound,
                        empty=not order)
        if latency <= 0:
            self._enable(action)
        self.actions.append(action)
        return action

    def message(self, route, done):
        return self.transfer([(route[0], route[1], 1.0)], done)

    def cancel(self, action):
        if action in self.actions:
            self.actions.remove(action)
            self._disable(action)

    def _enable(self, a):
        a.penalty = 1.0
        if a.net_bound < DBL_MAX:
            a.bound = a.net_bound
        for c, w in a.elements:
            c.users.insert(0, (a, w))

    def _disable(self, a):
        if a.penalty > 0:
            for c, _ in a.elements:
                c.users = [u for u in c.users if u[0] is not a]
        a.penalty = 0.0

    def _solve(self):
        """Every enabled transfer, every time (no component, no cache)."""
        live = [a for a in self.actions if not a.sleep and a.penalty > 0]
        cnsts = [c for c in self.constraints.values() if c.users]
        for a, value in zip(live, fair_bottleneck(live, cnsts)):
            a.rate = value
        for a in self.actions:
            if a.sleep or a.penalty <= 0:
                a.rate = 0.0

    def next_delta(self):
        if not self.actions:
            return None
        self._solve()
        best = None
        for a in self.actions:
            if a.rate > 0:
                value = a.remains / a.rate if a.remains > 0 else 0.0
                if best is None or value < best:
                    best = value
            if a.max_duration >= 0 and (best is None or a.max_duration < best):
                best = a.max_duration
            if a.latency > 0 and (best is None or a.latency < best):
                best = a.latency
        return best

    def step(self, delta):
        self.now += delta
        ended, kept = [], []
        for a in self.actions:
            if a.latency > 0:
                if a.latency > delta:
                    a.latency -= delta
                    if a.latency < PRECISION_TIMING:
                        a.latency = 0.0
                else:
                    a.latency = 0.0
                if a.latency <= 0:
                    self._enable(a)
            a.remains -= a.rate * delta
            if a.remains < PRECISION_REMAINS:
                a.remains = 0.0
            if a.max_duration >= 0:
                a.max_duration -= delta
                if a.max_duration < PRECISION_TIMING:
                    a.max_duration = 0.0
            if (a.remains <= 0 and a.penalty > 0) or (a.max_duration >= 0 and a.max_duration <= 0):
                ended.append(a)
            else:
                kept.append(a)
        self.actions = kept
        for a in ended:
            self._disable(a)
        return ended
