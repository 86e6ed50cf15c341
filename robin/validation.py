"""Every finished run validated: `batloc validate` on its outputs, the verdict in its run.json.

run.json gets ``"validation": {"valid": true|false, "violations": {"<kind>": count, ...}}``
(kinds as `batloc validate` counts them); a run with violations is a failed run
(its outputs kept) and ``log/validate.txt`` lists every violation. The memory
model the validator replays is the run's own: the scheduler's `cache` option,
the profile's (`authors` under the authors' profile), the proxy's `--cache`, `paper` otherwise;
for the file-sharing family's `value` model, which the replay does not know,
hits and capacity go unchecked (the other checks still run).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from batloc.analysis.validate import InputError, verdict
from batloc.locality.cache import MODELS
from batloc.schedulers.planning.options import PROFILES

# Policies whose default memory model is file-sharing's `value` (schedulers/filesharing/options.py).
VALUE_MODEL_POLICIES = {"met", "mct", "sa", "jdp_dll", "online_hps"}
UNREADABLE = "unreadable outputs"


def memory_model(scheduler: dict) -> str | None:
    """The memory model of a run's scheduler as robin recorded it (run.json's `scheduler`)."""
    if scheduler.get("policy"):
        return _policy_model(scheduler["policy"], scheduler.get("options") or {})
    return command_model(scheduler.get("command") or "")


def _policy_model(policy: str, options: dict) -> str | None:
    cache = options.get("cache")
    if cache is None:
        cache = PROFILES.get(options.get("profile"), {}).get("cache")    # `authors` under the authors' profile
    if cache is None:
        cache = "value" if policy in VALUE_MODEL_POLICIES else "paper"
    return cache if cache in MODELS else None


def command_model(command: str) -> str | None:
    """From a command line: the proxy's --cache, a batloc policy script's -o options, else paper."""
    try:
        args = shlex.split(command)
    except ValueError:
        return "paper"
    for i, a in enumerate(args[:-1]):
        if a == "--cache":
            return args[i + 1] if args[i + 1] in MODELS else None
        if a == "--":
            break           # the proxy's wrapped command follows: the proxy's model is the run's
    script = next((Path(a).stem for a in args if a.endswith(".py")), None)
    options = {}
    for i, a in enumerate(args[:-1]):
        if a in ("-o", "--options"):
            try:
                options = json.loads(args[i + 1])
            except ValueError:
                options = {}
    if script is not None and isinstance(options, dict):
        return _policy_model(script, options)
    return "paper"


def validate_run(prefix: Path, workload, platform, scheduler: dict) -> tuple[dict, list[str]]:
    """The run's verdict for run.json, and the lines for log/validate.txt."""
    try:
        return verdict(prefix, workload, platform, memory_model(scheduler))
    except InputError as exc:
        return {"valid": False, "violations": {UNREADABLE: 1}}, [f"{UNREADABLE}: {exc}"]
    except Exception as exc:  # noqa: BLE001  (garbage a reader did not expect: the run, not robin, is at fault)
        return {"valid": False, "violations": {UNREADABLE: 1}}, [f"{UNREADABLE}: {prefix}: {type(exc).__name__}: {exc}"]


def summary(validation: dict) -> str:
    """'3 violation(s): core used twice 2, memory over capacity 1'."""
    counts = validation.get("violations") or {}
    return f"{sum(counts.values())} violation(s): " + ", ".join(f"{k} {n}" for k, n in counts.items())
