"""Files shipped inside the package (experiments/, platforms/, schedulers/),
found from any folder: one lookup rule for robin, the study and the
scheduler launcher, and one naming rule for batloc's policies (robin's
`lea-bf` is schedulers/lea.py with backfilling). A leaf: it imports nothing
of batloc's but the package."""

import os
from pathlib import Path


def package_root() -> Path:
    import batloc

    return Path(batloc.__file__).resolve().parent


def packaged(path) -> Path:
    """`path` as given, or, when it is relative and names nothing here, the package's file of that
    name: an installed batloc's experiments/, platforms/ and schedulers/ from any folder."""
    p = Path(os.path.expanduser(str(path)))
    if not (p.is_absolute() or p.exists()) and (package_root() / p).exists():
        return package_root() / p
    return p


def policy_of(name: str) -> str:
    """A scheduler name's policy: `lea-bf` → lea, the paper's naming."""
    return name.lower().removesuffix("-bf")


def options_of(name: str) -> dict:
    """The options a scheduler name implies: `-bf`, backfilling."""
    return {"backfilling": True} if name.lower().endswith("-bf") else {}


def policy_named(name: str):
    """A scheduler name as robin reads it (lea, lea-bf, fcfs_bf): (its batloc policy file, the options its
    name implies), or None when no batloc policy has that name (a pybatsim stock scheduler, say)."""
    policy = policy_of(name)
    path = package_root() / "schedulers" / f"{policy}.py"
    if not policy or "/" in policy or policy.startswith(".") or not path.is_file():
        return None
    # an entry file defines the class pybatsim loads, named after it (lea.py: Lea); base.py and the
    # other plumbing beside them do not
    if f"class {policy[:1].upper()}{policy[1:]}(" not in path.read_text(encoding="utf-8"):
        return None
    return path, options_of(name)
