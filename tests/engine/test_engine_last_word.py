"""A peer that says why it stops and closes at once: its reason is read, not its disconnection."""

import threading
import time

import pytest
import zmq

from batloc.engine.watched_socket import WatchedSocket


class Gone(Exception):
    pass


def test_a_disconnected_peers_last_message_is_still_read():
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    ws = WatchedSocket(ctx, zmq.REQ)
    ws.connect(f"tcp://127.0.0.1:{port}", RuntimeError)
    try:
        ws.sock.send(b"SIMULATION_BEGINS")
        assert rep.recv() == b"SIMULATION_BEGINS"
        deadline = time.monotonic() + 5
        while not ws.connected and time.monotonic() < deadline:    # the monitor's news of the connection
            ws.monitor.poll(50)
            ws._read_monitor()

        def answer_late():
            time.sleep(0.4)                    # past one poll period
            rep.send(b"batloc-stage-proxy: run it with --enable-dynamic-jobs")

        threading.Thread(target=answer_late).start()
        # The monitor has (as under load) already reported the peer gone; the caller's check
        # would say so at its first call: the message that is on its way wins.
        ws.disconnected = True

        def check():
            raise Gone

        assert ws.wait(check) == b"batloc-stage-proxy: run it with --enable-dynamic-jobs"
    finally:
        ws.close()
        rep.close(0)
    # A peer gone for good, nothing on its way: the check decides, after the grace period.
    lone = WatchedSocket(ctx, zmq.REQ)
    lone.connect(f"tcp://127.0.0.1:{port}", RuntimeError)
    try:
        lone.disconnected = True
        started = time.monotonic()
        with pytest.raises(Gone):
            lone.wait(check)
        assert time.monotonic() - started < 3.0
    finally:
        lone.close()
        ctx.term()
