"""The package layout, which pyproject.toml cannot say: the repository's root *is* the package batloc.

Its folders are the subpackages of one import namespace, ``batloc``, so they
never collide with pybatsim's own top-level ``schedulers`` package, and a
checkout runs as is (``pybatsim schedulers/lea.py``). Subpackages are found,
not listed; the data files the commands read (experiment descriptions,
platform files) ship with them. Everything else (metadata, dependencies,
scripts) is in pyproject.toml.
"""

import ast
import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Folders of the checkout that are not part of batloc (tests/oracle_planner is a
# package of the tests; build/ is setuptools' own output).
NOT_SHIPPED = ["tests", "tests.*", "benchmarks", "benchmarks.*", "build", "build.*", "scripts", "nix", "docs"]


def version():
    """``__version__`` of __init__.py, read without importing batloc."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__init__.py")) as fh:
        for node in ast.parse(fh.read()).body:
            if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__version__"]:
                return node.value.value
    raise RuntimeError("__init__.py has no __version__")


class BuildPy(build_py):
    """This file sits in the package's folder, but is no module of it."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if (m[0], m[1]) != ("batloc", "setup")]


setup(
    version=version(),
    package_dir={"batloc": "."},
    packages=["batloc"] + [f"batloc.{p}" for p in find_packages(".", exclude=NOT_SHIPPED)],
    package_data={
        # robin, `batloc study paper` and the experiments' own sweeps read these from the package
        "batloc": ["experiments/*.yaml", "experiments/*.json", "experiments/*.xml", "experiments/*.sh"],
        "batloc.platforms": ["*.xml"],
    },
    cmdclass={"build_py": BuildPy},
)
