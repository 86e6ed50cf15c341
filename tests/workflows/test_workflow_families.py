"""Workflows under the file-sharing and plain families (contract §2b): dependent jobs registered at
their last parent's end, outputs left in their producer's memory, a job of several files loaded by
one staging of its missing files.

The setting of ``test_workflow_schedules.py`` (dry run, two single-core nodes at 1 GB/s, 100 GB).
"""

from test_workflow_schedules import CHAIN, FORK_JOIN, run, task

from batloc.schedulers.cons_tabu import Cons_tabu
from batloc.schedulers.mct import Mct
from batloc.schedulers.met import Met
from batloc.testing.dry_run import DryRun, make_resources

GB = 1e9


def run_plain(cls, jobs):
    """(job number -> (start, finish), rejected job ids) of a plain-family policy on two single-core nodes."""
    static = [j for j in jobs if "parents" not in j]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    wl = {"jobs": static, "dependent_jobs": [j for j in jobs if "parents" in j], "profiles": profiles}
    dry = DryRun(cls({}), *make_resources({"n000": 1, "n001": 1}, memory_bytes=100 * GB, bandwidth=1 * GB), wl)
    res = dry.run()
    return {jid[3:]: (r["start"], r["finish"]) for jid, r in res.items() if jid.startswith("w0!")}, dry


def test_met_keeps_a_chain_where_its_outputs_are():
    # t=1: A (X, 10 GB): E_k = 10 + 100 on both, t_k 1 on both -> n000: loads X [1,11), computes [11,21).
    # t=21: oA is in n000's memory. Z (Y): E_k = 110 on both; n000 is A's until its window's end (101)
    # or B's -> n001, loads Y [21,31) -> [31,81). B (oA, 5 GB): E = 0 + 100 on n000, 5 + 100 on n001
    # -> n000, a hit [21,31); C (oB) likewise [31,41). Without outputs in memory B would load oA.
    out, stagings, _ = run(Met, CHAIN)
    assert out["1"] == ("n000", 11.0, 21.0)
    assert out["2"] == ("n000", 21.0, 31.0)
    assert out["3"] == ("n000", 31.0, 41.0)
    assert out["9"] == ("n001", 31.0, 81.0)
    assert [s[0] for s in stagings] == ["batloc-stage!stage-w0-1-n000", "batloc-stage!stage-w0-9-n001"]


def test_a_job_of_several_files_loads_its_misses_in_one_staging():
    # Fork-join under MCT (ECT_k = max(t_k, transfer slot) + load + walltime; file-sharing's ties:
    # the lowest index). A on n000 [1,11) load, [11,21). At 21 B1 (oA 4 GB) -> n000 (hit, ECT 121);
    # B2 (oA) -> n001 (n000 is B1's until 121): loads oA [21,25), computes [25,39).
    # J (oB1 2 GB on n000, oB2 3 GB on n001) is placed by its largest file, oB2: n001 (ECT 139,
    # against max(121, 31) + 3 + 100 on n000) -> loads only oB1 [39,41), computes [41,51).
    out, stagings, dry = run(Mct, FORK_JOIN)
    assert out["2"] == ("n000", 21.0, 31.0)
    assert out["3"] == ("n001", 25.0, 39.0)
    assert out["4"] == ("n001", 41.0, 51.0)
    assert ("batloc-stage!stage-w0-4-n001", 39.0, 41.0) in stagings
    assert dry.bs.profiles["batloc-stage"]["stage-w0-4-n001"]["nb_bytes"] == 2 * GB


def test_file_sharing_rejects_the_descendants_of_a_failed_parent():
    jobs = [task(1, 200, reads=[("X", 10)], writes=[("oA", 5)], t=1, wall=50)] + CHAIN[1:3]
    out, _, dry = run(Met, jobs)
    assert sorted(dry.rejected) == ["w0!2", "w0!3"]
    assert set(out) == {"1"}


def test_cons_tabu_runs_a_chain_in_order():
    # No files: A [1,11), B registered at 11 runs [11,21), C [21,31); the other job meanwhile on n001.
    jobs = [task(1, 10, t=1), task(2, 10, parents=[1]), task(3, 10, parents=[2]), task(4, 5, t=2)]
    out, dry = run_plain(Cons_tabu, jobs)
    assert (out["1"], out["2"], out["3"]) == ((1.0, 11.0), (11.0, 21.0), (21.0, 31.0))
    assert out["4"] == (2.0, 7.0)
    assert dry.rejected == []


def test_cons_tabu_rejects_the_descendants_of_a_failed_parent():
    jobs = [task(1, 200, t=1, wall=50), task(2, 10, parents=[1]), task(3, 10, parents=[2])]
    out, dry = run_plain(Cons_tabu, jobs)
    assert sorted(dry.rejected) == ["w0!2", "w0!3"]
    assert set(out) == {"1"}
