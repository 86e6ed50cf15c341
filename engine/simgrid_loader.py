"""Import SimGrid's Python bindings, working around the PyPI build's loader path.

The extension module built by PyPI's `simgrid` does not find its own
`libsimgrid.so.*`, which sits beside it in site-packages; preloading that
library globally makes `import simgrid` work. Done once here so that no caller
has to know.
"""

import ctypes
import glob
import importlib.util
import os
import sys

_simgrid = None


def import_simgrid():
    """Return the `simgrid` module, or exit with a message saying how to install it."""
    global _simgrid
    if _simgrid is not None:
        return _simgrid
    spec = importlib.util.find_spec("simgrid")
    if spec is None or spec.origin is None:
        sys.exit("batloc: SimGrid's Python bindings are not installed; run scripts/install.sh")
    site = os.path.dirname(spec.origin)
    for lib in sorted(glob.glob(os.path.join(site, "libsimgrid.so*"))):
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
        break
    # The bindings log one INFO line at import (forcing thread contexts), before any
    # --log option can apply; keep it off the user's terminal.
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import simgrid  # noqa: E402  (needs the preload above)
    finally:
        os.dup2(saved, 2)
        os.close(saved)

    _simgrid = simgrid
    return simgrid
