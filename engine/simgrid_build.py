"""Build SimGrid's Python module as a wheel, in minutes, once per machine and Python.

PyPI's ``simgrid==4.1`` is a source distribution whose ``setup.py`` runs CMake
on the whole library as its authors develop it: link-time optimisation, full
debug information (``-g3``), the model checker, and every target: most of the
3 628 s of CPU the whole install took (issue 36). The engine needs only the
Python module and ``libsimgrid``: 463 s of CPU (docs/performance.md, "The
first hour"). This builds those two targets from the same source
distribution, with the same code generation (Release: ``-O3 -funroll-loops``,
no ``-ffast-math``; the same options ``setup.py`` passes: minimal bindings,
no SMPI, no Java), without LTO, debug information or the model checker,
which change no result of a simulation (checked: the demo's outputs are
byte-identical to the ones of the library pip builds). It packs
them into a wheel that pip installs, so that ``pip show simgrid`` works and
batloc's ``simgrid>=4.1`` dependency is met.

The wheel is kept in ``$BATLOC_SIMGRID_CACHE`` (default
``~/.cache/batloc/simgrid``, under ``$XDG_CACHE_HOME`` if set), named after
the source distribution's sha256, this recipe and the Python ABI: a re-run,
or another virtualenv of the same Python, installs it in seconds.

    python engine/simgrid_build.py [--jobs N] [--keep-build DIR]

prints the wheel's path on stdout, progress on stderr (CMake's percentage).
Stdlib only: ``scripts/install.sh`` runs it before batloc is installed. Needs
cmake, a C++17 compiler, Boost's headers, Python's headers and ``pybind11<3``
(SimGrid 4.1 does not build against pybind11 3) in the running Python.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

VERSION = "4.1"
# PyPI never changes a released file: a download that differs is refused.
SDIST_SHA256 = "23ac24cb5b2467f1f051c992ec921b4a9f8f5ac2df16c489bd01bf1c44e6e817"
# setup.py's own options, then what we leave out. CMAKE_CXX_FLAGS_RELEASE comes
# after the -g3 that CMakeLists.txt appends to CMAKE_CXX_FLAGS, so -g0 wins.
CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-Denable_smpi=OFF", "-Denable_java=OFF", "-Denable_python=ON", "-Dminimal-bindings=ON",
    "-Denable_lto=OFF", "-Denable_model-checking=OFF", "-Denable_sthread=OFF",
    "-DCMAKE_C_FLAGS_RELEASE=-O3 -DNDEBUG -g0", "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG -g0",
]
TARGET = "python-bindings"
SAY = "batloc install: SimGrid"


class BuildError(Exception):
    """Why the build failed, in one line."""


def say(text):
    print(f"{SAY}: {text}", file=sys.stderr, flush=True)


def wheel_tag():
    """This Python's wheel tag, as bdist_wheel names a CPython extension: cp311-cp311-linux_x86_64."""
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}{getattr(sys, 'abiflags', '')}-{platform}"


def recipe_hash():
    """A hash of how the wheel is built: this file's build steps and options."""
    return hashlib.sha256(repr((CMAKE_OPTIONS, TARGET, 1)).encode()).hexdigest()[:10]


def cache_root():
    root = os.environ.get("BATLOC_SIMGRID_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "batloc" / "simgrid"


def cached_wheel():
    """Where the wheel of this Python, recipe and source distribution lives (it may not exist yet)."""
    key = f"{SDIST_SHA256[:16]}-{recipe_hash()}"
    return cache_root() / key / f"simgrid-{VERSION}-{wheel_tag()}.whl"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(into: Path) -> Path:
    say(f"downloading simgrid=={VERSION}'s source distribution")
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps",
           "--no-binary", ":all:", "-d", str(into), f"simgrid=={VERSION}"]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found = sorted(into.glob(f"simgrid-{VERSION}.tar.gz"))
    if run.returncode != 0 or not found:
        tail = (run.stdout.strip().splitlines() or ["no message"])[-1]
        raise BuildError(f"pip could not download simgrid=={VERSION} ({tail})")
    digest = sha256_of(found[0])
    if digest != SDIST_SHA256:
        raise BuildError(f"{found[0].name} has sha256 {digest}, not PyPI's {SDIST_SHA256}: refusing to build it")
    return found[0]


def unpack(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):       # Python >= 3.11.4: no links or paths out of `into`
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)
    return into / f"simgrid-{VERSION}"


def pybind11_cmake_dir():
    try:
        import pybind11
    except ImportError:
        raise BuildError("pybind11 is not installed in this Python (pip install 'pybind11<3')") from None
    if int(pybind11.__version__.split(".")[0]) >= 3:
        raise BuildError(f"pybind11 {pybind11.__version__} is installed: SimGrid {VERSION} builds against "
                         "pybind11 2 only (pip install 'pybind11<3')")
    return pybind11.get_cmake_dir()


def run_logged(cmd, cwd, log, progress=None):
    """Runs `cmd`, its output appended to `log`; each line passed to `progress`. BuildError on failure."""
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        # its own process group: stopped whole (make and its compilers) if we are
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", start_new_session=True)
        try:
            for line in proc.stdout:
                out.write(line)
                if progress is not None:
                    progress(line)
            code = proc.wait()
        except BaseException:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            raise
    if code != 0:
        with open(log) as fh:
            lines = [line.rstrip() for line in fh]
        errors = [line for line in lines if "error" in line.lower()]
        raise BuildError(f"`{' '.join(cmd[:2])} …` failed (exit status {code}): "
                         f"{(errors or lines or ['no output'])[-1].strip()} (whole log: {log})")


