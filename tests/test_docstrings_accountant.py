"""Every public function and method of the accountant has Google-style sections, and every module a short docstring.

The acceptance check of issue 44's docstring point for :mod:`dpkit.accountant`: a public function or method (a name
in the module's ``__all__`` or not starting with ``_``, defined in that module) with parameters besides ``self`` or
``cls`` has an ``Args:`` section naming each of them, one that returns something (an annotation other than ``None``)
has ``Returns:`` (or ``Yields:``), and no module docstring runs longer than 15 lines.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import dpkit.accountant

MAX_MODULE_LINES = 15
PACKAGE = "dpkit.accountant"


def _module_names() -> list[str]:
    """The accountant package and every module in it, by dotted name."""
    path = dpkit.accountant.__path__
    return sorted({PACKAGE, *(info.name for info in pkgutil.walk_packages(path, prefix=f"{PACKAGE}."))})


MODULES = _module_names()

#: Public methods still without their sections, by module (none now: declarations.py was split, its ledgers moved to
#: algorithm_ledgers.py). The check fails for any other name lacking its sections, and when one of these gets them.
PENDING: dict[str, frozenset[str]] = {}


def _is_public(name: str, module: ModuleType) -> bool:
    return name in getattr(module, "__all__", ()) or not name.startswith("_")


def _callables(module: ModuleType) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The public functions defined in the module and the public methods of the public classes defined there."""
    for name, obj in vars(module).items():
        if not _is_public(name, module) or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj) or (callable(obj) and inspect.isfunction(inspect.unwrap(obj))):
            yield name, obj  # a function, or one wrapped by a decorator such as functools.lru_cache
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, (classmethod, staticmethod)):
                    member = member.__func__
                if inspect.isfunction(member) and member.__qualname__.startswith(obj.__qualname__ + "."):
                    yield f"{name}.{attr}", member


def _section(doc: str, title: str) -> list[str] | None:
    """The lines of a Google-style section (``title:`` on a line of its own), or None without one."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == f"{title}:":
            indent = len(line) - len(line.lstrip())
            body = []
            for following in lines[i + 1 :]:
                if following.strip() and len(following) - len(following.lstrip()) <= indent:
                    break
                body.append(following)
            return body
    return None


_ENTRY = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:")
#: How a starred parameter may be named in ``Args:`` besides its own name with its stars.
_STARRED = {
    inspect.Parameter.VAR_POSITIONAL: ("*", "*args"),
    inspect.Parameter.VAR_KEYWORD: ("**", "**kwargs", "**options"),
}


def _names_for(parameter: inspect.Parameter) -> set[str]:
    """The names under which ``Args:`` may describe a parameter: ``sigma``; ``*values``; ``**options``."""
    stars = _STARRED.get(parameter.kind)
    if stars is None:
        return {parameter.name}
    return {f"{stars[0]}{parameter.name}", *stars[1:]}


def problems(function: Callable[..., Any]) -> list[str]:
    """What the docstring of ``function`` lacks: parameters missing from ``Args:``, a missing ``Returns:``."""
    doc = inspect.cleandoc(function.__doc__ or "")
    found: list[str] = []
    if not doc.strip():
        return ["no docstring"]
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.name not in {"self", "cls"}]
    if parameters:
        section = _section(doc, "Args")
        if section is None:
            found.append("no Args: section")
        else:
            named = set()
            for line in section:
                match = _ENTRY.match(line)
                if match:
                    named.add(match.group(1))
            for p in parameters:
                if not _names_for(p) & named:
                    found.append(f"parameter {p.name!r} not in Args:")
    annotation = signature.return_annotation
    if annotation not in (None, "None") and _section(doc, "Returns") is None and _section(doc, "Yields") is None:
        found.append("no Returns: section")
    return found


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_is_short(name: str) -> None:
    module = importlib.import_module(name)
    doc = inspect.cleandoc(module.__doc__ or "")
    assert doc.strip(), f"{name} has no module docstring"
    lines = len(doc.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name}'s docstring runs {lines} lines (at most {MAX_MODULE_LINES})"


@pytest.mark.parametrize("name", MODULES)
def test_public_callables_have_sections(name: str) -> None:
    module = importlib.import_module(name)
    missing = {qualname: found for qualname, function in _callables(module) if (found := problems(function))}
    pending = PENDING.get(name, frozenset())
    unexpected = {qualname: found for qualname, found in missing.items() if qualname not in pending}
    assert not unexpected, f"{name}: {unexpected}"
    assert set(missing) == pending, f"{name}: now documented, drop from PENDING: {sorted(pending - set(missing))}"


def test_every_module_is_checked() -> None:
    folder = Path(dpkit.accountant.__file__ or "").parent
    for path in folder.glob("*.py"):
        assert (PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}") in MODULES, path


# the check can fail: synthetic functions with and without the sections


def _bare(sigma: float, *, delta: float) -> float:
    """The ε of a release: an essay without sections."""
    return sigma + delta


def _half(sigma: float, *, delta: float) -> float:
    """The ε of a release.

    Args:
        sigma: the noise scale.

    Returns:
        The ε.
    """
    return sigma + delta


def _full(sigma: float, *values: float, delta: float = 0.0, **options: float) -> float:
    """The ε of a release.

    Args:
        sigma: the noise scale.
        *values: more values.
        delta (float): the δ.
        **options: more options.

    Returns:
        The ε.
    """
    return sigma + delta


def _silent(sigma: float) -> None:
    """Nothing back.

    Args:
        sigma: the noise scale.
    """


def test_the_check_can_fail() -> None:
    assert problems(_bare) == ["no Args: section", "no Returns: section"]
    assert problems(_half) == ["parameter 'delta' not in Args:"]
    assert problems(_full) == []
    assert problems(_silent) == []
    assert problems(lambda: None) == ["no docstring"]
