"""A scheduler for permissive_engine.py: `python core_zero.py overlap|honest -s ENDPOINT`.

overlap puts every job on core 0 at once (an impossible schedule); honest gives
the i-th job core i. Either way it writes `out_events.csv` in its working
directory, as pybatsim's stock schedulers do, and exits 0 at SIMULATION_ENDS.
"""

import json
import sys

import zmq

mode = sys.argv[1]
sock = zmq.Context().socket(zmq.REP)
sock.bind(sys.argv[sys.argv.index("-s") + 1])
with open("out_events.csv", "w") as log:
    while True:
        msg = json.loads(sock.recv())
        submitted = [e["data"]["job_id"] for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
        out = [{"timestamp": msg["now"], "type": "EXECUTE_JOB",
                "data": {"job_id": jid, "alloc": "0" if mode == "overlap" else str(i)}}
               for i, jid in enumerate(submitted)]
        log.write(f"{msg['now']},{len(out)}\n")
        sock.send(json.dumps({"now": msg["now"], "events": out}).encode())
        if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            sys.exit(0)
