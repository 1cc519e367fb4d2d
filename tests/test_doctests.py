"""The examples in the docstrings of every dpkit module run and print what they show (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The packages the distribution installs. The folders at the repository root are mapped into the dpkit namespace
#: by package-dir, and an editable install does not show them under ``dpkit.__path__``, so each is walked itself.
PACKAGES = tuple(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])

#: Examples there were when this test was written: a module that stops being found fails the count.
EXAMPLES_AT_LEAST = 33
MODULES_WITH_EXAMPLES = {
    "dpkit",
    "dpkit.facade",
    "dpkit.accountant",
    "dpkit.accountant.calibration",
    "dpkit.accountant.gdp",
    "dpkit.accountant.rlsvi",
    "dpkit.accountant.sensitivity",
    "dpkit.accountant.tree",
    "dpkit.accountant.tree_counts",
    "dpkit.audits.attacks",
    "dpkit.audits.claims",
    "dpkit.audits.shapes",
    "dpkit.reports.render",
}


def _modules() -> list[str]:
    """Every module of the installed dpkit package, by dotted name (pkgutil.walk_packages over each package)."""
    names = set(PACKAGES)
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names.update(info.name for info in pkgutil.walk_packages(path, prefix=f"{package}."))
    return sorted(names)


def _examples(module: ModuleType) -> list[doctest.DocTest]:
    """The docstring tests of the module itself (not of what it imports), those with at least one example."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module.__name__) if t.examples]


MODULES = _modules()
EXAMPLES = {name: _examples(importlib.import_module(name)) for name in MODULES}
WITH_EXAMPLES = sorted(name for name, tests in EXAMPLES.items() if tests)


def test_every_package_and_module_is_walked() -> None:
    assert "dpkit" in PACKAGES and "dpkit.accountant" in PACKAGES
    for package in PACKAGES:
        # a folder of the package holding a module the walk did not find would mean a package missing from PACKAGES
        folder = Path(importlib.import_module(package).__file__ or "").parent
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            assert name in MODULES, name


def test_the_examples_are_found() -> None:
    """The collection cannot silently lose modules or examples."""
    total = sum(len(t.examples) for tests in EXAMPLES.values() for t in tests)
    assert total >= EXAMPLES_AT_LEAST, f"{total} docstring examples found, {EXAMPLES_AT_LEAST} expected at least"
    assert set(WITH_EXAMPLES) >= MODULES_WITH_EXAMPLES, sorted(MODULES_WITH_EXAMPLES - set(WITH_EXAMPLES))


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(importlib.import_module(name)):  # fresh tests: a run clears the globals of its test
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output above)"
