"""Hand-computed schedules of small workflows (chain, fork-join, diamond) under FCFS, EFT and LEA.

Driven through ``batloc.testing.dry_run`` (the paper's model): node links of
1 GB/s, so a 5 GB output loads in 5 s; memories of 100 GB; one core per
node, so that a node runs one task at a time. Outputs are on Lustre from
their producer's end (``write_back: instant``) and in its node's memory,
kept there under the ``paper`` model until another job starts on the node.
"""

from batloc.schedulers.eft import Eft
from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.lea import Lea
from batloc.testing.dry_run import DryRun, make_resources

GB = 1e9


def task(i, delay, reads=(), writes=(), parents=(), t=None, wall=100):
    j = {"id": i, "res": 1, "walltime": wall, "profile": f"d{delay}", "user": "u", "workflow": "wf",
         "inputs": [{"file": f, "size": s * GB} for f, s in reads],
         "outputs": [{"file": f, "size": s * GB} for f, s in writes]}
    if parents:
        j["parents"] = list(parents)
        j["subtime"] = 0
    else:
        j["subtime"] = t
    return j


def run(cls, jobs, nodes=("n000", "n001"), options=None):
    static = [j for j in jobs if "parents" not in j]
    deps = [j for j in jobs if "parents" in j]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    wl = {"jobs": static, "dependent_jobs": deps, "profiles": profiles}
    sched = cls(dict(options or {}))
    compute, storage = make_resources({n: 1 for n in nodes}, memory_bytes=100 * GB, bandwidth=1 * GB)
    dry = DryRun(sched, compute, storage, wl)
    res = dry.run()
    out = {}
    for jid, r in res.items():
        if jid.startswith("w0!"):
            node = sched.platform.nodes[sched.platform.node_of_core[r["alloc"][0]]].name
            out[jid[3:]] = (node, r["start"], r["finish"])
    stagings = sorted((jid, r["start"], r["finish"]) for jid, r in res.items() if jid.startswith("batloc-stage!"))
    return out, stagings, dry


# A chain A -> B -> C; Z, a job of another user reading its own 10 GB file, comes at 21, when A ends.
CHAIN = [task(1, 10, reads=[("X", 10)], writes=[("oA", 5)], t=1),
         task(2, 10, reads=[("oA", 5)], writes=[("oB", 5)], parents=[1]),
         task(3, 10, reads=[("oB", 5)], parents=[2]),
         {"id": 9, "subtime": 21, "res": 1, "walltime": 100, "profile": "d50", "user": "v",
          "input_file": "Y", "input_size": 10 * GB}]


def test_chain_fcfs_and_eft_give_the_freed_node_away_and_load_the_output_elsewhere():
    # t=1: A on n000 (lowest index), loads X [1,11), computes [11,21); oA in n000's memory at 21.
    # t=21: Z (submitted) comes before B (registered at A's end) in the queue.
    #   FCFS: t_k = 21 on both -> n000 (lowest index); Z loads Y there and evicts oA (paper).
    #   EFT:  t'_k = 31 on both -> n000.
    #   B: n000 reserved until 121 -> n001, loads oA from Lustre [21,26), computes [26,36).
    # t=36: C: n001 free, oB there (hit) -> computes [36,46). Makespan 46 - 1 = 45.
    for cls in (Fcfs, Eft):
        out, stagings, _ = run(cls, CHAIN)
        assert out["1"] == ("n000", 11.0, 21.0), cls
        assert out["9"] == ("n000", 31.0, 81.0), cls
        assert out["2"] == ("n001", 26.0, 36.0), cls
        assert out["3"] == ("n001", 36.0, 46.0), cls
        assert [s[0] for s in stagings] == ["batloc-stage!stage-w0-1-n000", "batloc-stage!stage-w0-2-n001",
                                           "batloc-stage!stage-w0-9-n000"], cls


def test_chain_lea_keeps_the_freed_node_for_the_output_it_holds():
    # t=21, Z: n000 scores 21 + 500 x 10 + (X 10 GB + oA 5 GB unused) x 10 GB / 100 GB / 1 GB/s
    #   = 5022.5; n001 scores 21 + 5000 + 0 = 5021 -> n001.
    # B: n000 holds oA (hit): 21 + 0 + X's penalty 10 x 5 / 100 = 21.5; n001 is reserved (121 + 2500) -> n000,
    #   computes [21,31) with no load. C at 31: n000, oB there -> [31,41). Makespan 40.
    out, stagings, _ = run(Lea, CHAIN)
    assert out["9"] == ("n001", 31.0, 81.0)
    assert out["2"] == ("n000", 21.0, 31.0)
    assert out["3"] == ("n000", 31.0, 41.0)
    assert [s[0] for s in stagings] == ["batloc-stage!stage-w0-1-n000", "batloc-stage!stage-w0-9-n001"]
