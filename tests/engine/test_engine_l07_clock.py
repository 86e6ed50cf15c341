"""SimGrid's L07 clock arithmetic for Batsim's sleeps and messages (engine/l07_clock.py), by hand."""

from batloc.engine.l07_clock import L07Clock


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
    clock.message(0.002, 1e7, "message")
    clock.sleep(0.0020001 + 2e-9, "sleep later")
    ended = run(clock)
    assert [names for _, names in ended] == [["sleep before"], ["sleep just after", "message"], ["sleep later"]]
    assert abs(ended[1][0] - 0.0020001) < 1e-15 and ended[2][0] > ended[1][0]


def test_a_message_over_no_link_ends_at_the_next_step_without_time_and_a_cancelled_sleep_never_ends():
    clock = L07Clock()
    gone = clock.sleep(1.0, "cancelled")
    clock.sleep(2.0, "sleep")
    clock.message(0.0, None, "instant")
    clock.cancel(gone)
    assert run(clock) == [(0.0, ["instant"]), (2.0, ["sleep"])]
