"""SimGrid's L07 clock arithmetic for Batsim's sleeps, messages and transfers (engine/l07_clock.py), by hand, and
held float for float to the simple clock of ``l07_reference.py``."""

import random

import numpy as np

from l07_reference import ReferenceClock

from batloc.engine.l07_clock import L07Clock


def route(*links, latency=None):
    """A route over links given as (name, bandwidth, latency, fatpipe)."""
    return tuple(links), sum(link[2] for link in links) if latency is None else latency


def run(clock):
    """(time, what ended) for every step at which something ended."""
    ended = []
    while clock.actions:
        names = [a.done for a in clock.step(clock.next_delta())]
        if names:
            ended.append((clock.now, names))
    return ended


def test_a_message_takes_its_latency_then_its_byte_and_a_sleep_due_within_a_nanosecond_after_ends_with_it():
    # 2 ms of latency, then 1 byte at 10 MB/s (0.1 us): the message ends at 2.0001 ms. A sleep due 0.4 ns later
    # is worn below SimGrid's 1 ns then and ends in the same step, in the order the actions began; one due
    # 5 ns earlier ends alone before it; one due 2 ns later ends after it.
    clock = L07Clock()
    clock.sleep(0.0020001 + 4e-10, "sleep just after")
    clock.sleep(0.0020001 - 5e-9, "sleep before")
    clock.message(route(("l", 1e7, 0.002, False)), "message")
    clock.sleep(0.0020001 + 2e-9, "sleep later")
    ended = run(clock)
    assert [names for _, names in ended] == [["sleep before"], ["sleep just after", "message"], ["sleep later"]]
    assert abs(ended[1][0] - 0.0020001) < 1e-15 and ended[2][0] > ended[1][0]


def test_a_message_over_no_link_ends_at_the_next_step_without_time_and_a_cancelled_sleep_never_ends():
    clock = L07Clock()
    gone = clock.sleep(1.0, "cancelled")
    clock.sleep(2.0, "sleep")
    clock.message(route(), "instant")
    clock.cancel(gone)
    assert run(clock) == [(0.0, ["instant"]), (2.0, ["sleep"])]


def test_transfers_share_a_shared_link_and_each_has_a_fatpipe_link_to_itself():
    # Two stagings of 6.4 GB and 3.2 GB from lustre over their own node link (FATPIPE, 0.1 GB/s) and a shared
    # backbone of 0.1 GB/s: the backbone gives each 0.05 GB/s while both run (as a fraction of its bytes: 1/128
    # and 1/64 per second), so the second ends at 64 s; the first has 3.2 GB left, then alone at 0.1 GB/s: 32 s.
    # A 1-byte message over the FATPIPE node link meanwhile takes 1e-8 s, sharing nothing it could slow.
    bb = ("backbone", 1e8, 0.0, False)
    clock = L07Clock()
    clock.transfer([route(("n0", 1e8, 0.0, True), bb) + (6.4e9,)], "big")
    clock.transfer([route(("n1", 1e8, 0.0, True), bb) + (3.2e9,)], "small")
    assert run(clock) == [(64.0, ["small"]), (96.0, ["big"])]
    clock = L07Clock()
    clock.transfer([route(("n0", 1e8, 0.0, True)) + (6.4e9,)], "staging")
    clock.message(route(("n0", 1e8, 0.0, True)), "message")
    assert run(clock) == [(1e-8, ["message"]), (64.0, ["staging"])]


def test_an_io_phase_is_one_task_paced_by_its_most_loaded_link_after_its_largest_latency():
    # bytes from lustre to two cores of one node (its SHARED link carries both: 2 GB at 1 GB/s) and to a core of
    # another (1 GB at 1 GB/s), with 1 ms of latency on the first route and 2 ms on the other: the task waits
    # 2 ms, then moves at the pace of the busiest link, 2 s.
    a = ("a_link", 1e9, 0.001, False)
    b = ("b_link", 1e9, 0.002, False)
    clock = L07Clock()
    clock.transfer([route(a) + (1e9,), route(a) + (1e9,), route(b) + (1e9,)], "io")
    ((t, names),) = run(clock)
    assert names == ["io"] and abs(t - 2.002) < 1e-12


