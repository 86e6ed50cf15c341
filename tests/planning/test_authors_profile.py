"""The `authors` profile against the authors' own simulator, on a slice of the
oracle input (tests/data/oracle_slice: 2 080 jobs, 174 evaluated, Rackham).

Under FCFS and EFT, per-job file wait (transfer + wait for another job's load,
whole seconds) must equal the C simulator's for at least 90 % of the evaluated
jobs, and the total file wait and the mean stretch must be within 3 % of its;
LEA's within 5 % (the slice leaves out the jobs submitted later, which moves
LEA, waiting for the nodes where its file will be, more than FCFS): since R7's
core order it is not (16 % on file wait), though within 1 % on both full
inputs (docs/reproduction.md), so that case is an expected failure until the
slice is rebuilt. Without the authors' clock
(R2: plans at every tick after any event, from the actual state) the jobs start
earlier than in C, and the stretch falls 6 % short: that case must fail. The
paper's defaults, which keep files between jobs, must not match either (LEA
then loads far less than the C build, which keeps none).
"""

import json
from pathlib import Path

import pytest

from batloc.analysis.authors import compare, per_job
from policy_run import simulate

SLICE = Path(__file__).resolve().parents[1] / "data" / "oracle_slice"
PLATFORM = Path(__file__).resolve().parents[2] / "platforms" / "rackham.xml"
WORKLOAD = SLICE / "workload.json"
EVALUATED = [str(j["id"]) for j in json.loads(WORKLOAD.read_text())["jobs"] if j.get("evaluated")]

pytestmark = pytest.mark.needs_engine


def against_authors(tmp_path, variant, options):
    out = simulate(tmp_path, variant, PLATFORM, WORKLOAD, options=options, name=variant)
    return compare(variant, per_job(out.prefix, str(WORKLOAD), str(PLATFORM)), str(SLICE), jobs=EVALUATED)


def relative(pair):
    ours, theirs = pair
    return abs(ours - theirs) / theirs


AUTHORS = {"profile": "authors"}
# R2 off: a pass at the first tick after any event, re-planning the whole queue.
NO_CLOCK = {**AUTHORS, "tick_events": "since_last_tick", "submission_pass": "full"}


@pytest.mark.parametrize("variant,options", [
    ("fcfs", AUTHORS), ("eft", AUTHORS),
    pytest.param("fcfs", NO_CLOCK, marks=pytest.mark.xfail(
        strict=True, reason="without R2 the stretch is 6 % below the C simulator's")),
], ids=["fcfs", "eft", "fcfs-without-R2"])
def test_authors_profile_gives_the_c_simulators_file_wait_job_by_job(tmp_path, variant, options):
    row = against_authors(tmp_path, variant, options)
    assert row["completed"] == len(EVALUATED) == 174
    assert row["exact"] >= 0.90, row
    assert relative(row["total"]) <= 0.03, row
    assert relative(row["stretch"]) <= 0.03, row


@pytest.mark.xfail(strict=True, reason=(
    "issue 32: with R7's core order LEA's file wait on this slice is 16 % above C's (stretch +7 %), "
    "though within 1 % on both full inputs (docs/reproduction.md); the slice, cut before the later "
    "submissions, is to be rebuilt from both oracles"))
def test_authors_profile_gives_lea_the_c_simulators_file_wait_and_stretch(tmp_path):
    row = against_authors(tmp_path, "lea", AUTHORS)
    assert relative(row["total"]) <= 0.05, row
    assert relative(row["stretch"]) <= 0.05, row


def test_paper_defaults_are_not_the_c_simulator(tmp_path):
    row = against_authors(tmp_path, "lea", {})
    ours, theirs = row["total"]
    assert ours < 0.8 * theirs, row    # files kept between jobs: far fewer loads than the C build
