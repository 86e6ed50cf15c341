"""schedulers/link.py: pybatsim's end of the link reads and writes what the standard library would, and the
in-process handler hands pybatsim exactly the engine's message and the engine exactly pybatsim's answer."""

import json
import logging

import pytest

from batloc.schedulers.link import PYBATSIM_LOG, LocalNetwork, LocalNetworkError, decode, encode


def test_values_read_and_written_as_the_standard_library_does():
    raw = b'{"now":1.5,"events":[{"timestamp":1.5,"type":"X","data":{"big":123456789012345678901234567890}}]}'
    assert decode(raw) == json.loads(raw)               # beyond 64 bits: the standard library reads it
    assert f"{decode(raw)}".startswith("(message not formatted")   # INFO off: never formatted
    assert encode({"a": float("nan")}) == b'{"a": NaN}'  # as json.dumps writes it (the engine refuses it)
    assert json.loads(encode({"now": 0.1, "events": []})) == {"now": 0.1, "events": []}


def test_local_network_hands_over_one_message_and_its_answer():
    net = LocalNetwork()
    with pytest.raises(LocalNetworkError):
        net.recv()                                       # nothing delivered yet
    net.deliver(b'{"now":2.0,"events":[]}')
    assert net.recv(blocking=True) == {"now": 2.0, "events": []}
    with pytest.raises(LocalNetworkError):
        net.recv()                                       # read once only
    answer = {"now": 2.0, "events": [{"timestamp": 2.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]}
    net.send(answer)
    assert json.loads(net.answer) == {"now": 2.0, "events": [
        {"timestamp": 2.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]}
    # once sent, pybatsim only formats it into its INFO line: without INFO, its events are left out
    assert "events not formatted" in "{}".format(answer)


def test_a_sent_message_keeps_its_events_when_info_is_shown():
    level = PYBATSIM_LOG.level
    PYBATSIM_LOG.setLevel(logging.INFO)
    try:
        net = LocalNetwork()
        answer = {"now": 1.0, "events": [{"timestamp": 1.0, "type": "CALL_ME_LATER", "data": {"timestamp": 5.0}}]}
        net.send(answer)
        assert "CALL_ME_LATER" in "{}".format(answer)
    finally:
        PYBATSIM_LOG.setLevel(level)
