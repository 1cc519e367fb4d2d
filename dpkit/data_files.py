"""Read users' data files (ledgers, configs, events): bounded in size and nesting, every error naming the file.

A file is read whole only up to :data:`MAX_FILE_BYTES`, and JSON or TOML is parsed only up to
:data:`MAX_NESTING` levels; a bad value in an error message is cut to :data:`SHOWN_CHARS` characters.
"""

from __future__ import annotations

import contextlib
import json
import re
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["read_text_file", "naming_file", "parse_data", "shown", "MAX_FILE_BYTES", "MAX_NESTING", "SHOWN_CHARS"]

#: The largest ledger or config file read (bytes); more is refused before it is read.
MAX_FILE_BYTES = 10 * 1024 * 1024
#: The deepest nesting of lists/tables/objects accepted in a JSON or TOML file.
MAX_NESTING = 64


def read_text_file(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``, or a ``ValueError`` naming it.

    At most ``limit`` bytes are read: a larger file, or an endless one (``/dev/zero``, a FIFO), is
    refused without reading it all; a binary file is refused as "not UTF-8 text".

    Args:
        path: The file to read.
        what: What the file is, in words, for the messages (``"ledger file"``).
        limit: The most bytes accepted.

    Returns:
        The file's text.

    Raises:
        ValueError: The file cannot be read, is not a regular file, is larger than ``limit`` or is not UTF-8 text.
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
    """``repr(value)`` for an error message, cut to ``limit`` characters (a file's bad value may be huge).

    Args:
        value: The value to show.
        limit: The most characters shown (the last one a ``…`` where the repr is cut).

    Returns:
        The repr, cut.

    Examples:
        >>> shown("abcdefgh", limit=6)
        "'abcd…"
    """
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

    Args:
        text: The text to parse.
        toml: Whether it is TOML (else JSON).
        what: What the text is, in words, for the messages.
        limit: The deepest nesting of lists and tables accepted.

    Returns:
        The parsed data.

    Raises:
        ValueError: The text is not valid JSON or TOML, or nests deeper than ``limit``.
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
