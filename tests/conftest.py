"""What the test folders share: what a test needs installed, ports, tiny platforms.

Tests are grouped by the part of batloc they check (``engine/``, ``planning/``,
``schedulers/``, ``khanna/``, ``ioaware/``, ``tabu/``, ``adapters/``, ``robin/``,
``analysis/``, ``workloads/``, ``platforms/``, ``locality/``, ``processes/``,
``study/``, ``package/``); ``data/`` holds their input files. This folder is on
``sys.path`` (pytest puts a root conftest's folder there), so every test imports
the helpers beside it: ``engine_harness`` (the engine against a scripted decision
process), ``oracle_planner`` (the Python planning pass), and from here:

- markers for what a test needs, skipped with the reason when it is missing:
  ``@pytest.mark.needs_engine`` (the embedded engine with SimGrid, and
  pybatsim: an engine + scheduler run), ``needs_pybatsim``, ``needs_simgrid``;
- the fixture ``platform``: the tiny platform most engine tests run on, 2 nodes of
  2 cores in the contract's layout (``engine_harness.platform_xml``; a folder that
  needs another shape defines its own ``platform``).

Free ports come from ``batloc.processes.free_port``, as for robin and the proxy.
"""

import functools
import importlib.util
import shutil

import pytest

from batloc import processes
from engine_harness import platform_xml, write


@functools.lru_cache(maxsize=None)
def simgrid_loads():
    """SimGrid's Python bindings import and load (not only installed)."""
    if importlib.util.find_spec("simgrid") is None:
        return False
    try:
        from batloc.engine.simgrid_loader import import_simgrid
        import_simgrid()
        return True
    except BaseException:     # a failed native load may raise anything, even SystemExit
        return False


def pybatsim_installed():
    return processes.pybatsim_missing() is None and shutil.which("pybatsim") is not None


NEEDS = {
    "needs_simgrid": (simgrid_loads, "SimGrid's Python bindings are not installed"),
    "needs_pybatsim": (pybatsim_installed, "pybatsim is not installed"),
    "needs_engine": (lambda: simgrid_loads() and pybatsim_installed() and shutil.which("batloc-batsim") is not None,
                     "batloc-batsim, SimGrid or pybatsim is not installed"),
}


def pytest_configure(config):
    for name, (_, reason) in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: skipped when {reason}")


def pytest_runtest_setup(item):
    for name, (ready, reason) in NEEDS.items():
        if item.get_closest_marker(name) is not None and not ready():
            pytest.skip(reason)


@pytest.fixture
def platform(tmp_path):
    """The path of a 2-node, 2-core platform file (``engine_harness.platform_xml``)."""
    return write(tmp_path, "p.xml", platform_xml(nodes=2, cores=2))
