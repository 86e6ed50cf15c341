"""A backbone platform written as a user would write one, not by `batloc platform generate` (docs/workflows.md,
"Other recipes, on a platform written by hand"): 12 nodes cn1..cn12 (names not zero-padded) of 16 cores at
2 Gf, 96 GB, SHARED node links of 0.25 GB/s and 5 us, a SHARED backbone of 1.5 GB/s listed first on each
route, a master named head, routes between every two nodes (write_back: staged).

    python benchmarks/hand_platform.py hpc12.xml
"""

import sys

N, C = 12, 16
nodes = [f"cn{i}" for i in range(1, N + 1)]
out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">', '<platform version="4.1">',
       '  <zone id="hpc" routing="Full">',
       '    <zone id="ctl" routing="Full"><host id="head" speed="2Gf"><prop id="role" value="master"/></host></zone>',
       '    <zone id="pfs" routing="Full"><host id="lustre" speed="1Gf"><prop id="role" value="storage"/>'
       '<prop id="bandwidth" value="1500000000"/></host></zone>']
for n in nodes:
    out.append(f'    <zone id="{n}" routing="Full">')
    for c in range(C):
        out.append(f'      <host id="{n}_c{c}" speed="2Gf" core="1"><prop id="node" value="{n}"/></host>')
    out.append(f'      <host id="{n}_mem" speed="1Gf"><prop id="role" value="storage"/><prop id="node" value="{n}"/>'
               f'<prop id="memory_bytes" value="96000000000"/><prop id="bandwidth" value="250000000"/></host>')
    out.append('    </zone>')
for n in nodes:
    out.append(f'    <link id="{n}_up" bandwidth="250MBps" latency="5us" sharing_policy="SHARED"/>')
out.append('    <link id="pfs_backbone" bandwidth="1.5GBps" latency="5us" sharing_policy="SHARED"/>')
out.append('    <link id="ctl_link" bandwidth="100GBps" latency="0s" sharing_policy="FATPIPE"/>')
out.append('    <zoneRoute src="pfs" dst="ctl" gw_src="lustre" gw_dst="head"><link_ctn id="ctl_link"/></zoneRoute>')
for n in nodes:
    out.append(f'    <zoneRoute src="pfs" dst="{n}" gw_src="lustre" gw_dst="{n}_mem"><link_ctn id="pfs_backbone"/>'
               f'<link_ctn id="{n}_up"/></zoneRoute>')
    out.append(f'    <zoneRoute src="{n}" dst="ctl" gw_src="{n}_mem" gw_dst="head"><link_ctn id="ctl_link"/></zoneRoute>')
for i, a in enumerate(nodes):
    for b in nodes[i + 1:]:
        out.append(f'    <zoneRoute src="{a}" dst="{b}" gw_src="{a}_mem" gw_dst="{b}_mem"><link_ctn id="{a}_up"/>'
                   f'<link_ctn id="{b}_up"/></zoneRoute>')
out += ['  </zone>', '</platform>']
with open(sys.argv[1] if len(sys.argv) > 1 else "hpc12.xml", "w") as fh:
    fh.write("\n".join(out) + "\n")
