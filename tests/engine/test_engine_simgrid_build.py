"""engine/simgrid_build.py: the wheel of SimGrid's module that scripts/install.sh builds and pip installs.

The compile itself takes minutes (benchmarks/fresh_install.py measures it);
here, its packing: a wheel pip accepts, whose RECORD is true, named after this
Python's tag and kept under a key of the source distribution and the recipe.
"""

import base64
import csv
import hashlib
import io
import subprocess
import sys
import sysconfig
import zipfile

from batloc.engine import simgrid_build as sb


def test_the_cached_wheel_is_keyed_by_the_sdist_the_recipe_and_this_python(tmp_path, monkeypatch):
    monkeypatch.setenv("BATLOC_SIMGRID_CACHE", str(tmp_path))
    wheel = sb.cached_wheel()
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert wheel.parent == tmp_path / f"{sb.SDIST_SHA256[:16]}-{sb.recipe_hash()}"
    assert wheel.name.startswith(f"simgrid-4.1-{impl}-{impl}") and wheel.name.endswith(".whl")
    monkeypatch.delenv("BATLOC_SIMGRID_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert sb.cached_wheel().parent.parent == tmp_path / "xdg" / "batloc" / "simgrid"


def test_the_packed_wheel_is_one_pip_installs_with_a_true_record(tmp_path):
    lib, src = tmp_path / "lib", tmp_path / "src"
    lib.mkdir()
    src.mkdir()
    (lib / f"simgrid{sysconfig.get_config_var('EXT_SUFFIX')}").write_bytes(b"module")
    (lib / "libsimgrid.so.4.1").write_bytes(b"library")
    (src / "COPYING").write_text("licence")
    wheel = tmp_path / "out" / f"simgrid-4.1-{sb.wheel_tag()}.whl"
    sb.pack(lib, src, wheel)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        record = list(csv.reader(io.StringIO(z.read("simgrid-4.1.dist-info/RECORD").decode())))
        for name, digest, size in record:
            if name.endswith("RECORD"):
                continue
            data = z.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
        assert "Requires-Dist: pybind11>=2.4" in z.read("simgrid-4.1.dist-info/METADATA").decode()
    assert {r[0] for r in record} == names
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           "--disable-pip-version-check", "--target", str(target), str(wheel)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (target / "libsimgrid.so.4.1").read_bytes() == b"library"
    assert (target / "simgrid-4.1.dist-info" / "licenses" / "COPYING").read_text() == "licence"
