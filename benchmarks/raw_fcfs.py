"""A minimal first-come first-served decision process, for benchmarks only.

    python benchmarks/raw_fcfs.py ENDPOINT [--per-node]

It binds ENDPOINT and answers the engine with the least work possible, so a
benchmark measures what surrounds it. Free resource ids are kept as stacks
(O(cores of the job) per start). With ``--per-node`` each job is packed into
one node (the compute resources' ``node`` property), as pybatsim's stock
schedulers do on Rackham; otherwise any free cores will do.
"""

import json
import sys

import zmq


def serve(endpoint, per_node):
    sock = zmq.Context().socket(zmq.REP)
    sock.bind(endpoint)
    free, queue, alloc = {}, [], {}
    while True:
        msg = json.loads(sock.recv())
        ends = False
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "JOB_SUBMITTED":
                queue.append((d["job_id"], d["job"]["res"]))
            elif t == "JOB_COMPLETED":
                node, ids = alloc.pop(d["job_id"])
                free[node].extend(ids)
            elif t == "SIMULATION_BEGINS":
                for r in d["compute_resources"]:
                    free.setdefault(r["properties"]["node"] if per_node else "", []).append(r["id"])
            elif t == "SIMULATION_ENDS":
                ends = True
        out = []
        head = 0
        while head < len(queue):
            job_id, res = queue[head]
            node = next((n for n, ids in free.items() if len(ids) >= res), None)
            if node is None:
                break
            head += 1
            ids = free[node][-res:]
            del free[node][-res:]
            alloc[job_id] = (node, ids)
            out.append({"timestamp": msg["now"], "type": "EXECUTE_JOB",
                        "data": {"job_id": job_id, "alloc": " ".join(map(str, ids))}})
        if head:
            del queue[:head]
        sock.send(json.dumps({"now": msg["now"], "events": out}).encode())
        if ends:
            break


if __name__ == "__main__":
    serve(sys.argv[1], "--per-node" in sys.argv[2:])
