"""Load user code named on the command line as ``FILE.py:NAME``.

Functions are wrapped in :class:`FileFunction`, which stores only the path and the name and
re-imports the file on first use: it pickles, so process pools and Dask workers can run it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .user_code import CALLS, USER_FILES, UserCodeError, accepts, defined, user_frames

__all__ = ["FileFunction", "load_object", "parse_reference"]

_MODULES: dict[str, ModuleType] = {}


def parse_reference(option: str, value: str) -> tuple[Path, str]:
    """Split ``FILE.py:NAME`` into (path, name).

    Args:
        option: The option that gave the value (``--target``), for the messages.
        value: ``FILE.py:NAME``.

    Returns:
        The file's path and the name in it.

    Raises:
        ValueError: ``value`` is not of the form ``FILE.py:NAME``, or NAME is not a Python name.

    Examples:
        >>> path, name = parse_reference("--target", "release.py:release")
        >>> str(path), name
        ('release.py', 'release')
        >>> parse_reference("--target", "release.py")
        Traceback (most recent call last):
        ...
        ValueError: --target must be FILE.py:NAME, got 'release.py'
    """
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
    # the resolved path: the frames of its code name it whatever the working directory is by then
    spec = importlib.util.spec_from_file_location(module_name, key)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {str(path)!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    USER_FILES[os.path.realpath(key)] = str(path)
    folder = str(path.resolve().parent)
    added = folder not in sys.path
    if added:  # its own folder on the path, so it imports its neighbours (last: it shadows no installed package)
        sys.path.append(folder)
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # the user's file failed to import: report it on one line, at its line
        del sys.modules[module_name]
        if added:
            sys.path.remove(folder)
        frames = user_frames(err)
        at = f" at {frames[-1][0]}:{frames[-1][1]}" if frames and not isinstance(err, SyntaxError) else ""
        raise ValueError(f"importing {str(path)!r} failed{at}: {type(err).__name__}: {err}") from None
    _MODULES[key] = module
    return module


def load_object(option: str, value: str) -> Any:
    """The object named by ``FILE.py:NAME``, the file imported once per process (a ValueError if it cannot be).

    Args:
        option: The option that gave the value (``--target``), for the messages.
        value: ``FILE.py:NAME``.

    Returns:
        The object the file defines under NAME.
    """
    path, name = parse_reference(option, value)
    module = _module(path)
    if not hasattr(module, name):
        raise ValueError(f"{option}: {str(path)!r} has no name {name!r}")
    return getattr(module, name)


class FileFunction:
    """A picklable reference to a function in a user's file (``FILE.py:NAME``, given as the option ``option``);
    calling it imports the file once per process.

    An exception the function raises becomes a :class:`UserCodeError` naming the file and line it was raised at and
    the call dpkit made (``call``, default: the option's, :data:`CALLS`); a call the function does not accept says
    the signature dpkit expected beside the one it has. Its ``__name__`` is the user's own ``FILE.py:NAME``.

    Args:
        option: The option that named the function (``--target``), for the messages.
        value: ``FILE.py:NAME``.
        call: How dpkit calls it (``release(dataset, rng, n)``).

    Raises:
        ValueError: The file cannot be imported, has no such name, or the name is not callable.
    """

    def __init__(self, option: str, value: str, *, call: str | None = None) -> None:
        self.option, self.value = option, value
        self.call = call if call is not None else CALLS.get(option, f"{parse_reference(option, value)[1]}(…)")
        self.__name__ = value
        if not callable(load_object(option, value)):
            raise ValueError(f"{option}: {value!r} is not callable")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self._function()
        try:
            return function(*args, **kwargs)
        except Exception as err:
            raise UserCodeError(self._said(err, function, args, kwargs)) from None

    def _said(self, err: Exception, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """What ``err``, raised calling ``function(*args, **kwargs)``, says in one line."""
        if isinstance(err, UserCodeError):  # raised by another of the user's functions it called through dpkit
            return str(err)
        called = f"{self.option} {self.value}, which dpkit calls as {self.call}"
        frames = user_frames(err)
        if frames:
            file, line, name = frames[-1]
            return f"{file}:{line} ({name}): {type(err).__name__}: {err} — in {called}"
        if isinstance(err, TypeError) and not accepts(function, args, kwargs):
            return f"{self.option} {self.value} must accept dpkit's call {self.call}: {err}{defined(function)}"
        return f"{type(err).__name__}: {err} — in {called}"

    def _function(self) -> Any:
        """The function, loaded once per process and kept (resolving the file's path again costs a call about 0.2 ms:
        an audit calls an agent factory once per run)."""
        function = self.__dict__.get("_loaded")
        if function is None:
            function = self._loaded = load_object(self.option, self.value)
        return function

    def __getstate__(self) -> dict[str, Any]:
        # the reference travels, not the function: another process loads the file itself
        return {k: v for k, v in self.__dict__.items() if k != "_loaded"}

    def __repr__(self) -> str:
        return self.value
