#!/usr/bin/env bash
# Installs batloc and everything it needs into the active Python environment.
# Safe to re-run: pip reuses its cache of the SimGrid wheel it built before.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"

"$py" - <<'PY' || { echo "batloc needs Python >= 3.11 (set PYTHON=...)" >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

# PyPI's simgrid is a source distribution: building it needs CMake, a C++17
# compiler and Boost headers. Install the missing ones from Debian when we can.
if ! "$py" -c "import simgrid" >/dev/null 2>&1 && ! "$py" -m pip show simgrid >/dev/null 2>&1; then
    missing=()
    command -v cmake >/dev/null || missing+=(cmake)
    command -v g++ >/dev/null || missing+=(g++)
    [ -f /usr/include/boost/version.hpp ] || missing+=(libboost-dev)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "batloc install: installing build tools for SimGrid: ${missing[*]}" >&2
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        else
            echo "batloc install: SimGrid must be compiled and needs: ${missing[*]} (install them, then re-run)" >&2
            exit 1
        fi
    fi
    echo "batloc install: compiling SimGrid from PyPI (first time only, several minutes)..." >&2
fi

# SimGrid 4.1 fails to build against pybind11 3.x; PIP_CONSTRAINT reaches the
# isolated build environments too.
export PIP_CONSTRAINT="$here/constraints/build.txt"
# [dask]: robin --dask, and the tests that run sweeps on a LocalCluster.
"$py" -m pip install --disable-pip-version-check -q -e "$here[test,dask]"
# pybatsim 3.2.1 pins pyzmq<23, which does not build on 3.11: take it without
# its pins (its real needs, a recent pyzmq, docopt, procset and sortedcontainers,
# come from batloc's own dependencies).
"$py" -m pip install --disable-pip-version-check -q --no-deps "pybatsim==3.2.1"
"$py" -c "import batloc.engine.simgrid_loader as s; s.import_simgrid()" \
    || { echo "batloc install: SimGrid is installed but cannot be loaded" >&2; exit 1; }
# Compile the schedulers' planning pass once (numba caches it on disk; see
# schedulers/planning/jit.py), so that no scheduler run pays for it.
"$py" -c "from batloc.schedulers.planning.planner import warm_up; warm_up()" \
    || { echo "batloc install: the schedulers' planning core does not compile" >&2; exit 1; }
echo "batloc install: ok" >&2