def random_trial(seed, steps=400, quick=False, messages=0.3, compiled=False):
    """The same random actions on both clocks; every step's delta and what ended, as (clock, log).

    Transfers as batloc's and Batsim's platforms have them: node links (FATPIPE or not) and, on some platforms,
    a backbone every transfer crosses; messages over a link of their own. (A FATPIPE link carrying a transfer
    held back elsewhere beside one it limits makes SimGrid's solver crawl, adding one stale increment a round:
    it does so on both clocks, and on Batsim, but for billions of rounds.) `quick`: the engine's clock takes its
    `quick_step` wherever it applies (the log then holds the clock's time, not each delta); `messages`: the share
    of new transfers that are messages; `compiled`: the engine's clock owes its steps to the sleeps (``l07_wear``)."""
    rng = random.Random(seed)
    fatpipe = rng.random() < 0.5
    nodes = [(f"n{i}", rng.choice([1e8, 1.25e8, 1e9]), rng.choice([0.0, 1e-6]), fatpipe) for i in range(3)]
    backbone = [("bb", rng.choice([1e8, 1e9]), rng.choice([0.0, 5e-5]), False)] if rng.random() < 0.6 else []
    master = (("m", 1e12, rng.choice([0.0, 1e-6]), True),)
    clocks = (L07Clock(capacity=1, compiled=compiled), ReferenceClock())   # capacity 1: the arrays grow often
    logs = ([], [])
    live = ([], [])
    for n in range(steps):
        what = rng.random()
        if what < 0.35:
            seconds = rng.choice([rng.uniform(0, 100), float(rng.randint(0, 50)), rng.uniform(0, 2e-9),
                                  rng.choice([1e-12, 1e-10, 1e-5])])
            for clock, alive in zip(clocks, live):
                alive.append(clock.sleep(seconds, n))
        elif what < 0.55:
            if rng.random() < messages:   # a message: plain floats in the engine's clock, not its arrays
                for clock, alive in zip(clocks, live):
                    alive.append(clock.message((master, master[0][2]), n))
                routes = None
            else:
                size = rng.choice([6.4e9, rng.uniform(1, 1e10), 0.0])
                hops = rng.sample(nodes, rng.randint(1, 3) if backbone else 1)
                routes = [((node,) + tuple(backbone), node[2] + sum(b[2] for b in backbone), size) for node in hops]
            for clock, alive in zip(clocks, live if routes is not None else ()):
                alive.append(clock.transfer(routes, n))
        elif what < 0.6 and live[0]:
            i = rng.randrange(len(live[0]))
            for clock, alive in zip(clocks, live):
                clock.cancel(alive.pop(i))
        for clock, log, alive in zip(clocks, logs, live):
            ended = clock.quick_step() if quick and clock is clocks[0] else None
            if ended is None:
                delta = clock.next_delta()
                if delta is None:
                    log.append(None)
                    continue
                ended = clock.step(delta)
            for a in ended:
                alive.remove(a)
            log.append((None if quick else delta.hex(), clock.now.hex(), [a.done for a in ended]))
    return logs


def test_the_engines_clock_gives_the_reference_clocks_floats_at_every_step():
    # Sleeps of every scale (below SimGrid's 1 ns too), messages, transfers sharing links of both policies,
    # with and without latency, cancellations: the same delta, clock and ended actions at every step.
    for seed in range(12):
        for compiled in (False, True):
            ours, reference = random_trial(seed, compiled=compiled)
            assert ours == reference, (seed, compiled)