class Percent:
    """CMake's '[ 37%] Building CXX object …' lines, said once per step of `step` percent."""

    PATTERN = re.compile(r"^\[\s*(\d+)%\]\s+(?:Building \w+ object \S*?/src/|Linking \w+ \S+ )?(.*)$")

    def __init__(self, step=5):
        self.step = step
        self.shown = -step
        self.started = time.monotonic()

    def __call__(self, line):
        m = self.PATTERN.match(line.strip())
        if m is None:
            return
        percent = int(m.group(1))
        if percent >= self.shown + self.step or (percent == 100 and self.shown < 100):
            self.shown = percent
            what = m.group(2).removesuffix(".o").removesuffix(".cpp")
            say(f"compiling {percent:3d}% ({time.monotonic() - self.started:.0f} s; {what})")


def build(src: Path, build_dir: Path, jobs: int, log: Path) -> Path:
    """Configures and builds the module and libsimgrid; returns the folder holding both."""
    out = build_dir / "lib"
    build_dir.mkdir(parents=True, exist_ok=True)
    say(f"configuring (CMake: Release, no LTO, no debug information, no model checker; log {log})")
    run_logged(["cmake", "-G", "Unix Makefiles", "-S", str(src), "-B", str(build_dir), *CMAKE_OPTIONS,
                f"-DPython3_EXECUTABLE={sys.executable}", f"-DPYTHON_EXECUTABLE={sys.executable}",
                f"-Dpybind11_DIR={pybind11_cmake_dir()}", f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out}"],
               build_dir, log)
    say(f"compiling libsimgrid and the Python module on {jobs} core(s) (the long step)")
    # make itself, not `cmake --build`, which passes make's lines on in bursts: the percentage would stall
    run_logged(["make", "-C", str(build_dir), f"-j{jobs}", TARGET], build_dir, log, Percent())
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def pack(lib_dir: Path, src: Path, wheel: Path):
    """The wheel pip installs: the module, the library under its soname, metadata and licences."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = lib_dir / f"simgrid{suffix}"
    library = lib_dir / f"libsimgrid.so.{VERSION}"
    for f in (module, library):
        if not f.is_file():
            raise BuildError(f"the build made no {f.name} in {lib_dir}")
    info = f"simgrid-{VERSION}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: simgrid\nVersion: {VERSION}\n"
                "Summary: SimGrid's Python bindings and libsimgrid, built by batloc (engine/simgrid_build.py)\n"
                "Home-page: https://simgrid.org\nLicense: LGPL-2.1-only\nRequires-Dist: pybind11>=2.4\n")
    wheel_meta = f"Wheel-Version: 1.0\nGenerator: batloc simgrid_build\nRoot-Is-Purelib: false\nTag: {wheel_tag()}\n"
    files = [(module.name, module.read_bytes()), (library.name, library.read_bytes())]
    for lic in ("COPYING", "LICENSE-LGPL-2.1", "AUTHORS"):
        if (src / lic).is_file():
            files.append((f"{info}/licenses/{lic}", (src / lic).read_bytes()))
    files += [(f"{info}/METADATA", metadata.encode()), (f"{info}/WHEEL", wheel_meta.encode()),
              (f"{info}/top_level.txt", b"simgrid\n")]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files:
        writer.writerow(_record_line(name, data))
    writer.writerow([f"{info}/RECORD", "", ""])
    files.append((f"{info}/RECORD", record.getvalue().encode()))
    wheel.parent.mkdir(parents=True, exist_ok=True)
    partial = wheel.with_name(wheel.name + f".{os.getpid()}.part")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(2025, 11, 11, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") or ".so." in name else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    os.replace(partial, wheel)      # whole or absent: a build stopped halfway leaves no wheel


def ensure_wheel(jobs: int, keep_build: Path | None = None) -> Path:
    wheel = cached_wheel()
    if wheel.is_file():
        say(f"using the wheel built before ({wheel})")
        return wheel
    started = time.monotonic()
    work = keep_build or Path(tempfile.mkdtemp(prefix="batloc-simgrid-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    try:
        src = unpack(download(work / "download"), work / "src")
        lib_dir = build(src, work / "build", jobs, log)
        pack(lib_dir, src, wheel)
    except BaseException:
        if keep_build is None:
            # keep the log of a failed build where the message says it is
            for f in work.iterdir():
                if f != log:
                    shutil.rmtree(f, ignore_errors=True) if f.is_dir() else f.unlink()
        raise
    if keep_build is None:
        shutil.rmtree(work, ignore_errors=True)
    say(f"built in {time.monotonic() - started:.0f} s: {wheel}")
    return wheel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="compilations at once (default: this machine's cores)")
    ap.add_argument("--keep-build", type=Path, help="build in this folder and keep it (default: a temporary one)")
    ap.add_argument("--print-path", action="store_true", help="print where the wheel is or would be, build nothing")
    args = ap.parse_args(argv)
    # scripts/install.sh stops a build it no longer waits for with SIGTERM: end the compilers too
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.print_path:
        print(cached_wheel())
        return 0
    try:
        print(ensure_wheel(max(1, args.jobs), args.keep_build))
    except BuildError as e:
        print(f"{SAY}: error: {e}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
