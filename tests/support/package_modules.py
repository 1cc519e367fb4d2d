"""The packages dpkit installs (pyproject.toml's ``[tool.setuptools] packages``) and every module in them, for the
tests that read the whole code base (vocabularies, enum comparisons and annotations)."""

from __future__ import annotations

import importlib
import pkgutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The installed packages, by dotted name.
PACKAGES: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
)


def package_modules() -> list[str]:
    """Every module of the installed packages, by dotted name, sorted."""
    names = set(PACKAGES)
    for package in PACKAGES:
        names.update(
            info.name for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}.")
        )
    return sorted(names)
