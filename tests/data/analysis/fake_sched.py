"""Misbehaving decision processes for robin tests.

fake_sched.py MODE MARKER -s tcp://ADDRESS:PORT: starts a grandchild `sleep <MARKER>` (to check
that robin leaves no orphan), then binds exactly the endpoint given (printing
`bound: ENDPOINT`, the address the socket got), and
  ok     answers one message, exits 0
  never  never binds (a scheduler that never connects)
  hang   binds, receives, never answers
  crash  binds, receives, exits 3
"""
import subprocess
import sys
import time

import zmq

mode, marker = sys.argv[1], sys.argv[2]
endpoint = sys.argv[sys.argv.index("-s") + 1]
subprocess.Popen(["sleep", marker])
if mode == "never":
    time.sleep(600)
sock = zmq.Context().socket(zmq.REP)
sock.bind(endpoint)
print("bound:", sock.getsockopt_string(zmq.LAST_ENDPOINT), flush=True)
msg = sock.recv_string()
print("got:", msg, flush=True)
if mode == "ok":
    sock.send_string('{"now": 0, "events": []}')
    sys.exit(0)
if mode == "crash":
    print("fake scheduler: crashing on purpose", file=sys.stderr, flush=True)
    sys.exit(3)
time.sleep(600)
