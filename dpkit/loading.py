"""Load user code named on the command line as ``FILE.py:NAME``.

Functions are wrapped in :class:`FileFunction`, which stores only the path and the name and
re-imports the file on first use: it pickles, so process pools and Dask workers can run it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["FileFunction", "load_object", "parse_reference"]

_MODULES: dict[str, ModuleType] = {}


def parse_reference(option: str, value: str) -> tuple[Path, str]:
    """Split ``FILE.py:NAME`` into (path, name), or raise a ValueError naming ``option``."""
    path, sep, name = str(value).rpartition(":")
    if not sep or not path or not name:
        raise ValueError(f"{option} must be FILE.py:NAME, got {value!r}")
    if not name.isidentifier():
        raise ValueError(f"{option}: {name!r} is not a Python name")
    return Path(path), name


def _module(path: Path) -> ModuleType:
    key = str(path.resolve())
    if key in _MODULES:
        return _MODULES[key]
    if not path.is_file():
        raise ValueError(f"no such file: {str(path)!r}")
    module_name = f"_dpkit_user_{abs(hash(key))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {str(path)!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # the user's file failed to import: report it on one line
        del sys.modules[module_name]
        raise ValueError(f"importing {str(path)!r} failed: {type(err).__name__}: {err}") from None
    _MODULES[key] = module
    return module


def load_object(option: str, value: str) -> Any:
    """The object named by ``FILE.py:NAME``."""
    path, name = parse_reference(option, value)
    module = _module(path)
    if not hasattr(module, name):
        raise ValueError(f"{option}: {str(path)!r} has no name {name!r}")
    return getattr(module, name)


class FileFunction:
    """A picklable reference to a function in a file; calling it imports the file once per process."""

    def __init__(self, option: str, value: str) -> None:
        self.option, self.value = option, value
        if not callable(load_object(option, value)):
            raise ValueError(f"{option}: {value!r} is not callable")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return load_object(self.option, self.value)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FileFunction({self.value!r})"
