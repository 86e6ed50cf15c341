"""Stand-in for Batsim in robin tests: connects like Batsim 4, sends one message, exits 0 on the reply.

fake_engine.py [... -s tcp://localhost:PORT ... [-e PREFIX] ...]   (other Batsim flags are ignored)

With -e it writes PREFIX_jobs.csv as Batsim does for a workload without jobs (the header alone).
"""
import json
import sys

import zmq

port = int(sys.argv[sys.argv.index("-s") + 1].rsplit(":", 1)[1])
sock = zmq.Context().socket(zmq.REQ)
sock.connect(f"tcp://localhost:{port}")
sock.send_string(json.dumps({"now": 0, "events": [{"timestamp": 0, "type": "SIMULATION_ENDS", "data": {}}]}))
print("reply:", sock.recv_string(), flush=True)
if "-e" in sys.argv:
    from batloc.engine.export import JOBS_HEADER

    with open(sys.argv[sys.argv.index("-e") + 1] + "_jobs.csv", "w") as f:
        f.write(JOBS_HEADER + "\n")
sys.exit(0)
