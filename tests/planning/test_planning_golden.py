"""The shipped schedulers write, byte for byte, the decision logs the Python
planning pass wrote on three saturated inputs (tests/oracle_planner/golden.py)."""

import pytest

from oracle_planner import golden

GOLD = golden.load()
CASES = list(golden.cases())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_decision_log_is_the_golden_one(case):
    name, *args = case
    assert golden.run_case(*args) == GOLD[name]
