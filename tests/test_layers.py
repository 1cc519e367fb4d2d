"""The layout rules import-linter does not check (``make lint-imports`` checks the layers and the cycles): no module of
the packages imports another module's private name; a module longer than :data:`MAX_LINES` is reported as a warning
(a module is cut where its concerns end, not at a line count)."""

from __future__ import annotations

import ast
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]

#: The length past which a module is worth a second look (a warning, not a failure: split by concern, not by count).
MAX_LINES = 800


def _folder(package: str) -> Path:
    """The folder of an installed package (``package-dir`` maps the root folders into ``dpkit.*``)."""
    mapped = SETUPTOOLS["package-dir"]
    parent = max((p for p in mapped if package == p or package.startswith(p + ".")), key=len)
    return ROOT / mapped[parent] / Path(*package[len(parent) :].split(".")[1:])


def _modules() -> dict[str, Path]:
    """Every module of the distribution by dotted name (a package by its own name: its ``__init__.py``)."""
    out: dict[str, Path] = {}
    for package in SETUPTOOLS["packages"]:
        for path in sorted(_folder(package).glob("*.py")):
            out[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return out


MODULES = _modules()


def _imported_from(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of the module an ``from … import`` statement of ``module`` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _private_imports(module: str, path: Path) -> list[str]:
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # imports inside functions too
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _imported_from(module, path, node)
        if source.split(".")[0] != "dpkit" or source == module:
            continue
        found += [
            f"{shown}:{node.lineno}: {source}.{alias.name}"
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__")
        ]
    return found


def test_the_walk_finds_every_package() -> None:
    assert {"dpkit.cli", "dpkit.accountant.accountants", "dpkit.audits.engine", "dpkit.reports.config"} <= set(MODULES)
    assert all(path.is_file() for path in MODULES.values())


def test_the_private_import_check_can_fail(tmp_path: Path) -> None:
    """The check sees relative, absolute and function-level imports of a private name, and lets a module's own do."""
    path = tmp_path / "module.py"
    path.write_text(
        "from .gdp import _gdp_delta\nfrom dpkit.audits.rl import ok\n"
        "def f():\n    from dpkit.audits.engine import _fit\n    from . import _own\n",
        encoding="utf-8",
    )
    found = _private_imports("dpkit.accountant.module", path)
    assert [f.split(": ")[1] for f in found] == [
        "dpkit.accountant.gdp._gdp_delta",
        "dpkit.audits.engine._fit",
        "dpkit.accountant._own",
    ]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_another_modules_private_name(module: str) -> None:
    """A private name stays in its module: make it public where it is defined, or move the caller."""
    assert _private_imports(module, MODULES[module]) == []


def test_a_module_longer_than_800_lines_is_reported() -> None:
    """Long modules are listed in pytest's warnings summary: a prompt to look for a seam, never a failure."""
    lengths = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert lengths, "no module found"
    too_long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    if too_long:
        warnings.warn(f"modules over {MAX_LINES} lines (look for a seam between concerns): {too_long}", stacklevel=1)
