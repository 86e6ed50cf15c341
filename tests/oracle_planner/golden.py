"""Golden decision logs: what the Python planning pass decided on three inputs.

Written by the Python planner (before the compiled core replaced it) with
``python3 tests/oracle_planner/golden.py``; ``tests/planning/test_planning_golden.py``
requires the shipped schedulers to write the same logs byte for byte. Rewritten
once since, when the window-end kill changed (a job whose load outlasts its
window ends at the window's end): only ``lru-hetero/fcfs`` changed, and the
Python pass takes the same decisions (``test_planning_differential.py``).
"""

import gzip
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "..", "data", "golden", "decisions.json.gz")
VARIANTS = ["fcfs", "eft", "lea", "leo", "lem"]

# name -> (workload seed, hetero platform, options)
SCENARIOS = {
    "paper": (1, False, {}),
    "lru-hetero": (2, True, {"cache": "lru"}),
    "strict-period": (3, False, {"cache": "strict", "scheduling_period": 30}),
}


def policy_class(variant, bf):
    name = variant + ("_bf" if bf else "")
    return getattr(importlib.import_module(f"batloc.schedulers.{name}"), name.capitalize())


def cases():
    for scenario, (seed, hetero, options) in SCENARIOS.items():
        for variant in VARIANTS:
            for bf in (False, True):
                yield f"{scenario}/{variant}{'-bf' if bf else ''}", seed, hetero, options, variant, bf


def run_case(seed, hetero, options, variant, bf):
    from oracle_planner import scenarios
    return scenarios.decisions(policy_class(variant, bf), options,
                               scenarios.platform(hetero=hetero), scenarios.workload(seed, hours=8.0))


def load():
    with gzip.open(PATH, "rt") as fh:
        return json.load(fh)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(HERE, ".."))
    logs = {name: run_case(*args) for name, *args in cases()}
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    with gzip.GzipFile(PATH, "wb", mtime=0) as fh:
        fh.write(json.dumps(logs, sort_keys=True, indent=0).encode())
    print(f"{len(logs)} logs, {sum(v.count(chr(10)) for v in logs.values())} rows -> {PATH}")
