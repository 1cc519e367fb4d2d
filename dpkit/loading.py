"""Load user code named on the command line as ``FILE.py:NAME``.

Functions are wrapped in :class:`FileFunction`, which stores only the path and the name and
re-imports the file on first use: it pickles, so process pools and Dask workers can run it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from .user_code import CALLS, USER_FILES, UserCodeError, accepts, defined, user_frames

__all__ = [
    "FileFunction",
    "load_object",
    "parse_reference",
    "read_text_file",
    "naming_file",
    "parse_data",
    "shown",
    "MAX_FILE_BYTES",
    "MAX_NESTING",
]

#: The largest ledger or config file read (bytes); more is refused before it is read.
MAX_FILE_BYTES = 10 * 1024 * 1024
#: The deepest nesting of lists/tables/objects accepted in a JSON or TOML file.
MAX_NESTING = 64


def read_text_file(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``, or a ``ValueError`` naming it (``what`` says which file).

    At most ``limit`` bytes are read: a larger file, or an endless one (``/dev/zero``, a FIFO), is
    refused without reading it all; a binary file is refused as "not UTF-8 text".
    """
    p = Path(path)
    try:
        info = p.stat()
    except OSError as err:
        raise ValueError(f"cannot read {what} {str(p)!r}: {err.strerror or err}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{what} {str(p)!r} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{what} {str(p)!r} is not a regular file")
    if info.st_size > limit:
        raise ValueError(f"{what} {str(p)!r} is larger than the limit of {limit:,} bytes")
    try:
        with open(p, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as err:
        raise ValueError(f"cannot read {what} {str(p)!r}: {err.strerror or err}") from None
    if len(raw) > limit:
        raise ValueError(f"{what} {str(p)!r} is larger than the limit of {limit:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} {str(p)!r} is not UTF-8 text (byte {err.start})") from None
    if "\x00" in text:
        raise ValueError(f"{what} {str(p)!r} is not text (it holds NUL bytes)")
    return text


@contextlib.contextmanager
def naming_file(path: str | Path, what: str) -> Iterator[None]:
    """Make every ``ValueError`` raised inside name the file it is about: one that does not name ``path`` already
    is raised again as ``WHAT 'PATH': MESSAGE`` (``dpkit ledger FILE`` on a JSON list: ``ledger or event file
    'list.json': an event must be a JSON object, got [1, 2]``).

    Args:
        path: The file being read, as the user gave it.
        what: What the file is, in words (``"event file"``).

    Yields:
        None, once: the body of the ``with`` block runs there.

    Raises:
        ValueError: The error raised inside, naming the file.

    Examples:
        >>> with naming_file("list.json", "event file"):
        ...     raise ValueError("an event must be a JSON object, got [1, 2]")
        Traceback (most recent call last):
        ...
        ValueError: event file 'list.json': an event must be a JSON object, got [1, 2]
    """
    try:
        yield
    except ValueError as err:
        if repr(str(path)) in str(err):
            raise
        raise ValueError(f"{what} {str(path)!r}: {err}") from None


#: The longest repr of a value that an error message shows (the rest is cut, marked by …).
SHOWN_CHARS = 120


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (a file's bad value may be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_BRACKETS = re.compile(r"[^\[\]{}]+")
#: A TOML key of dotted parts (bare or quoted), e.g. ``a.b."c d"``; linear to scan (no nested repetition).
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_DOTTED = re.compile(rf"{_PART}(?:[ \t]*\.[ \t]*{_PART})*")
_QUOTED = re.compile(r""""[^"\n]*"|'[^'\n]*'""")


def _too_deep(text: str, limit: int, *, toml: bool) -> bool:
    """Whether JSON or TOML ``text`` may nest deeper than ``limit`` (an upper bound: brackets and braces in
    strings count too, and for TOML each dotted key ``a.b.c`` counts its depth)."""
    depth = 0
    for c in _BRACKETS.sub("", text):  # the brackets only (removed at C speed)
        if c in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(depth - 1, 0)
    if toml and text.count(".") > limit:  # a.b.c… = 1 nests one table per dot (tomllib is quadratic in it)
        for match in _DOTTED.finditer(text):
            key = match.group()
            if len(key) > 2 * limit and key.count(".") > limit and _QUOTED.sub("", key).count(".") > limit:
                return True
    return False


def _nesting(data: object) -> int:
    """The nesting depth of parsed data (lists and tables), counted without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def parse_data(text: str, *, toml: bool, what: str, limit: int = MAX_NESTING) -> object:
    """Parse JSON or TOML ``text``; deeper nesting than ``limit`` and syntax errors are one ``ValueError``.

    The depth is bounded before parsing (so no parser recurses or crawls through a deep file) and
    checked exactly after it.
    """
    kind = "TOML" if toml else "JSON"
    too_deep = f"{what} nests lists/tables deeper than {limit} levels"
    if _too_deep(text, limit, toml=toml):
        raise ValueError(too_deep)
    try:
        data = tomllib.loads(text) if toml else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{what} is not valid {kind}: {err}") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(too_deep) from None
    if _nesting(data) > limit:
        raise ValueError(too_deep)
    return data


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
