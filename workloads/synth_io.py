"""Jobs alternating computation and I/O, at a target I/O load α (Jeannot, Pallez & Vidal;
seed-schedulers.md §2, "Parameters/workloads"): `batloc workload synth --io uniform|mira`.

Each job i: Q_i cores, n_i ~ U{10..100} periods of [w_i/n_i compute, V_i/n_i
bytes of I/O spread over its Q_i cores], all released at t = 1. With X_i the
share of I/O drawn for the job, V_i = B·X_i·w_i·Q_i/P (the paper's volume),
T_i(B) = w_i + V_i/B its run time alone, and the workload's I/O load
α = Σ V_i/B ÷ Σ Q_i T_i(B)/P (Eq. 2).
- Families: `uniform` — w_i ~ U[10, 100] min of compute, Q_i uniform in
  {2^j : 2^j < P}; `mira` — Q ~ discrete exponential (λ = 1.35e-4) on
  [512, 49152] Mira nodes, rescaled to P (choice: shares of the machine keep
  their law), w_i normal around the median of its size class (1 h under 4K,
  2 h up to 16K, 0.5 h above; sd 10 % of the median).
- I/O mixes: `bn` — X from a normal of mean 0.1 or 0.9 (variance 0.1)
  truncated to [0, 1]; the share of 0.9-jobs is chosen to hit α; `no` — one
  truncated normal (variance 0.1) whose mean is solved to hit α (the paper
  sets it to α, which with its own Eq. 2 does not give α).
Declared fields (what schedulers see): `io_bw` = V_i/T_i(B) and `io_period`
= (w_i + V_i/B)/n_i; walltime = `walltime_factor` × T_i(B). The truths (n, w,
V, T) stay out of the jobs, in the workload's `batloc.io` (contract §7).
"""

import json
import math
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

from batloc.platforms.reader import read_resources

from .errors import WorkloadError
from .export import written_whole

FAMILIES = ("uniform", "mira")
MIXES = ("bn", "no")
SIGMA = math.sqrt(0.1)         # the paper's "variance of 0.1"
BN_MEANS = (0.1, 0.9)
MIRA_NODES = (512, 49152)
MIRA_LAMBDA = 1.35e-4
ALPHA_TOLERANCE = 0.01
_N = NormalDist()


@dataclass
class IoSpec:
    family: str
    mix: str
    alpha: float
    cores: int                  # P
    bandwidth: float            # B, bytes/s
    jobs: int = 200
    users: int = 10
    walltime_factor: float = 2.0
    seed: int = 0


def truncated_normal(u, mean):
    """Quantile `u` of N(mean, 0.1) truncated to [0, 1]."""
    lo, hi = _N.cdf((0.0 - mean) / SIGMA), _N.cdf((1.0 - mean) / SIGMA)
    p = min(max(lo + u * (hi - lo), 1e-15), 1 - 1e-15)
    return min(1.0, max(0.0, mean + SIGMA * _N.inv_cdf(p)))


def io_load(x, w, q, P):
    """Eq. 2 with V = B·x·w·q/P (B cancels)."""
    io_time = x * w * q / P
    return float(io_time.sum() / (q * (w + io_time)).sum() * P)


def _sizes_and_compute(spec, rng):
    n, P = spec.jobs, spec.cores
    if spec.family == "uniform":
        top = max(1, int(math.floor(math.log2(P))))
        q = 2 ** rng.integers(0, top, size=n)
        w = rng.uniform(10, 100, size=n) * 60.0
    else:
        lo, hi = MIRA_NODES
        u = rng.random(n)
        nodes = np.floor(lo - np.log1p(-u * (1 - math.exp(-MIRA_LAMBDA * (hi - lo)))) / MIRA_LAMBDA)
        median = np.where(nodes < 4096, 3600.0, np.where(nodes <= 16384, 7200.0, 1800.0))
        w = np.maximum(60.0, rng.normal(median, 0.1 * median))
        q = np.maximum(1, np.rint(nodes * P / hi)).astype(np.int64)
    return np.minimum(q, P).astype(np.int64), w


def _shares(spec, rng, w, q):
    """X_i hitting α; returns (X, what was solved: {"high_share"} or {"mean"})."""
    n, P, target = spec.jobs, spec.cores, spec.alpha
    u = rng.random(n)
    if spec.mix == "bn":
        kind = rng.random(n)
        low = np.array([truncated_normal(v, BN_MEANS[0]) for v in u])
        high = np.array([truncated_normal(v, BN_MEANS[1]) for v in u])
        order = np.argsort(kind, kind="stable")
        loads = []
        for k in range(n + 1):    # the k jobs of lowest `kind` are the I/O-heavy ones
            x = low.copy()
            x[order[:k]] = high[order[:k]]
            loads.append(io_load(x, w, q, P))
        reach = (loads[0], loads[-1])
        k = int(np.argmin(np.abs(np.array(loads) - target)))
        x = low.copy()
        x[order[:k]] = high[order[:k]]
        solved = {"high_share": k / n}
    else:
        def shares(mean):
            return np.array([truncated_normal(v, mean) for v in u])
        lo, hi = -1.0, 2.0
        reach = (io_load(shares(lo), w, q, P), io_load(shares(hi), w, q, P))
        if reach[0] <= target <= reach[1]:
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if io_load(shares(mid), w, q, P) < target:
                    lo = mid
                else:
                    hi = mid
        x = shares(0.5 * (lo + hi))
        solved = {"mean": 0.5 * (lo + hi)}
    got = io_load(x, w, q, P)
    if abs(got - target) > ALPHA_TOLERANCE:
        raise WorkloadError(
            f"--alpha {target:g} cannot be reached by the {spec.family}-{spec.mix} family with {n} jobs on "
            f"{P} cores (seed {spec.seed}): reachable α {reach[0]:.3f}-{reach[1]:.3f}")
    return x, solved


