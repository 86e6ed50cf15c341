"""`batloc platform ...`: describe a cluster in one command, or rewrite the Rackham files.

  batloc platform generate -o mycluster.xml --nodes 64 --cores 32 --memory 256GB --node-bw 1GB/s
  batloc platform generate -o mix.xml --memory-mix 450x128GB,32x256GB,4x1TB --sharing SHARED --backbone-bw auto
  batloc platform rackham -d platforms/
  batloc platform show platforms/rackham.xml
  batloc platform show cluster_locality_8x16.xml -m master_host0
  batloc platform annotate cluster512.xml -o cluster512-batloc.xml --memory 128GB --node-bw 0.1GB/s
"""

import argparse
import sys

from batloc import command

from . import rackham
from .annotate import annotate
from .generator import PFS_ACCESS, SHARING_POLICIES, write
from .numbering import DEFAULT_MASTER, parse_role_maps
from .options import platform_spec
from .reader import PlatformError, read_platform
from .units import parse_bandwidth, parse_bytes, parse_duration


def _parser():
    parser = argparse.ArgumentParser(prog="batloc platform", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="write a platform for your own cluster")
    gen.add_argument("-o", "--output", required=True, help="XML file to write")
    gen.add_argument("--nodes", type=int, default=rackham.NODES, help="node count (default 486)")
    gen.add_argument("--cores", type=int, default=rackham.CORES, help="cores per node (default 20)")
    gen.add_argument("--memory", default="128GB", help="memory per node (default 128GB)")
    gen.add_argument("--memory-mix", help="heterogeneous nodes in order, e.g. 450x128GB,32x256GB,4x1TB "
                                          "(overrides --nodes/--memory)")
    gen.add_argument("--node-bw", default="0.1GB/s", help="per-node link to the file system (default 0.1GB/s)")
    gen.add_argument("--backbone-bw", help="shared file-system backbone: a bandwidth, or 'auto' for a quarter "
                                           "of the sum of node links (default: no backbone)")
    gen.add_argument("--latency", default="0s", help="per-link latency, added to every load (default 0s)")
    gen.add_argument("--sharing", default="FATPIPE", type=str.upper, choices=SHARING_POLICIES,
                     help="node-link policy: FATPIPE = the paper's model, SHARED = concurrent loads share")
    gen.add_argument("--name", default="cluster", help="top-level zone id (default cluster)")
    gen.add_argument("--io-routes", action="store_true",
                     help="kept for older command lines: lustre carries the backbone's bandwidth whenever there "
                          "is a backbone (docs/contract.md §6, §7), and reaches every core in any case")
    gen.add_argument("--node-routes", action="store_true",
                     help="routes between nodes' memories, over both nodes' links (workflows' outputs read from "
                          "their producer's node, write_back: staged); nodes^2/2 routes")
    gen.add_argument("--pfs-access", default="shared", choices=PFS_ACCESS,
                     help="shared: concurrent I/O shares the links; exclusive: one job's I/O at a time, FIFO")

    rk = sub.add_parser("rackham", help="write the four Rackham variants")
    rk.add_argument("-d", "--directory", default=".", help="where to write (default .)")
    rk.add_argument("--backbone-bw", help="backbone bandwidth of rackham-backbone.xml "
                                          "(default a quarter of the sum of node links)")

    show = sub.add_parser("show", help="summarise a platform file (nodes, cores, memory, bandwidth)")
    show.add_argument("platform")
    _master_options(show)

    ann = sub.add_parser("annotate", help="a copy of a Batsim platform with batloc's node memories and lustre, "
                                          "for the file-aware schedulers and the staging proxy")
    ann.add_argument("platform", help="a Batsim platform (SimGrid XML), left unchanged")
    ann.add_argument("-o", "--output", required=True, help="XML file to write")
    ann.add_argument("--memory", default="128GB", help="memory of every node (default 128GB, Rackham's)")
    ann.add_argument("--node-bw", default="0.1GB/s",
                     help="each node memory's link to the file system (default 0.1GB/s, Rackham's)")
    ann.add_argument("--latency", default="0s", help="latency of those links, added to every load (default 0s)")
    ann.add_argument("--sharing", default="FATPIPE", type=str.upper, choices=SHARING_POLICIES,
                     help="FATPIPE = the paper's model, SHARED = concurrent loads into one node share its link")
    ann.add_argument("--backbone-bw", help="a shared file-system backbone on every load's route (default: none); "
                                           "lustre then carries it for the I/O-aware schedulers")
    _master_options(ann)
    return parser


def _master_options(parser):
    """Batsim's (and batloc-batsim's) -m and -r, for a platform whose master is not called master_host."""
    parser.add_argument("-m", "--master-host", metavar="NAME",
                        help=f"the master host when none has role=master (default: {DEFAULT_MASTER}), as Batsim's -m")
    parser.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                        help="give ROLE (master, storage or compute_node) to each of HOSTS (comma-separated), "
                             "as Batsim's -r; repeatable")


def _annotate(args):
    memory, bandwidth = parse_bytes(args.memory), parse_bandwidth(args.node_bw)
    backbone = parse_bandwidth(args.backbone_bw) if args.backbone_bw else None
    nodes = annotate(args.platform, args.output, memory, bandwidth, parse_duration(args.latency), args.sharing,
                     backbone, args.master_host, parse_role_maps(args.add_role_to_hosts))
    widest = max(len(hosts) for hosts in nodes.values())
    grouping = ("one per compute host" if widest == 1
                else "compute hosts grouped by their node property, a host without one a node of its own")
    print(f"wrote {args.output}: {len(nodes)} nodes ({grouping}), each with {memory / 1e9:g} GB of memory loaded "
          f"from lustre at {bandwidth / 1e9:g} GB/s" + (f" through a {backbone / 1e9:g} GB/s backbone" if backbone
                                                        else ""))


def _generate(args):
    spec = platform_spec(nodes=args.nodes, cores=args.cores, memory=args.memory, node_bw=args.node_bw,
                         backbone_bw=args.backbone_bw, latency=args.latency, sharing=args.sharing, name=args.name,
                         memory_mix=args.memory_mix, io_routes=args.io_routes, node_routes=args.node_routes,
                         pfs_access=args.pfs_access)
    write(spec, args.output)
    print(f"wrote {args.output}: {spec.nodes} nodes x {spec.cores} cores")


def _run(args):
    if args.command == "generate":
        _generate(args)
    elif args.command == "rackham":
        backbone = parse_bandwidth(args.backbone_bw) if args.backbone_bw else None
        for path in rackham.write_all(args.directory, backbone):
            print(f"wrote {path}")
    elif args.command == "annotate":
        _annotate(args)
    else:
        print(read_platform(args.platform, args.master_host, parse_role_maps(args.add_role_to_hosts)).describe())


def main(argv=None) -> int:
    return command.run("platform", _parser(), _run, (ValueError, OSError, PlatformError), argv)


if __name__ == "__main__":
    sys.exit(main())
