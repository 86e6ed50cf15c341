"""Predicted start times from the standing plan (contract §6, ``<prefix>_predictions.csv``), on
hand-computed schedules run through the dry run: one node, jobs without input files."""

import csv

from batloc.schedulers.fcfs import Fcfs
from batloc.schedulers.fcfs_bf import Fcfs_bf
from batloc.testing.dry_run import DryRun, make_resources


def job(i, subtime, cores, walltime, delay):
    return {"id": i, "subtime": subtime, "res": cores, "walltime": walltime, "profile": f"d{delay}"}


def predictions(tmp_path, cls, jobs, cores=1):
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    prefix = str(tmp_path / "run")
    DryRun(cls({"export_prefix": prefix, "predictions": True}), *make_resources({"n000": cores}),
           {"nb_res": cores, "jobs": jobs, "profiles": profiles}).run()
    with open(prefix + "_predictions.csv", newline="") as fh:
        return {r["job_id"]: {k: float(v) for k, v in r.items() if k != "job_id"} for r in csv.DictReader(fh)}


def test_a_job_behind_a_running_one_is_predicted_at_its_walltime_end_and_starts_at_its_early_end(tmp_path):
    # A runs [1, 31) with walltime 100: B, submitted at 2 on the one core, is predicted
    # at A's walltime end 101; A ends early at 31, so B starts at 31, 70 s before.
    p = predictions(tmp_path, Fcfs, [job(1, 1, 1, 100, 30), job(2, 2, 1, 50, 10)])
    assert p["w0!1"] == {"submission_time": 1.0, "predicted_at": 1.0, "predicted_start": 1.0,
                         "last_predicted_start": 1.0, "starting_time": 1.0}
    assert p["w0!2"] == {"submission_time": 2.0, "predicted_at": 2.0, "predicted_start": 101.0,
                         "last_predicted_start": 101.0, "starting_time": 31.0}


def test_a_prediction_moves_when_an_earlier_job_ends_early(tmp_path):
    # Two cores. A [1, 11) walltime 100 on one core, B [1, 201) walltime 300 on the other.
    # C (2 cores, submitted 2) waits for both: predicted at max(101, 301) = 301.
    # D (1 core, submitted 3, walltime 20) comes after C: predicted at C's end 301 + 50 = 351
    # without backfilling. A ends at 11: nothing moves for C (B still holds its core until
    # 301) nor for D. B ends at 201: C starts at 201, D is planned again at 251 and starts
    # there (C ran 40 s: [201, 241); D starts at C's end 241, before its last prediction 251).
    jobs = [job(1, 1, 1, 100, 10), job(2, 1, 1, 300, 200), job(3, 2, 2, 50, 40), job(4, 3, 1, 20, 5)]
    p = predictions(tmp_path, Fcfs, jobs, cores=2)
    assert (p["w0!3"]["predicted_start"], p["w0!3"]["starting_time"]) == (301.0, 201.0)
    assert p["w0!4"]["predicted_at"] == 3.0 and p["w0!4"]["predicted_start"] == 351.0
    assert p["w0!4"]["last_predicted_start"] == 251.0 and p["w0!4"]["starting_time"] == 241.0


def test_backfilling_predicts_the_hole_a_job_fits_in(tmp_path):
    # As above with conservative backfilling: D (1 core, 20 s) fits in A's hole at 11?
    # No: A's core is reserved from... A holds [1, 101) in the plan; B [1, 301). C is
    # reserved [301, 351) on both cores; D fits before C on A's core: [101, 121).
    jobs = [job(1, 1, 1, 100, 10), job(2, 1, 1, 300, 200), job(3, 2, 2, 50, 40), job(4, 3, 1, 20, 5)]
    p = predictions(tmp_path, Fcfs_bf, jobs, cores=2)
    assert p["w0!4"]["predicted_start"] == 101.0
    assert p["w0!4"]["starting_time"] == 11.0        # A ended at 11: D backfills at once
