"""The one JSON encoder of dpkit: every result type as strict JSON.

``dpkit … --json``, ``report.json`` and the report job all go through :func:`to_jsonable`, so a
number prints the same wherever it appears: numpy scalars and arrays as Python numbers and lists,
tuples as lists, non-finite floats as ``null`` (strict JSON has no NaN or Infinity), and result
objects through their ``to_dict()`` (dataclasses without one through their fields, pydantic models
through ``model_dump``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["dumps", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """``value`` as strict JSON data: numpy values as Python ones, tuples as lists, non-finite floats as None.

    Result objects go through their ``to_dict()`` (dataclasses without one through their fields, pydantic models
    through ``model_dump``); strings, ``None`` and plain values pass.

    Args:
        value: Any result, number, array, mapping or sequence of them.

    Returns:
        Plain data :func:`json.dumps` writes as strict JSON.

    Raises:
        TypeError: If a value has no JSON form.
    """
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, (str, type(None))):
        return value
    if callable(getattr(value, "to_dict", None)):
        return to_jsonable(value.to_dict())
    if callable(getattr(value, "model_dump", None)):  # a pydantic model
        return to_jsonable(value.model_dump(mode="python"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    raise TypeError(f"cannot encode a {type(value).__name__} as JSON: {value!r}")


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as one strict JSON text (full float precision, UTF-8 characters kept when indented).

    Args:
        value: Anything :func:`to_jsonable` takes.
        indent: The indentation (None: one line, ASCII only).

    Returns:
        The JSON text.

    Raises:
        TypeError: If a value has no JSON form.
    """
    return json.dumps(to_jsonable(value), indent=indent, ensure_ascii=indent is None, allow_nan=False)
