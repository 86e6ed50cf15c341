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


def test_chain_staged_write_back_reads_the_output_from_its_producers_memory():
    # As FCFS above, with outputs copied to Lustre by a staging from their producer's memory:
    # oA is written back [21,26), pinned in n000's memory (Z's start there does not evict it), and
    # B, on n001, loads it from n000's memory [21,26) meanwhile, not from Lustre.
    out, stagings, dry = run(Fcfs, CHAIN, options={"write_back": "staged"})
    assert out["2"] == ("n001", 26.0, 36.0) and out["3"] == ("n001", 36.0, 46.0)
    assert ("batloc-stage!stage-w0-2-n001-from-n000", 21.0, 26.0) in stagings
    assert ("batloc-stage!writeback-w0-1-n000", 21.0, 26.0) in stagings
    assert ("batloc-stage!writeback-w0-2-n001", 36.0, 41.0) in stagings
    mapping = dry.bs.jobs["batloc-stage!stage-w0-2-n001-from-n000"].storage_mapping
    mems = {s["name"]: s["id"] for s in dry.storage}
    assert mapping == {"src": mems["n000_mem"], "mem": mems["n001_mem"]}


def test_registration_stays_open_for_the_write_back_of_the_last_task():
    # A lone task (no dependent, nothing else to come) writes oA: its write-back is registered at its end,
    # 21, so registration_finished may go only then (the engine refused the REGISTER_JOB after it: the
    # six-workflow benchmark on other recipes stopped there under every planning policy).
    out, stagings, dry = run(Fcfs, [task(1, 10, reads=[("X", 10)], writes=[("oA", 5)], t=1)],
                             options={"write_back": "staged"})
    assert out["1"] == ("n000", 11.0, 21.0)
    assert ("batloc-stage!writeback-w0-1-n000", 21.0, 26.0) in stagings


# A fork-join: A's output read by B1 and B2, whose outputs J reads both (2 + 3 GB).
FORK_JOIN = [task(1, 10, reads=[("X", 10)], writes=[("oA", 4)], t=1),
             task(2, 10, reads=[("oA", 4)], writes=[("oB1", 2)], parents=[1]),
             task(3, 14, reads=[("oA", 4)], writes=[("oB2", 3)], parents=[1]),
             task(4, 10, reads=[("oB1", 2), ("oB2", 3)], parents=[2, 3])]


def test_fork_join():
    # t=21: B1 and B2 registered at A's end. FCFS: B1 -> n000 (oA there, hit) [21,31); B2 -> n001
    # (n000 reserved to 121), loads oA [21,25), computes [25,39). J at 39: n000 (lowest index):
    # oB1 there (no start since 31), oB2 loaded from Lustre [39,42): computes [42,52).
    out, stagings, _ = run(Fcfs, FORK_JOIN)
    assert (out["2"], out["3"], out["4"]) == (("n000", 21.0, 31.0), ("n001", 25.0, 39.0), ("n000", 42.0, 52.0))
    assert ("batloc-stage!stage-w0-4-n000", 39.0, 42.0) in stagings
    # EFT: B1, B2 as FCFS; J at 39 sees its largest file, oB2 (3 GB): n000 t' = 42, n001 t' = 39
    # -> n001, where oB1 loads [39,41): computes [41,51).
    out, stagings, _ = run(Eft, FORK_JOIN)
    assert out["4"] == ("n001", 41.0, 51.0)
    assert ("batloc-stage!stage-w0-4-n001", 39.0, 41.0) in stagings
    # LEA: B2 scores n000 121 + 0 (oA in B1's window) against n001 21 + 500 x 4: it waits for B1 and
    # runs after it on n000 [31,45): the fork is run in series, nothing loaded. B2's start at 31 evicts
    # oB1 (B1 ended at 31: paper). J at 45: n000 holds oB2 -> n000, loads oB1 [45,47), computes [47,57).
    out, stagings, _ = run(Lea, FORK_JOIN)
    assert (out["2"], out["3"], out["4"]) == (("n000", 21.0, 31.0), ("n000", 31.0, 45.0), ("n000", 47.0, 57.0))
    assert [s[0] for s in stagings] == ["batloc-stage!stage-w0-1-n000", "batloc-stage!stage-w0-4-n000"]


# A diamond: B (long, small output) and C (short, large output) both read A's; D reads both.
DIAMOND = [task(1, 10, reads=[("X", 10)], writes=[("oA", 6)], t=1),
           task(2, 20, reads=[("oA", 6)], writes=[("oB", 2)], parents=[1]),
           task(3, 10, reads=[("oA", 6)], writes=[("oC", 8)], parents=[1]),
           task(4, 10, reads=[("oB", 2), ("oC", 8)], parents=[2, 3])]


def test_diamond():
    # FCFS: B -> n000 hit [21,41); C -> n001, loads oA [21,27), computes [27,37). D at 41: n000 (lowest
    # index): oB hit, oC loaded [41,49) -> [49,59).
    out, _, _ = run(Fcfs, DIAMOND)
    assert (out["2"], out["3"], out["4"]) == (("n000", 21.0, 41.0), ("n001", 27.0, 37.0), ("n000", 49.0, 59.0))
    # EFT: D sees oC (8 GB): n000 t' = 49, n001 t' = 41 -> n001, loads oB [41,43) -> [43,53).
    out, _, _ = run(Eft, DIAMOND)
    assert out["4"] == ("n001", 43.0, 53.0)
    # LEA: C waits for n000 (oA in B's window: 121 against 21 + 3000), starts at 41 when B ends
    # (evicting oB) -> [41,51). D at 51: n000 holds oC -> loads oB [51,53) -> [53,63).
    out, _, _ = run(Lea, DIAMOND)
    assert (out["3"], out["4"]) == (("n000", 41.0, 51.0), ("n000", 53.0, 63.0))


def test_a_failed_parent_rejects_its_descendants_at_once():
    # A is killed at its walltime (its delay exceeds it): B and C are registered and rejected then.
    jobs = [task(1, 200, reads=[("X", 10)], writes=[("oA", 5)], t=1, wall=50)] + CHAIN[1:3]
    out, _, dry = run(Fcfs, jobs)
    assert sorted(dry.rejected) == ["w0!2", "w0!3"]
    assert set(out) == {"1"}
