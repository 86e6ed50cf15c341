"""Files shipped inside the package (experiments/, platforms/, schedulers/),
found from any folder: one lookup rule for robin, the study and the
scheduler launcher. A leaf: it imports nothing of batloc's but the package."""

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
