"""Synthetic Rackham-like workloads with a handful of knobs, seeded and deterministic.

The unit of generation is a *burst*: one user submitting, within a few
minutes, jobs with the same core count that process the same input file (the
behaviour behind the paper's 800 s rule). Knobs:
- `load`: offered load, Σ cores × run time / (platform cores × duration);
- `jobs_per_file`: mean burst size (geometric, ≥ 1);
- `burstiness`: coefficient of variation of the gaps between bursts
  (1 = Poisson arrivals, > 1 = clustered, 0 = evenly spaced);
- `core_mix`: {cores: weight} per burst;
- `walltime_accuracy`: mean of run time / walltime (1 = exact requests).
Each burst is its own file: `input_file` is set from the ground truth, so
`jobs_per_file` is what the statistics show; re-annotating with a sharing rule
is possible but will merge or split some bursts.
"""

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

DAY = 86400.0
# What one synthetic trace holds at most: a workload file of 2 GiB, the bound batloc reads (reading.py), is about
# ten million jobs; a 12-week saturated Rackham trace about a million. Past it a load of 1e9, or inf, drew bursts
# until the memory was gone.
MAX_JOBS = 10_000_000
MAX_USERS = 1_000_000
DEFAULT_CORE_MIX = {1: 0.40, 2: 0.12, 4: 0.12, 5: 0.04, 8: 0.08, 10: 0.06, 16: 0.06, 20: 0.12}


def default_core_mix(cores_per_node):
    """Rackham's mix (20-core nodes) rescaled to another node size, so that shares of a node keep their weight."""
    mix = {}
    for cores, weight in DEFAULT_CORE_MIX.items():
        scaled = min(cores_per_node, max(1, round(cores * cores_per_node / 20)))
        mix[scaled] = mix.get(scaled, 0.0) + weight
    return mix


