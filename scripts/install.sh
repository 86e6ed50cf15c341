#!/usr/bin/env bash
# Installs batloc and everything it needs into the active Python environment.
# Safe to re-run: SimGrid's wheel is kept in ~/.cache/batloc/simgrid and the
# planning core's compile in ~/.cache/batloc/numba, so a re-run takes seconds.
#
# The two long steps run side by side: SimGrid's compile (engine/simgrid_build.py,
# in the background) and, meanwhile, pip's downloads and the planning core's
# compile (numba, one core). Each says how far it is.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"
started=$(date +%s)
say() { echo "batloc install: $*" >&2; }

"$py" - <<'PY' || { echo "batloc needs Python >= 3.11 (set PYTHON=...)" >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

# SimGrid 4.1 fails to build against pybind11 3.x; PIP_CONSTRAINT reaches
# pip's isolated build environments too (pip download prepares an sdist's metadata).
export PIP_CONSTRAINT="$here/constraints/build.txt"
pip_install=("$py" -m pip install --disable-pip-version-check -q)
work="$(mktemp -d)"
simgrid_build=""
cleanup() {
    # a failed install does not leave SimGrid's compile running
    if [ -n "$simgrid_build" ]; then kill "$simgrid_build" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# 1. SimGrid, unless this Python has it: PyPI's simgrid is a source distribution,
#    built here with CMake, a C++17 compiler, Boost's and Python's headers
#    (installed from Debian when missing and we are root).
if ! "$py" -c "import simgrid" >/dev/null 2>&1 && ! "$py" -m pip show simgrid >/dev/null 2>&1; then
    wheel="$("$py" "$here/engine/simgrid_build.py" --print-path)"
    if [ ! -f "$wheel" ]; then
        missing=()
        command -v cmake >/dev/null || missing+=(cmake)
        command -v make >/dev/null || missing+=(make)
        command -v g++ >/dev/null || missing+=(g++)
        [ -f /usr/include/boost/version.hpp ] || missing+=(libboost-dev)
        headers="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
        [ -f "$headers/Python.h" ] || missing+=(python3-dev)
        if [ ${#missing[@]} -gt 0 ]; then
            if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
                say "installing build tools for SimGrid: ${missing[*]}"
                apt-get update -qq
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
            else
                say "SimGrid must be compiled and needs: ${missing[*]} (install them, then re-run)"
                exit 1
            fi
        fi
    fi
    # its build needs pybind11 (< 3), and its module needs it at run time
    "${pip_install[@]}" "pybind11>=2.4,<3"
    if [ -f "$wheel" ]; then
        say "SimGrid 4.1: the wheel built before ($wheel)"
    else
        say "SimGrid 4.1 is compiled in the background (once per machine and Python: about 8 CPU-minutes, 4 to 5 minutes on 2 idle cores)"
    fi
    "$py" "$here/engine/simgrid_build.py" > "$work/simgrid-wheel" &
    simgrid_build=$!
fi

# 2. batloc's other dependencies (pyproject.toml's, with the extras [test] and
#    [dask]: robin --dask and the tests that run sweeps on a LocalCluster).
"$py" - "$here/pyproject.toml" > "$work/requirements.txt" <<'PY'
import re, sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
wanted = project["dependencies"] + [r for extra in ("test", "dask") for r in project["optional-dependencies"][extra]]
print("\n".join(r for r in wanted if re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() != "simgrid"))
PY
say "installing batloc's dependencies (pip)"
"${pip_install[@]}" -r "$work/requirements.txt"
"${pip_install[@]}" --no-deps -e "$here"
# pybatsim 3.2.1 pins pyzmq<23, which does not build on 3.11: take it without
# its pins (its real needs, a recent pyzmq, docopt, procset and sortedcontainers,
# come from batloc's own dependencies).
"${pip_install[@]}" --no-deps "pybatsim==3.2.1"

# 3. The schedulers' planning core, compiled once (numba caches it on disk; see
#    schedulers/planning/jit.py), so that no scheduler run pays for it.
"$py" -c "from batloc.schedulers.planning.planner import warm_up; warm_up(lambda line: print('batloc install:', line, flush=True))" >&2 \
    || { say "the schedulers' planning core does not compile"; exit 1; }
# The engine's clock's compiled part (engine/l07_wear.py: its sleeps' wear, seconds), likewise.
"$py" -c "from batloc.engine.l07_wear import warm_up; warm_up()" >&2 \
    || { say "the engine's compiled clock part does not compile"; exit 1; }

# 4. SimGrid's wheel, once built: installed so that pip knows it (batloc needs simgrid>=4.1).
if [ -n "$simgrid_build" ]; then
    if ! wait "$simgrid_build"; then
        simgrid_build=""
        say "SimGrid's compile failed (its message is above)"
        exit 1
    fi
    simgrid_build=""
    "${pip_install[@]}" --no-deps "$(cat "$work/simgrid-wheel")"
fi
"$py" -c "import batloc.engine.simgrid_loader as s; s.import_simgrid()" \
    || { say "SimGrid is installed but cannot be loaded"; exit 1; }
say "ok ($(( $(date +%s) - started )) s)"
