"""Pydantic validation errors as dpkit's one-line messages, naming the key (``algorithm[1].audit.runs``) and the
value: :func:`first_error` picks the error a user should see first, :func:`pydantic_message` words one, and a
validator that checks several keys raises :class:`BlamedKeyError` to blame one of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dpkit.algorithms.limits import above_limit
from dpkit.data_files import shown

__all__ = ["BlamedKeyError", "first_error", "pydantic_message"]


class BlamedKeyError(ValueError):
    """A check across keys that blames one key (``key``, relative to the table that raised it): raised inside a
    validator, :func:`pydantic_message` names that key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


#: What each kind of pydantic error says about a key (the value is appended).
_MESSAGES = {
    "missing": "is required",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a finite number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dict_type": "must be a table",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
}


def _key(loc: tuple[int | str, ...]) -> str:
    """``("algorithm", 1, "audit", "runs")`` → ``algorithm[1].audit.runs``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: The members of a union pydantic names in an error's location (not keys of the file): an audit's position is a
#: name (str) or an index (constrained-int).
_UNION_TAGS = ("str", "constrained-int")


def first_error(err: ValidationError) -> str:
    """The message of the error a user should see first.

    An unknown key (often a typo of a missing one) comes first, and of a value that several types accept (an audit's
    position: a name or an index), the range error of its own type.

    Args:
        err: The pydantic validation error.

    Returns:
        One line naming the key and the value.
    """
    errors = err.errors(include_url=False)

    def rank(e: Any) -> tuple[bool, bool, bool]:  # a list its bad items emptied, and a value not a name: last
        return e["type"] != "extra_forbidden", e["type"] == "too_short", e["loc"][-1:] == ("str",)

    return pydantic_message(min(errors, key=rank))


def pydantic_message(error: Mapping[str, Any]) -> str:
    """One pydantic error as dpkit's one-line message, naming the key and the value.

    Args:
        error: One entry of ``ValidationError.errors()``.

    Returns:
        The message.
    """
    loc = tuple(p for p in error["loc"] if p not in ("function-before", "function-after", *_UNION_TAGS))
    kind, value = error["type"], error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), BlamedKeyError):
        blamed = ctx["error"]
        key = _key(loc + ((blamed.key,) if blamed.key else ()))
        text = str(blamed)
        return f"{key} {text}" if blamed.key or text.startswith("(") else f"{key}: {text}"
    key = _key(loc)
    if kind == "extra_forbidden":
        return f"unknown key {shown(key)}"
    if kind == "missing":
        return f"{key} is required"
    bound = next(iter(ctx.values()), None)
    if kind == "less_than_equal" and isinstance(value, int) and isinstance(bound, int) and not isinstance(value, bool):
        return above_limit(key, value, bound)  # a size above its stated limit
    if kind == "too_long":
        return f"{key} has {ctx.get('actual_length', '?'):,} entries, above the limit of {ctx.get('max_length')}"
    if kind in ("greater_than_equal", "greater_than", "less_than", "less_than_equal"):
        bound = next(iter(ctx.values()))
        op = {"greater_than_equal": ">=", "greater_than": ">", "less_than": "<", "less_than_equal": "<="}[kind]
        return f"{key} must be {op} {bound}, got {shown(value)}"
    if kind == "too_short":
        return f"{key} must not be empty, got {shown(value)}"
    if kind in ("literal_error", "enum"):  # a Literal's choices or a StrEnum's
        return f"{key} must be {ctx.get('expected', 'one of the choices')}, got {shown(value)}"
    if kind == "value_error":
        text = str(ctx.get("error", error["msg"]))
        return f"{key} {text}" if key else text  # a check of a whole model blames no key
    return f"{key} {_MESSAGES.get(kind, error['msg'].lower())}, got {shown(value)}"
