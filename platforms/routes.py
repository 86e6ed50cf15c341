"""Whether every host of the master's zone has a route to the master, from the XML alone.

Batsim's job-end messages go from a job's first host to the master (contract
§1). In a ``Dijkstra`` or ``Floyd`` zone a host has exactly the routes its
``<route>`` elements give; batloc's flat layout before 2026-11 gave none to
the master, and SimGrid then crashes (Dijkstra) or stops the run at the first
job end (Floyd). The engine asks SimGrid itself in a child process
(``engine.simgrid_probe``); this check is for the tools that do not run
SimGrid (``batloc platform show``, the workload tools), so that they do not
accept what the engine refuses. Hosts in other zones reach the master through
zone routes, which this does not follow.
"""

import xml.etree.ElementTree as ET

GRAPH_ROUTING = ("Dijkstra", "DijkstraCache", "Floyd")
ZONES = ("zone", "AS")


def unreached(text, master):
    """(zone id, routing, hosts of the master's zone without a route to it) or None when all have one (or the
    master's zone is not routed by a graph). `text`: the platform's XML bytes."""
    if not any(r.encode() in text for r in GRAPH_ROUTING):
        return None   # the common case costs a byte search
    for zone in ET.fromstring(text).iter():
        if zone.tag not in ZONES or zone.get("routing") not in GRAPH_ROUTING:
            continue
        hosts = [child.get("id") for child in zone if child.tag == "host"]
        if master not in hosts:
            continue
        reach = {master}   # who can send to the master, walking routes backwards
        edges = []
        for route in zone:
            if route.tag == "route":
                src, dst = route.get("src"), route.get("dst")
                edges.append((src, dst))
                if route.get("symmetrical", "YES").upper() != "NO":
                    edges.append((dst, src))
        grew = True
        while grew:
            grew = False
            for src, dst in edges:
                if dst in reach and src not in reach:
                    reach.add(src)
                    grew = True
        missing = [h for h in hosts if h not in reach]
        return (zone.get("id"), zone.get("routing"), missing) if missing else None
    return None
