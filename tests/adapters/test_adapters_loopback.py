"""The staging proxy listens on loopback unless told otherwise: nobody else can drive a run."""

import zmq

from batloc.adapters.cli import parse_args
from batloc.adapters.links import EngineSide


def listening_addresses(port):
    """Local addresses listening on TCP `port`, as `ss -ltn` would show them (from /proc/net/tcp{,6})."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:   # 0A: LISTEN
                found.append(address)
    return found


def test_default_bind_is_loopback_and_the_socket_listens_there_only():
    default = parse_args([]).bind
    assert default == "tcp://127.0.0.1:28000"
    ctx = zmq.Context()
    side = EngineSide(ctx, default.rsplit(":", 1)[0] + ":*")   # the default host, any free port
    try:
        port = int(side.sock.getsockopt(zmq.LAST_ENDPOINT).decode().rsplit(":", 1)[1])
        assert listening_addresses(port) == ["0100007F"]   # 127.0.0.1, not 0.0.0.0 nor ::
    finally:
        side.close()
        ctx.term()


def test_an_explicit_address_is_kept():
    assert parse_args(["--bind", "tcp://0.0.0.0:28123"]).bind == "tcp://0.0.0.0:28123"
