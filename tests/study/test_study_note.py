"""study.md's kill table and verdicts, on hand-made figures (no simulation)."""

import pandas as pd

from batloc.analysis.compare import RunResult
from batloc.study import note


def result(name, evaluated, killed, by_load, rule=True):
    summary = {"jobs_evaluated": evaluated, "jobs_killed": killed, "jobs_killed_by_load": by_load}
    return RunResult(name=name, scheduler=name, group=("p", "w"), summary=summary, sessions=pd.DataFrame(),
                     policy=name, walltime_includes_load=rule)


def test_the_kill_table_sums_the_weeks_and_says_what_the_load_did():
    runs = [result("fcfs", 100, 40, 38), result("fcfs", 50, 10, 10), result("lea", 150, 30, 30)]
    table, per = note.kills_table(runs)
    lines = table.splitlines()
    assert lines[2] == "| FCFS | 150 | 50 (33.3 %) | 48 (32.0 %) | 96 % | load counted |"
    assert lines[3] == "| LEA | 150 | 30 (20.0 %) | 30 (20.0 %) | 100 % | load counted |"
    assert "98 % of the kills above come from it" in note.kills_text(per)   # 78 of 80
    _, free = note.kills_table([result("fcfs", 100, 2, 0, rule=False)])
    assert "no kill above comes from a load" in note.kills_text(free)


def test_the_verdict_rule_order_then_magnitude():
    paper = {"eft": 0.9, "lea": 17.1, "leo": 0.9, "lem": 7.1}
    assert note._ordered({"eft": -1.2, "lea": 11.4, "leo": -1.0, "lem": 3.3})
    assert not note._ordered({"eft": 4.0, "lea": 11.4, "leo": -1.0, "lem": 3.3})   # EFT above LEM
    assert note._close({"lea": 11.4, "lem": 4.0}, paper, ("lea", "lem"))
    assert not note._close({"lea": 11.4, "lem": 3.3}, paper, ("lea", "lem"))      # LEM under half the paper's
