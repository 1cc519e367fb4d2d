"""The examples in the docstrings of every dpkit module run and print what they show (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

#: The packages of the dpkit namespace (folders mapped into it by package-dir: walked one by one, since an
#: editable install does not show them under dpkit.__path__).
PACKAGES = ("dpkit", "dpkit.accountant", "dpkit.algorithms", "dpkit.audits", "dpkit.reports")


def _modules() -> list[str]:
    names = set(PACKAGES)
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names.update(info.name for info in pkgutil.walk_packages(path, prefix=f"{package}."))
    return sorted(names)


def _examples(module: ModuleType) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module.__name__) if t.examples and t.name.startswith(module.__name__)]


MODULES = _modules()
WITH_EXAMPLES = [m for m in MODULES if _examples(importlib.import_module(m))]


def test_the_examples_are_found() -> None:
    """The collection cannot silently lose modules: at least the 33 examples there were when this test was written."""
    total = sum(len(t.examples) for m in WITH_EXAMPLES for t in _examples(importlib.import_module(m)))
    assert total >= 33, total
    assert {"dpkit", "dpkit.accountant", "dpkit.accountant.tree", "dpkit.audits.attacks"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output above)"
