"""Numbers read as Batsim 4.2.1 reads them: RapidJSON's default parser, not always the nearest double
(engine/protocol.py rapidjson_float), worked out by hand from reader.h."""

import math

import pytest

from batloc.engine.protocol import LONG_NUMBER, decode_batsim, has_long_number, rapidjson_float


def test_a_long_number_is_read_one_double_off_as_batsim_reads_it():
    # pybatsim echoes Batsim's now 100000000000.000031 as "100000000000.00003": RapidJSON keeps the digits
    # 10000000000000003, which as a double is 10^16 + 4 (doubles are 2 apart there), then divides by 10^5:
    # 100000000000.00004, whose nearest double is 10^11 + 3 ulps, where the nearest to the text is 10^11 + 2 ulps
    # (Batsim's clock): so Batsim sleeps one ulp before the decision (its job 11 of test_long_workload.json
    # starts at 100000000000.000061, not .000046).
    ulp = math.ulp(1e11)
    assert float("100000000000.00003") == 1e11 + 2 * ulp
    assert rapidjson_float("100000000000.00003") == 1e11 + 3 * ulp
    # the 17 digits 38874000000000116 are rounded to a double (8 apart there) before the division by 10^12
    assert rapidjson_float("38874.000000000116") == 38874.00000000011 != float("38874.000000000116")


def test_numbers_of_15_digits_or_fewer_and_messages_without_long_ones_read_as_usual():
    for text in ("0.1", "-3.25", "57.245384", "7631.859072", "1.5e-05", "86400.000001", "1e-320", "0.0"):
        assert rapidjson_float(text) == float(text), text
    raw = b'{"now": 12.5, "events": [{"timestamp": 12.5, "type": "CALL_ME_LATER", "data": {"timestamp": 100.000001}}]}'
    assert decode_batsim(raw)["events"][0]["data"]["timestamp"] == 100.000001
    raw = b'{"now": 100000000000.00003, "events": []}'
    assert decode_batsim(raw)["now"] == rapidjson_float("100000000000.00003")


def test_the_long_number_test_without_the_regex_agrees_with_the_regex_on_random_text():
    # numbers' characters, exponents with and without signs, letters the class table maps (d, p, e, s, x)
    import random

    rng = random.Random(38)
    alphabet = b'0123456789.eE+-xdps "{}:,'
    for _ in range(20000):
        raw = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert has_long_number(raw) == (LONG_NUMBER.search(raw) is not None), raw
    assert has_long_number(b'{"t":4E-2}') and has_long_number(b"12345678.12345678") and not \
        has_long_number(b'{"type":"EXECUTE_JOB","timestamp":862591.999999}')


def test_the_engine_reads_a_schedulers_long_timestamp_as_batsim_does(tmp_path, platform):
    # A scheduler asks to be called at 10^11 s + 2 ulps, which Python's json writes "100000000000.00003":
    # Batsim reads it one double later (above), so the call comes at 10^11 + 3 ulps, not at the double asked.
    pytest.importorskip("zmq")
    from engine_harness import run, write

    ulp = math.ulp(1e11)
    wl = write(tmp_path, "w.json", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1e11, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 10}}})

    def sched(msg):
        if any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            return [{"type": "CALL_ME_LATER", "data": {"timestamp": 1e11 + 2 * ulp}}]
        if any(e["type"] == "REQUESTED_CALL" for e in msg["events"]):
            return [{"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]
        return []

    res = run(tmp_path, platform, [wl], sched)
    assert res.returncode == 0, res.stderr
    calls = [m["now"] for m in res.messages if any(e["type"] == "REQUESTED_CALL" for e in m["events"])]
    assert calls == [1e11 + 3 * ulp]
    assert float(res.jobs()["1"]["starting_time"]) == 1e11 + 3 * ulp
