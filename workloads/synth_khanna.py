"""Khanna et al.'s synthetic workload (§6.1-6.3): image-analysis jobs sharing input files.

Each job analyses a set of 4-10 images (mean about 6) of one modality, MRI
(4 MB each) or CT (64 MB each); the contract carries one input file per job,
so a job's image set is its input file, of the images' total size. *Overlap*
is the share of requests that ask for a file some other request asks for too:
overlap = 1 - distinct files / jobs (85 %, 40 % and 10 % in the paper: high,
medium, low). Every file is requested at least once; the other requests draw
files uniformly.

Runtimes: compute = C x size (C = 0.001 s/MB, §6.1); walltime = size / BW +
compute (the load plus the computation, BW the node bandwidth), rounded up to
the next hundredth of a second plus one, so that a job loading its file does
not tie with the end of its window.

Arrivals (§6.3): a Poisson process (``burstiness`` 1), burstier with a larger
coefficient of variation of the gaps (gamma gaps, a stand-in for the Lublin
model's peaks), within ``span`` seconds; or, with ``load``, over the span that
gives that expected load (Eq. 9-11): Load = N x AvgExecTime / (P x span), with
EstimatedExec (Eq. 6) = size x (Tr + C), Tr = p / BW + (1 - p)(1 - 1/P) / BW,
p = 1 / (jobs sharing the file). Orders: ``clustered`` (the jobs sharing a file
arrive close together) or ``random``.
"""

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from batloc.platforms.reader import read_platform

MB = 1e6
ORDERS = ("clustered", "random")


