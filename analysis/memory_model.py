"""The memory model a run used, from robin's record of its scheduler (run.json's `scheduler`).

What the validator replays (``batloc validate``, and robin after every run):
the scheduler's `cache` option, `authors` under the authors' profile, the
proxy's `--cache`, `paper` otherwise; None for the file-sharing family's
`value` model, which the replay does not know.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from batloc.locality.cache import MODELS

# The models `batloc validate` replays: cache.py's and the file-sharing family's `value` (Eq. 7).
REPLAY_MODELS = MODELS + ("value",)
# The file-sharing family (schedulers/filesharing/options.py: `value` by default) and the members that
# default to another model (schedulers/jdp_dll.py: LRU, as in the original).
FILE_SHARING_POLICIES = {"met", "mct", "sa", "jdp_dll", "online_hps"}
FAMILY_DEFAULTS = {"jdp_dll": "lru"}
# Policies whose default memory model is file-sharing's `value`.
VALUE_MODEL_POLICIES = FILE_SHARING_POLICIES - set(FAMILY_DEFAULTS)


def memory_model(scheduler: dict) -> str | None:
    """The memory model of a run's scheduler as robin recorded it (run.json's `scheduler`)."""
    if scheduler.get("policy"):
        return _policy_model(scheduler["policy"], scheduler.get("options") or {})
    return command_model(scheduler.get("command") or "")


def _policy_model(policy: str, options: dict) -> str | None:
    cache = options.get("cache")
    if cache is None and options.get("profile") == "authors":
        cache = "authors"       # the profile's own model (schedulers/planning/options.py PROFILES)
    if cache is None:
        cache = FAMILY_DEFAULTS.get(policy, "value") if policy in FILE_SHARING_POLICIES else "paper"
    return cache if cache in REPLAY_MODELS else None


def command_model(command: str) -> str | None:
    """From a command line: the proxy's --cache, a batloc policy script's -o options, else paper."""
    try:
        args = shlex.split(command)
    except ValueError:
        return "paper"
    for i, a in enumerate(args[:-1]):
        if a == "--cache":
            return args[i + 1] if args[i + 1] in REPLAY_MODELS else None
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