@dataclass
class SynthSpec:
    nodes: int = 486
    cores_per_node: int = 20
    node_memory: float = 128e9
    duration: float = 7 * DAY
    load: float = 0.9
    jobs_per_file: float = 4.0
    burstiness: float = 1.0
    core_mix: dict = field(default_factory=lambda: dict(DEFAULT_CORE_MIX))
    walltime_accuracy: float = 0.5
    users: int = 200
    median_run_time: float = 1800.0
    max_walltime: float = 10 * DAY
    burst_span: float = 600.0  # a burst's jobs are submitted within this many seconds
    seed: int = 0

    def validate(self):
        finite = np.isfinite
        checks = [
            (self.nodes >= 1 and self.cores_per_node >= 1, "nodes and cores per node must be >= 1"),
            (0 < self.duration < np.inf, "duration must be finite and > 0"),
            (0 < self.load < np.inf, "load must be finite and > 0"),
            (1 <= self.jobs_per_file < np.inf, "jobs per file must be finite and >= 1"),
            (0 <= self.burstiness < np.inf, "burstiness must be finite and >= 0"),
            (0 < self.walltime_accuracy <= 1, "walltime accuracy must be in (0, 1]"),
            (1 <= self.users <= MAX_USERS, f"users must be in 1..{MAX_USERS}"),
            (finite(self.burst_span) and self.burst_span >= 0, "burst span must be finite and >= 0"),
            (not isinstance(self.seed, bool) and isinstance(self.seed, (int, np.integer)) and self.seed >= 0,
             f"seed must be a whole number >= 0, not {self.seed!r}"),
            (bool(self.core_mix) and all(1 <= c <= self.cores_per_node and w >= 0
                                         for c, w in self.core_mix.items())
             and sum(self.core_mix.values()) > 0,
             f"core mix needs weights >= 0 for core counts in 1..{self.cores_per_node}"),
            (0 < self.median_run_time <= self.max_walltime, "median run time must be in (0, max walltime]"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)


def _bursts(spec, rng, target_work):
    """Draw bursts until their work reaches the target; returns per-burst arrays."""
    cores_values = np.array(sorted(spec.core_mix), dtype=np.int64)
    weights = np.array([spec.core_mix[c] for c in cores_values], dtype=np.float64)
    weights /= weights.sum()
    # A few heavy users and a long tail, as on production clusters.
    popularity = 1.0 / np.arange(1, spec.users + 1) ** 1.1
    popularity /= popularity.sum()
    chunks, work, jobs = [], 0.0, 0
    while work < target_work:
        if jobs > MAX_JOBS:
            raise ValueError(f"these options make more than {MAX_JOBS} jobs, the most a synthetic trace holds (a "
                             "workload batloc reads is 2 GiB at most): lower the load, the duration or the "
                             "platform's size")
        n = 4096
        sizes = rng.geometric(1.0 / spec.jobs_per_file, n)
        cores = rng.choice(cores_values, n, p=weights)
        users = rng.choice(spec.users, n, p=popularity)
        base = np.clip(rng.lognormal(np.log(spec.median_run_time), 1.5, n), 60.0, spec.max_walltime)
        burst_work = sizes * cores * base  # approximate: per-job run times vary around base
        cumulative = work + np.cumsum(burst_work)
        stop = int(np.searchsorted(cumulative, target_work)) + 1
        chunks.append((sizes[:stop], cores[:stop], users[:stop], base[:stop]))
        jobs += int(sizes[:stop].sum())
        work = cumulative[min(stop, n) - 1]
    return [np.concatenate(parts) for parts in zip(*chunks)]


def generate(spec: SynthSpec) -> pd.DataFrame:
    """A job table (with `input_file`, `input_size`) offering `spec.load` over `spec.duration`."""
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    total_cores = spec.nodes * spec.cores_per_node
    target = spec.load * total_cores * spec.duration
    sizes, cores, users, base = _bursts(spec, rng, target)
    n_bursts = len(sizes)

    # Burst arrivals: gamma gaps with the requested coefficient of variation, scaled to the duration.
    if spec.burstiness > 0:
        shape = 1.0 / spec.burstiness**2
        gaps = rng.gamma(shape, 1.0 / shape, n_bursts + 1)
    else:
        gaps = np.ones(n_bursts + 1)
    arrivals = np.cumsum(gaps)[:-1] / gaps.sum() * spec.duration

    burst = np.repeat(np.arange(n_bursts), sizes)
    rank = np.arange(len(burst)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    spacing = np.where(sizes > 1, spec.burst_span / np.maximum(sizes - 1, 1), 0.0)
    spacing = np.minimum(spacing, 60.0)
    # + 1 s: no job at t = 0, where pybatsim's stock schedulers fail (docs/contract.md §4b).
    submit = 1.0 + np.floor(arrivals[burst] + rank * spacing[burst] * rng.uniform(0.5, 1.0, len(burst)))
    run = np.clip(np.round(base[burst] * rng.lognormal(0.0, 0.25, len(burst))), 1.0, spec.max_walltime)

    # Rescale run times so that the work is exactly the target (bursts were drawn on their base time).
    job_cores = cores[burst]
    in_period = submit < spec.duration + 1.0
    scale = target / float((job_cores * run)[in_period].sum())
    run = np.clip(np.round(run * scale), 1.0, spec.max_walltime)

    if spec.walltime_accuracy >= 1:
        walltime = run.copy()
    else:
        concentration = 5.0
        a = spec.walltime_accuracy
        ratio = np.clip(rng.beta(a * concentration, (1 - a) * concentration, len(burst)), 0.02, 1.0)
        walltime = np.minimum(np.ceil(run / ratio / 60.0) * 60.0, spec.max_walltime)
        walltime = np.maximum(walltime, run)

    user_names = np.array([f"u{u:0{len(str(spec.users))}d}" for u in range(spec.users)], dtype=object)
    table = pd.DataFrame({
        "source_id": pd.Series([None] * len(burst), dtype=object),   # no trace behind these jobs
        "line": np.zeros(len(burst), dtype=np.int64),
        "user": pd.Series(user_names[users[burst]], dtype=object),
        "submit": submit, "cores": job_cores.astype(np.int64),
        "walltime": walltime, "run_time": run, "burst": burst,
    })
    table = table.sort_values(["submit", "burst"], kind="stable").reset_index(drop=True)
    table.insert(0, "id", np.arange(1, len(table) + 1, dtype=np.int64))

    # File ids in the annotate style (f<user>-<cores>-<n>), n counting that key's bursts in time order.
    first_seen = table.drop_duplicates("burst")[["burst", "user", "cores"]]
    n = first_seen.groupby(["user", "cores"], sort=False).cumcount()
    names = "f" + first_seen["user"] + "-" + first_seen["cores"].astype(str) + "-" + n.astype(str)
    file_of_burst = pd.Series(names.to_numpy(dtype=object), index=first_seen["burst"].to_numpy())
    table["input_file"] = file_of_burst.loc[table["burst"].to_numpy()].to_numpy()
    table["input_size"] = table["cores"].to_numpy(dtype=np.float64) / spec.cores_per_node * spec.node_memory
    table = table.drop(columns="burst")

    params = asdict(spec)
    params["core_mix"] = {str(k): v for k, v in sorted(spec.core_mix.items())}
    table.attrs = {"epoch": None, "provenance": {
        "source": {"format": "synthetic", "params": params},
        "sharing": {"rule": "synthetic bursts", "cores_per_node": spec.cores_per_node,
                    "node_memory": spec.node_memory},
        "period": [1.0, spec.duration + 1.0]}}
    return table
