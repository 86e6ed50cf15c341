"""Every finished run validated: `batloc validate` on its outputs, the verdict in its run.json.

run.json gets ``"validation": {"valid": true|false, "violations": {"<kind>": count, ...}}``
(kinds as `batloc validate` counts them); a run with violations is a failed run
(its outputs kept) and ``log/validate.txt`` lists every violation. The memory
model the validator replays is the run's own: the scheduler's `cache` option,
`authors` under the authors' profile, the proxy's `--cache`, the file-sharing
family's own default (`value`; `lru` for JDP+DLL), `paper` otherwise; a model
the replay does not know leaves hits and capacity unchecked (the other checks
still run). The platform is read with
the engine's -m/-r as the run gave them (run.json's `platform_options`).
"""

from __future__ import annotations

from pathlib import Path

from batloc.analysis import run_folder
from batloc.analysis.memory_model import memory_model
from batloc.analysis.validate import InputError, verdict

UNREADABLE = "unreadable outputs"


def validate_run(prefix: Path, workload, platform, scheduler: dict, platform_options=None) -> tuple[dict, list[str]]:
    """The run's verdict for run.json, and the lines for log/validate.txt; `platform_options`: the engine's
    -m/-r as run.json records them (the platform read as the engine read it)."""
    try:
        roles = run_folder.platform_roles({"platform_options": platform_options})
        return verdict(prefix, workload, platform, memory_model(scheduler), roles)
    except (InputError, run_folder.FolderError) as exc:
        return {"valid": False, "violations": {UNREADABLE: 1}}, [f"{UNREADABLE}: {exc}"]
    except Exception as exc:  # noqa: BLE001  (garbage a reader did not expect: the run, not robin, is at fault)
        return {"valid": False, "violations": {UNREADABLE: 1}}, [f"{UNREADABLE}: {prefix}: {type(exc).__name__}: {exc}"]


def summary(validation: dict) -> str:
    """'3 violation(s): core used twice 2, memory over capacity 1'."""
    counts = validation.get("violations") or {}
    return f"{sum(counts.values())} violation(s): " + ", ".join(f"{k} {n}" for k, n in counts.items())