def test_the_quick_step_gives_the_general_steps_floats_where_it_applies():
    # quick_step (next_delta and step at once for a lone message's or the least sleeps' end) beside the general
    # step on the reference clock: the same clock and ended actions at every step, and it applies often
    for seed in range(12):
        for compiled in (False, True):
            ours, reference = random_trial(seed, quick=True, messages=0.8, compiled=compiled)
            assert ours == reference, (seed, compiled)
    # five sleeps and a message of 1e-12 s: six quick steps, the message first
    clock = L07Clock()
    for n in range(5):
        clock.sleep(1.0 + n, n)
    clock.message(((("m", 1e12, 0.0, True),), 0.0), "m")
    ends = []
    while clock.actions:
        ended = clock.quick_step()
        assert ended is not None
        ends += [a.done for a in ended]
    assert ends == ["m", 0, 1, 2, 3, 4]



def owed_steps_trial(seed, clock, quick):
    """Bursts of messages (each a step the engine's clock owes to its sleeps) with sleeps begun, cancelled (the
    least too) and ending among them: sleeps due together, within 1 ns of each other, or a message's time apart;
    between bursts, steps of the sleeps alone (each ends the least and those within 1 ns of it). Every step's
    time (a killed delay job's progress is read from it) and what ended, as (time, names)."""
    rng = random.Random(seed)
    master = route(("m", 1e10, 0.0, True))   # a message takes 1e-10 s
    log, sleeps = [], []   # sleeps: [due time, action] of the live ones

    def step():
        ended = clock.quick_step() if quick else None
        if ended is None:
            delta = clock.next_delta()
            if delta is None:
                return
            ended = clock.step(delta)
        sleeps[:] = [s for s in sleeps if s[1] not in ended]
        log.append((clock.now.hex(), [a.done for a in ended]))

    def sleep(seconds):
        sleeps.append([clock.now + seconds, clock.sleep(seconds, len(log))])

    for _ in range(12):
        base = rng.choice([1e-9, 2.5e-9, 1.0, 1 / 3])
        for _ in range(rng.randint(1, 6)):   # due together, within 1 ns, or a message or a few apart
            sleep(base + rng.choice([0.0, 0.0, 4e-10, 9.9e-10, 1e-10, 2e-10, 3e-9]))
        for _ in range(rng.randint(5, 40)):
            clock.message(master, "message")
            what = rng.random()
            if what < 0.15:   # begun between owed steps
                sleep(rng.choice([1e-10, 5e-10, 1.2e-9, 2.5e-9, 1e-6]))
            elif what < 0.25 and sleeps:   # cancelled between owed steps: the least one half the time
                gone = min(sleeps, key=lambda s: s[0]) if rng.random() < 0.5 else rng.choice(sleeps)
                sleeps.remove(gone)
                clock.cancel(gone[1])
            step()
        for _ in range(rng.randint(0, 3)):   # the sleeps alone
            step()
    return log


def test_steps_owed_to_the_sleeps_reach_each_sleep_in_order_and_none_before_it_began():
    # The engine's clock owes its steps to the sleeps while `low` says none ends, and wears them at once when a
    # sleep starts (not the steps before it), is cancelled, or ends: the same floats as the reference clock,
    # which wears every sleep at every step, in quick and general steps. (It fails if a flush forgets an owed
    # step, or a new sleep is worn by steps owed before it began.)
    for seed in range(20):
        reference = owed_steps_trial(seed, ReferenceClock(), False)
        assert sum(len(names) for _, names in reference) > 20
        for quick in (False, True):
            assert owed_steps_trial(seed, L07Clock(capacity=1, compiled=True), quick) == reference, (seed, quick)


def test_sleeps_worn_when_the_most_steps_are_owed_get_the_same_floats(monkeypatch):
    # At OWED_SLEEP_STEPS owed the clock wears them at once (a step that also ends sleeps then finds them with
    # nothing left owed): with the bound at 2 and 3 it is reached in every burst, on ending steps too.
    from batloc.engine import l07_clock
    for most in (2, 3):
        monkeypatch.setattr(l07_clock, "OWED_SLEEP_STEPS", most)
        for seed in range(6):
            reference = owed_steps_trial(seed, ReferenceClock(), False)
            for quick in (False, True):
                assert owed_steps_trial(seed, L07Clock(capacity=1, compiled=True), quick) == reference, \
                    (most, seed, quick)


