"""Saturated inputs for the differential and golden tests, small enough for CI.

Workloads come from batloc's own synthetic generator (bursts of jobs sharing a
file, load above 1), on small platforms so that queues grow long and nodes
hold several files; the dry run (`batloc.testing.dry_run`) plays the
paper's model without SimGrid.
"""

import math
import os
import random
import tempfile

from batloc.testing.dry_run import DryRun, make_resources
from batloc.workloads.synth import SynthSpec, generate

GB = 1e9
HOUR = 3600.0


def workload(seed, nodes=8, cores=4, memory=64 * GB, hours=24.0, load=1.5, jobs_per_file=4.0, median=600.0):
    spec = SynthSpec(nodes=nodes, cores_per_node=cores, node_memory=memory, duration=hours * HOUR,
                     load=load, jobs_per_file=jobs_per_file, users=12, median_run_time=median,
                     max_walltime=6 * HOUR, seed=seed,
                     core_mix={1: 0.4, 2: 0.25, 3: 0.15, cores: 0.2})
    table = generate(spec)
    jobs, profiles = [], {}
    for row in table.itertuples(index=False):
        name = f"d{int(row.run_time)}"
        profiles[name] = {"type": "delay", "delay": float(row.run_time)}
        jobs.append({"id": int(row.id), "subtime": float(row.submit), "res": int(row.cores),
                     "walltime": float(row.walltime), "profile": name, "user": row.user,
                     "input_file": row.input_file, "input_size": float(row.input_size)})
    return {"nb_res": nodes * cores, "jobs": jobs, "profiles": profiles}


def several_files(wl, seed, share=0.5, most=3, recent=12):
    """``wl`` where a share of the jobs also read (``inputs``) one to ``most - 1`` of the
    ``recent`` files read last before them, so that nodes hold some of a job's files."""
    rng = random.Random(seed)
    seen, jobs = [], []
    for j in wl["jobs"]:
        j = dict(j)
        own = (j["input_file"], j["input_size"])
        pool = [fs for fs in seen[-recent:] if fs[0] != own[0]]
        if pool and rng.random() < share:
            extra = rng.sample(pool, min(len(pool), rng.randint(1, most - 1)))
            j["inputs"] = [{"file": f, "size": size} for f, size in extra]
        if own not in seen:
            seen.append(own)
        jobs.append(j)
    return {**wl, "jobs": jobs}


def with_outputs(wl, seed, share=0.5, sizes=(16 * GB, 32 * GB, 48 * GB)):
    """``wl`` where a share of the jobs write an output of one of ``sizes`` (a file no job reads: under
    ``write_back: staged`` it holds its node's memory until written back)."""
    rng = random.Random(seed)
    jobs = []
    for j in wl["jobs"]:
        j = dict(j)
        if rng.random() < share:
            j["outputs"] = [{"file": f"out{j['id']}", "size": float(rng.choice(sizes))}]
        jobs.append(j)
    return {**wl, "jobs": jobs}


def clocked(wl, period=60, bandwidth=1 * GB, keep_alive=300.0):
    """``wl`` in whole seconds, as the authors' simulator counts (R1): submissions,
    run times and loads (sizes in whole seconds of ``bandwidth``) rounded,
    walltimes rounded up to the period (jobs cut at their walltime end on a
    tick), and a one-core keep-alive job every ``keep_alive`` seconds on the
    grid, as in the oracle input: its submission gives a new-jobs pass its
    tick, and its end, one period later if it starts at once, a full pass."""
    jobs, profiles = [], {}
    for j in wl["jobs"]:
        delay = max(1, round(wl["profiles"][j["profile"]]["delay"]))
        name = f"d{delay}"
        profiles[name] = {"type": "delay", "delay": float(delay)}
        wall = max(period, math.ceil(j["walltime"] / period) * period)
        size = max(1, round(j["input_size"] / bandwidth)) * bandwidth
        jobs.append({**j, "subtime": float(round(j["subtime"])), "walltime": float(wall), "profile": name,
                     "input_size": float(size)})
    end = max(j["subtime"] for j in jobs) + 24 * HOUR
    profiles["keep"] = {"type": "delay", "delay": float(period - 1)}
    for i in range(int(end // keep_alive)):
        jobs.append({"id": 10 ** 6 + i, "subtime": float((i + 1) * keep_alive), "res": 1, "walltime": 900.0,
                     "profile": "keep", "user": "keepalive", "input_file": f"k{i}", "input_size": float(bandwidth)})
    jobs.sort(key=lambda j: j["subtime"])
    return {**wl, "jobs": jobs, "profiles": profiles}


def platform(nodes=8, cores=4, memory=64 * GB, bandwidth=1 * GB, hetero=False, backbone=None):
    names = [f"n{i:03d}" for i in range(nodes)]
    if hetero:
        # Half the nodes with twice the memory and half the bandwidth, one wider node
        # (every file still fits in every node's memory).
        mem = {n: (memory * 2 if i % 2 or i == 0 else memory) for i, n in enumerate(names)}
        bw = {n: (bandwidth / 2 if i % 2 else bandwidth) for i, n in enumerate(names)}
        shape = {n: (cores + 2 if i == 0 else cores) for i, n in enumerate(names)}
        return make_resources(shape, memory_bytes=mem, bandwidth=bw, backbone=backbone)
    return make_resources({n: cores for n in names}, memory_bytes=memory, bandwidth=bandwidth, backbone=backbone)


def decisions(scheduler_cls, options, resources, wl):
    """Run one scheduler on the dry run; its decision log's text."""
    fd, path = tempfile.mkstemp(suffix="_decisions.csv")
    os.close(fd)
    try:
        sched = scheduler_cls({**options, "decisions": path})
        DryRun(sched, *resources, wl).run()
        with open(path) as fh:
            return fh.read()
    finally:
        os.unlink(path)