@dataclass
class KhannaSpec:
    jobs: int = 1200
    nodes: int = 4
    overlap: float = 0.85
    span: float = 600.0
    load: float = 0.0             # > 0: derive the span from this expected load (Eq. 9-11)
    bandwidth: float = 50e6       # bytes/s from storage into a node
    compute_per_mb: float = 0.001
    min_images: int = 4
    max_images: int = 10
    mri_size: float = 4 * MB
    ct_size: float = 64 * MB
    ct_share: float = 0.5
    burstiness: float = 1.0
    order: str = "clustered"
    seed: int = 0

    def validate(self):
        checks = [
            (self.jobs >= 1 and self.nodes >= 1, "jobs and nodes must be >= 1"),
            (0 <= self.overlap < 1, "overlap must be in [0, 1)"),
            (self.span > 0 or self.load > 0, "span or load must be > 0"),
            (self.load >= 0, "load must be >= 0"),
            (self.bandwidth > 0, "bandwidth must be > 0"),
            (1 <= self.min_images <= self.max_images, "image counts need 1 <= min <= max"),
            (0 <= self.ct_share <= 1, "CT share must be in [0, 1]"),
            (self.burstiness >= 0, "burstiness must be >= 0"),
            (self.order in ORDERS, f"order must be one of {', '.join(ORDERS)}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)


def estimated_exec(size, sharers, nodes, bandwidth, compute_per_mb):
    """Eq. 5-6 with the local-disk term dropped: the expected execution time of each job."""
    p = 1.0 / np.maximum(sharers, 1)
    tr = p / bandwidth + (1 - p) * (1 - 1 / nodes) / bandwidth
    return size * tr + size / MB * compute_per_mb


def generate(spec: KhannaSpec) -> pd.DataFrame:
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    n = spec.jobs
    distinct = max(1, int(round((1 - spec.overlap) * n)))
    images = rng.integers(spec.min_images, spec.max_images + 1, distinct)
    is_ct = rng.random(distinct) < spec.ct_share
    file_size = images * np.where(is_ct, spec.ct_size, spec.mri_size)
    requests = np.concatenate([np.arange(distinct), rng.integers(0, distinct, n - distinct)])
    if spec.order == "clustered":
        # Jobs sharing a file arrive together: files in a random order, their requests in a row.
        rank = rng.permutation(distinct)
        requests = requests[np.argsort(rank[requests], kind="stable")]
    else:
        requests = rng.permutation(requests)

    size = file_size[requests].astype(float)
    sharers = np.bincount(requests, minlength=distinct)[requests]
    expected = estimated_exec(size, sharers, spec.nodes, spec.bandwidth, spec.compute_per_mb)
    avg_exec = float(expected.mean())
    last_arrival = avg_exec * n / spec.nodes                          # Eq. 11: load 1
    span = last_arrival / spec.load if spec.load > 0 else spec.span
    if spec.burstiness > 0:
        shape = 1.0 / spec.burstiness ** 2
        gaps = rng.gamma(shape, 1.0 / shape, n)
    else:
        gaps = np.ones(n)
    arrival = np.cumsum(gaps) - gaps[0]
    arrival = arrival / max(arrival[-1], 1e-12) * span if n > 1 else arrival
    # + 1 s: no job at t = 0, where pybatsim's stock schedulers fail (docs/contract.md §4b).
    submit = 1.0 + np.round(arrival, 3)

    compute = np.round(size / MB * spec.compute_per_mb, 6)
    walltime = np.ceil((size / spec.bandwidth + compute) * 100) / 100 + 0.01
    table = pd.DataFrame({
        "id": np.arange(1, n + 1, dtype=np.int64),
        "source_id": pd.Series(np.arange(1, n + 1).astype(str), dtype=object),
        "line": np.zeros(n, dtype=np.int64),
        "user": pd.Series(["u0"] * n, dtype=object),
        "submit": submit, "cores": np.ones(n, dtype=np.int64),
        "walltime": walltime, "run_time": compute,
        "input_file": pd.Series([f"img{r:05d}" for r in requests], dtype=object),
        "input_size": size,
    })
    table["evaluated"] = True
    load = n * avg_exec / (spec.nodes * span)
    table.attrs = {"epoch": None, "provenance": {
        "source": {"format": "synthetic-khanna", "params": asdict(spec)},
        "sharing": {"rule": "Khanna et al. image sets", "distinct_files": distinct,
                    "overlap": 1 - distinct / n},
        "expected_load": {"avg_exec_time": avg_exec, "load_1_last_arrival": last_arrival,
                          "span": span, "load": load},
        "period": [1.0, 1.0 + span]}}
    return table


def add_parser(sub, platform_args):
    """`batloc workload synth-khanna`: the options of KhannaSpec."""
    p = sub.add_parser("synth-khanna", help="generate Khanna et al.'s file-sharing workload (4-10 images per job)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--jobs", type=int, default=1200, help="number of jobs (default 1200)")
    p.add_argument("--overlap", type=float, default=0.85,
                   help="1 - distinct files / jobs: 0.85 high, 0.40 medium, 0.10 low (default 0.85)")
    p.add_argument("--span", type=float, default=600.0, help="seconds over which jobs arrive (default 600)")
    p.add_argument("--load", type=float, default=0.0,
                   help="expected load (Eq. 9-11); sets the span instead of --span")
    p.add_argument("--bandwidth", type=float,
                   help="node bandwidth in bytes/s for walltimes (default: the platform's, else 50e6)")
    p.add_argument("--burstiness", type=float, default=1.0,
                   help="CV of the gaps between arrivals: 1 = Poisson, > 1 = bursty (default 1)")
    p.add_argument("--order", choices=ORDERS, default="clustered",
                   help="clustered: jobs sharing a file arrive together (default); random")
    p.add_argument("--ct-share", type=float, default=0.5, help="share of CT (64 MB) image sets (default 0.5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nodes", type=int, help="compute nodes P (default: the platform's, else 4)")
    platform_args(p, annotate_files=False)


def run(args, platform, write_batsim):
    bandwidth = args.bandwidth or _platform_bandwidth(args) or KhannaSpec.bandwidth
    nodes = args.nodes or (platform.nodes if getattr(args, "platform", None) else KhannaSpec.nodes)
    spec = KhannaSpec(jobs=args.jobs, nodes=nodes, overlap=args.overlap, span=args.span, load=args.load,
                      bandwidth=bandwidth, burstiness=args.burstiness, order=args.order,
                      ct_share=args.ct_share, seed=args.seed)
    table = generate(spec)
    nb_res = args.nb_res or (platform.nb_res if getattr(args, "platform", None) else nodes)
    write_batsim(table, args.output, nb_res)
    load = table.attrs["provenance"]["expected_load"]
    print(f"wrote {args.output}: {len(table)} jobs over {load['span']:.0f} s, "
          f"{table.attrs['provenance']['sharing']['distinct_files']} files, expected load {load['load']:.2f}")


def _platform_bandwidth(args):
    if not getattr(args, "platform", None):
        return None
    # a plain Batsim platform has no node memory, hence no load bandwidth (infinite in its view)
    bandwidths = [n.bandwidth for n in read_platform(args.platform).nodes if n.bandwidth and math.isfinite(n.bandwidth)]
    return min(bandwidths) if bandwidths else None