def generate(spec):
    """The workload as a Batsim JSON object (dict)."""
    if spec.family not in FAMILIES or spec.mix not in MIXES:
        raise WorkloadError(f"--io must be one of {', '.join(FAMILIES)} and --io-mix one of {', '.join(MIXES)}")
    if not 0 < spec.alpha < 1:
        raise WorkloadError(f"--alpha must be in (0, 1), got {spec.alpha:g}")
    if spec.jobs < 1 or spec.cores < 1 or not spec.bandwidth > 0 or spec.walltime_factor < 1:
        raise WorkloadError("--jobs, the platform's cores and bandwidth must be positive, --walltime-factor >= 1")
    rng = np.random.default_rng(spec.seed)
    q, w = _sizes_and_compute(spec, rng)
    periods = rng.integers(10, 101, size=spec.jobs)
    users = rng.integers(0, spec.users, size=spec.jobs)
    x, solved = _shares(spec, rng, w, q)
    B, P = spec.bandwidth, spec.cores
    volume = B * x * w * q / P
    t_alone = w + volume / B
    jobs, profiles, truth = [], {}, {}
    for i in range(spec.jobs):
        jid, n = i + 1, int(periods[i])
        name = f"io{jid}"
        profiles[f"{name}c"] = {"type": "delay", "delay": float(w[i] / n)}
        profiles[f"{name}v"] = {"type": "parallel_homogeneous_pfs", "bytes_to_read": float(volume[i] / n / q[i]),
                                "storage": "pfs"}
        profiles[name] = {"type": "composed", "seq": [f"{name}c", f"{name}v"], "repeat": n}
        jobs.append({"id": jid, "subtime": 1, "res": int(q[i]), "walltime": float(spec.walltime_factor * t_alone[i]),
                     "profile": name, "user": f"u{int(users[i])}", "evaluated": True,
                     "io_bw": float(volume[i] / t_alone[i]), "io_period": float(t_alone[i] / n)})
        truth[str(jid)] = [n, float(w[i]), float(volume[i]), float(t_alone[i])]
    io = {"bandwidth": B, "cores": P, "alpha": io_load(x, w, q, P), "alpha_target": spec.alpha,
          "family": spec.family, "mix": spec.mix, **solved,
          "jobs_fields": "periods, compute_s, volume_bytes, t_alone_s", "jobs": truth}
    return {"nb_res": P, "jobs": jobs, "profiles": profiles,
            "batloc": {"source": "batloc workload synth --io", "spec": asdict(spec), "io": io}}


def platform_io(path, need_bandwidth=True):
    """(cores, file-system bandwidth) of a platform made for I/O phases (contract §7)."""
    resources = read_resources(path)
    lustre = next((r for r in resources.storage if r["name"] == "lustre"), None)
    bandwidth = None if lustre is None else lustre["properties"].get("bandwidth")
    if bandwidth is None and need_bandwidth:
        raise WorkloadError(f"{path}: the platform has no backbone link for I/O phases (storage 'lustre' has no "
                            "'bandwidth' property): generate it with `batloc platform generate --io-routes "
                            "--backbone-bw B`, or give --io-bandwidth")
    # one Batsim resource per compute host: P counts hosts, as the scheduler's allocations do
    return len(resources.compute), None if bandwidth is None else float(bandwidth)


def add_arguments(parser):
    group = parser.add_argument_group("jobs with I/O phases (Jeannot et al.; docs/contract.md §7)")
    group.add_argument("--io", choices=FAMILIES, help="generate I/O-phase jobs of this family instead")
    group.add_argument("--io-mix", choices=MIXES, default="bn", help="I/O shares: bn (bi-normal) or no (normal)")
    group.add_argument("--alpha", type=float, default=0.5, help="target I/O load α, Eq. 2 (default 0.5)")
    group.add_argument("--jobs", type=int, default=200, help="number of jobs (default 200)")
    group.add_argument("--io-bandwidth", type=float, help="B in bytes/s (default: the platform's lustre bandwidth)")
    group.add_argument("--walltime-factor", type=float, default=2.0, help="walltime / run time alone (default 2)")


def run(args):
    if not args.platform:
        raise WorkloadError("--io needs --platform (a platform made with `batloc platform generate --io-routes`)")
    cores, bandwidth = platform_io(args.platform, need_bandwidth=args.io_bandwidth is None)
    bandwidth = args.io_bandwidth or bandwidth
    spec = IoSpec(family=args.io, mix=args.io_mix, alpha=args.alpha, cores=cores, bandwidth=bandwidth,
                  jobs=args.jobs, users=args.users, walltime_factor=args.walltime_factor, seed=args.seed)
    data = generate(spec)
    with written_whole(args.output) as out:
        json.dump(data, out, separators=(",", ":"))
        out.write("\n")
    io = data["batloc"]["io"]
    print(f"wrote {args.output}: {spec.jobs} jobs ({spec.family}-{spec.mix}) on {cores} cores, "
          f"α {io['alpha']:.3f} (target {spec.alpha:g})")