def test_the_compiled_wear_finds_the_ending_sleeps_and_the_least_of_the_others_as_numpy_does():
    # l07_wear reads doubles' bits as integers to find the sleeps below 1 ns and the least of the others: the
    # same as numpy's comparisons and minimum on doubles, negatives, -0.0, inf, ties and the threshold included
    from batloc.engine import l07_wear
    from batloc.engine.l07_clock import PRECISION_BITS, PRECISION_TIMING
    rng = np.random.default_rng(5)
    owed = np.array([1e-12, 3e-10, 1e-12, 7e-13])
    for trial in range(200):
        n = int(rng.integers(1, 300))
        left = rng.choice([0.0, -0.0, 1e-9, 1e-9 + 1e-12, 1.5e-9, 2e-9, 1.0, np.inf, 1e-18, -1e-10],
                          n) + rng.choice([0.0, 1.0], n) * rng.random(n) * 10.0 ** rng.integers(-12, 3, n)
        k = int(rng.integers(1, 5))
        expected = left.copy()
        for d in owed[:k]:
            expected -= d
        ends = np.empty(n, np.int64)
        count, low = l07_wear.wear_ends(left, owed, k, ends, PRECISION_BITS)
        assert left.tobytes() == expected.tobytes()
        assert ends[:count].tolist() == (expected < PRECISION_TIMING).nonzero()[0].tolist()
        others = expected[expected >= PRECISION_TIMING]
        assert low == (others.min() if len(others) else np.inf)


def test_the_compiled_transfers_wear_and_least_are_numpys():
    # l07_wear's transfers' flush (rate x step rounded, then subtracted, step after step) and least fraction over
    # rate: the very doubles of numpy's in-place pairs, of its rows' reduction, and of its minima
    from batloc.engine import l07_wear
    rng = np.random.default_rng(8)
    for trial in range(200):
        n = int(rng.integers(1, 120))
        remains = rng.random(n) * rng.choice([1.0, 1e-6, 1e-12], n) + 1e-14
        rate = rng.choice([1e-300, 0.015625, 0.1, 3.7e-5, 1e3], n) * (1 + rng.random(n))
        owed = rng.random(int(rng.integers(1, 8))) * 10.0 ** rng.integers(-12, 1)
        pairs, rows = remains.copy(), np.empty((len(owed) + 1, n))
        for step in owed:
            pairs -= np.multiply(rate, step)
        rows[0] = remains
        np.multiply.outer(owed, rate, out=rows[1:])
        l07_wear.wear_moves(remains, rate, owed, len(owed))
        assert remains.tobytes() == pairs.tobytes() == np.subtract.reduce(rows, axis=0).tobytes()
        low, rmin = l07_wear.least_over_rate(remains, rate)
        assert (low, rmin) == (np.minimum.reduce(remains / rate), np.minimum.reduce(remains))


def test_a_long_run_takes_the_compiled_calls_a_short_one_only_once_numba_is_loaded(monkeypatch):
    # numba's import (~0.3 s with its first use) pays back past ~10 000 jobs: a run of COMPILED_FROM_JOBS or
    # more takes the compiled calls even over ZeroMQ (numba not yet in the engine's process); the environment's
    # BATLOC_COMPILED_CLOCK still forces either way.
    from batloc.engine.l07_clock import COMPILED_FROM_JOBS
    monkeypatch.delenv("BATLOC_COMPILED_CLOCK", raising=False)
    assert L07Clock(jobs=COMPILED_FROM_JOBS).use_compiled is True
    assert L07Clock(jobs=COMPILED_FROM_JOBS - 1).use_compiled is None
    monkeypatch.setenv("BATLOC_COMPILED_CLOCK", "0")
    assert L07Clock(jobs=COMPILED_FROM_JOBS).use_compiled is False
