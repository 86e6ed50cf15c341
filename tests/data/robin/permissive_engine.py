"""A stand-in for an engine that trusts its scheduler blindly (robin's `engine:` key runs it).

    python permissive_engine.py -p P.xml -w W.json -e PREFIX -s ENDPOINT [ignored flags]

Submits every job of the workload at t=1, runs each EXECUTE_JOB of the answer
from then for its profile's delay on whatever allocation the scheduler gave,
without checking anything, and writes PREFIX_jobs.csv. With a scheduler that
overlaps jobs on a core it writes an impossible schedule, which robin's
validation must catch: the embedded engine would refuse it.
"""

import json
import sys

import zmq

from batloc.engine.export import JOBS_HEADER

args = sys.argv[1:]


def opt(flag):
    return args[args.index(flag) + 1]


workload = json.load(open(opt("-w")))
sock = zmq.Context().socket(zmq.REQ)
sock.connect(opt("-s"))


def say(now, *events):
    sock.send(json.dumps({"now": now, "events": [dict(e, timestamp=now) for e in events]}).encode())
    return json.loads(sock.recv())["events"]


jobs = {f"w0!{j['id']}": j for j in workload["jobs"]}
say(0.0, {"type": "SIMULATION_BEGINS", "data": {}})
answer = say(1.0, *({"type": "JOB_SUBMITTED", "data": {"job_id": jid, "job": dict(j, id=jid)}}
                    for jid, j in jobs.items()))
rows, end = [], 1.0
for e in answer:
    if e["type"] != "EXECUTE_JOB":
        continue
    j = jobs[e["data"]["job_id"]]
    delay = workload["profiles"][j["profile"]]["delay"]
    end = max(end, 1.0 + delay)
    rows.append([str(j["id"]), "w0", j["profile"], f"{j['subtime']:.6f}", str(j["res"]), f"{j['walltime']:.6f}",
                 "1", "COMPLETED_SUCCESSFULLY", "1.000000", f"{delay:.6f}", f"{1.0 + delay:.6f}",
                 f"{1.0 - j['subtime']:.6f}", f"{1.0 + delay - j['subtime']:.6f}", "1.000000",
                 e["data"]["alloc"], "0", ""])
say(end, {"type": "SIMULATION_ENDS", "data": {}})
with open(opt("-e") + "_jobs.csv", "w") as f:
    f.write(JOBS_HEADER + "\n" + "".join(",".join(r) + "\n" for r in rows))
