"""Outputs pinned by their write-back hold memory: a start that does not fit waits for room (issue 39, item 3).

Dry run, one node of two cores, 10 GB of memory, 1 GB/s; ``write_back: staged``.
"""

import csv
import os

import pytest

from oracle_planner.scheduler import oracle_class

from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.lea import Lea
from batloc.testing.dry_run import DryRun, make_resources

GB = 1e9

# A reads X (2 GB), writes oA (6 GB); B reads Y (2 GB) and runs long; C comes at 14 and reads Z (4 GB).
JOBS = [{"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d10", "user": "u",
         "inputs": [{"file": "X", "size": 2 * GB}], "outputs": [{"file": "oA", "size": 6 * GB}]},
        {"id": 2, "subtime": 1, "res": 1, "walltime": 100, "profile": "d20", "user": "u",
         "input_file": "Y", "input_size": 2 * GB},
        {"id": 3, "subtime": 14, "res": 1, "walltime": 100, "profile": "d5", "user": "u",
         "input_file": "Z", "input_size": 4 * GB}]


def run(cls, tmp_path, options):
    path = os.path.join(tmp_path, "decisions.csv")
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in JOBS}
    sched = cls({"decisions": path, **options})
    dry = DryRun(sched, *make_resources({"n000": 2}, memory_bytes=10 * GB, bandwidth=1 * GB),
                 {"jobs": JOBS, "profiles": profiles})
    res = dry.run()
    with open(path) as fh:
        rows = [(r["time"], r["job_id"], r["cache"]) for r in csv.DictReader(fh)]
    return res, rows


class BlindFcfs(Fcfs):
    """FCFS whose pass does not see the pinned outputs: what execution does whatever the pass knew."""

    def make_state(self):
        state = super().make_state()
        state._pins = lambda node: None
        return state


def test_a_start_waits_for_a_pinned_output_to_be_written_back(tmp_path):
    # A loads X [1, 3), computes [3, 13); oA (6 GB) is pinned from 13 while written back [13, 19).
    # B loads Y [1, 3), computes [3, 23). At 14 C takes the free core, but Y (2, in use) + oA (6, pinned)
    # + Z (4) = 12 GB > 10: it waits for room (a `full` row), claims it when oA is written back at 19,
    # loads Z [19, 23) and computes [23, 28): its window [14, 114) counts from 14.
    res, rows = run(BlindFcfs, tmp_path, {"write_back": "staged"})
    assert (res["w0!3"]["start"], res["w0!3"]["finish"]) == (23.0, 28.0)
    assert ("14.000000", "w0!3", "full") in rows and ("19.000000", "w0!3", "miss") in rows
    assert res["batloc-stage!stage-w0-3-n000"]["start"] == 19.0


@pytest.mark.parametrize("cls", [Fcfs, Lea, oracle_class("fcfs", False)], ids=["fcfs", "lea", "python"])
def test_the_pass_plans_the_start_for_when_the_pin_goes(cls, tmp_path):
    # The pass (compiled or Python) sees oA pinned until its write-back's planned end, 19: C is
    # reserved from 19, not started at 14 to wait; it starts then with its load, no `full` row.
    res, rows = run(cls, tmp_path, {"write_back": "staged"})
    assert (res["w0!3"]["start"], res["w0!3"]["finish"]) == (23.0, 28.0)
    assert [r for r in rows if r[1] == "w0!3"] == [("19.000000", "w0!3", "miss")]


def test_without_pins_nothing_waits(tmp_path):
    # written back at once, oA is an unused file C's start evicts: C loads Z [14, 18) at once
    res, rows = run(Fcfs, tmp_path, {})
    assert (res["w0!3"]["start"], res["w0!3"]["finish"]) == (18.0, 23.0)
    assert not any(case == "full" for _, _, case in rows)


# A (n000's first core) reads X (1 GB) and writes oA (5 GB); B (the second core) reads Y (4 GB) and runs
# long; C, A's child, reads oA and Z (3 GB). 10 GB of memory, instant write-back (no pins).
PARENT_JOBS = [{"id": 1, "subtime": 1, "res": 1, "walltime": 100, "profile": "d10", "user": "u",
                "inputs": [{"file": "X", "size": 1 * GB}], "outputs": [{"file": "oA", "size": 5 * GB}]},
               {"id": 2, "subtime": 1, "res": 1, "walltime": 200, "profile": "d100", "user": "u",
                "input_file": "Y", "input_size": 4 * GB}]
CHILD = {"id": 3, "subtime": 0, "parents": [1], "res": 1, "walltime": 200, "profile": "d5", "user": "u",
         "inputs": [{"file": "oA", "size": 5 * GB}, {"file": "Z", "size": 3 * GB}]}


@pytest.mark.parametrize("cls", [Fcfs, oracle_class("fcfs", False)], ids=["fcfs", "python"])
def test_a_start_counts_its_resident_unused_files_as_room_it_takes(cls, tmp_path):
    # At A's end (12: X [1, 2) then 10 s) C may start on the free core. Its miss Z (3 GB) fits beside
    # the file in use (Y, 4 GB) only if oA, resident but unused, is forgotten: its start holds oA too,
    # 4 + 5 + 3 = 12 GB > 10. So C waits for room (a `full` row at 12) until B ends and Y is unused:
    # B loads Y [1, 5) and computes [5, 105); C claims room at 105, loads Z [105, 108), computes to 113
    # (its window [12, 212) counts from the decision).
    path = os.path.join(tmp_path, "decisions.csv")
    jobs = PARENT_JOBS + [CHILD]
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    sched = cls({"decisions": path})
    dry = DryRun(sched, *make_resources({"n000": 2}, memory_bytes=10 * GB, bandwidth=1 * GB),
                 {"jobs": PARENT_JOBS, "dependent_jobs": [CHILD], "profiles": profiles})
    res = dry.run()
    with open(path) as fh:
        rows = [(r["time"], r["job_id"], r["cache"]) for r in csv.DictReader(fh)]
    assert res["w0!2"]["finish"] == 105.0
    assert ("12.000000", "w0!3", "full") in rows
    assert (res["w0!3"]["start"], res["w0!3"]["finish"]) == (108.0, 113.0)
