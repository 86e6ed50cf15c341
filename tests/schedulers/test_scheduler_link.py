"""schedulers/link.py: pybatsim's end of the link reads and writes what the standard library would, and the
in-process handler hands pybatsim exactly the engine's message and the engine exactly pybatsim's answer, over a
pair of pipes whose frames survive any size."""

import json
import logging
import os

import pytest

from batloc.schedulers.link import PYBATSIM_LOG, PipeError, PipeNetwork, decode, encode
from batloc.schedulers.pipes import ANSWER, MESSAGE, READY, Frames, PeerGone


@pytest.fixture
def pipes():
    """(the engine's end, the scheduler's end) of a pair of pipes, in one process."""
    to_sched, to_engine = os.pipe(), os.pipe()
    engine, sched = Frames(to_engine[0], to_sched[1]), Frames(to_sched[0], to_engine[1])
    yield engine, sched
    engine.close()
    sched.close()


def test_values_read_and_written_as_the_standard_library_does():
    raw = b'{"now":1.5,"events":[{"timestamp":1.5,"type":"X","data":{"big":123456789012345678901234567890}}]}'
    assert decode(raw) == json.loads(raw)               # beyond 64 bits: the standard library reads it
    assert f"{decode(raw)}".startswith("(message not formatted")   # INFO off: never formatted
    assert encode({"a": float("nan")}) == b'{"a": NaN}'  # as json.dumps writes it (the engine refuses it)
    assert json.loads(encode({"now": 0.1, "events": []})) == {"now": 0.1, "events": []}


def test_the_pipe_network_hands_over_one_message_and_its_answer(pipes):
    engine, sched = pipes
    net = PipeNetwork(sched)
    engine.write(MESSAGE, b'{"now":2.0,"events":[]}')
    assert net.recv(blocking=True) == {"now": 2.0, "events": []}
    answer = {"now": 2.0, "events": [{"timestamp": 2.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]}
    net.send(answer)
    kind, raw = engine.read()
    assert kind == ANSWER and json.loads(raw) == {"now": 2.0, "events": [
        {"timestamp": 2.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]}
    # once sent, pybatsim only formats it into its INFO line: without INFO, its events are left out
    assert "events not formatted" in "{}".format(answer)
    engine.write(READY)
    with pytest.raises(PipeError):
        net.recv()                                       # a frame that is no message
    assert net.connection is None                        # no socket for a scheduler to watch


def test_frames_of_any_size_and_the_end_of_the_pipe(pipes):
    engine, sched = pipes
    big = bytes(range(256)) * 4096                       # 1 MiB: many reads of the pipe
    seen = []
    engine.write(MESSAGE, b"")
    assert sched.read() == (MESSAGE, b"")
    import threading

    writer = threading.Thread(target=engine.write, args=(MESSAGE, big))
    writer.start()
    kind, raw = sched.read(wait=lambda: seen.append(1))
    writer.join()
    assert kind == MESSAGE and raw == big and seen    # waited before reads that would block
    engine.close()
    with pytest.raises(PeerGone):
        sched.read()
    with pytest.raises(PeerGone):
        sched.write(ANSWER, b"x")


def test_a_sent_message_keeps_its_events_when_info_is_shown(pipes):
    level = PYBATSIM_LOG.level
    PYBATSIM_LOG.setLevel(logging.INFO)
    try:
        net = PipeNetwork(pipes[1])
        answer = {"now": 1.0, "events": [{"timestamp": 1.0, "type": "CALL_ME_LATER", "data": {"timestamp": 5.0}}]}
        net.send(answer)
        assert "CALL_ME_LATER" in "{}".format(answer)
    finally:
        PYBATSIM_LOG.setLevel(level)
