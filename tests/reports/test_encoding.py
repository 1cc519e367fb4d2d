"""The one JSON encoder: every result type, strict JSON, the same bytes wherever a number is printed."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.accountant import calibrate_sigma
from dpkit.reports.config import parse_config
from dpkit.reports.encoding import dumps, to_jsonable


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_floats_round_trip_and_non_finite_is_null(x: float) -> None:
    text = dumps({"x": x, "np": np.float64(x), "arr": np.array([x])})
    back = json.loads(text)
    expected = x if math.isfinite(x) else None
    assert back == {"x": expected, "np": expected, "arr": [expected]}


def test_numpy_scalars_tuples_and_nested_results() -> None:
    cal = calibrate_sigma(1.0, 1e-5)
    data = {"i": np.int64(3), "b": np.bool_(True), "t": (1, 2.5), "cal": cal}
    assert to_jsonable(data) == {"i": 3, "b": True, "t": [1, 2.5], "cal": to_jsonable(cal.to_dict())}


def test_dataclasses_and_pydantic_models() -> None:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: float
        y: tuple[int, ...]

    assert to_jsonable(Point(math.inf, (1, 2))) == {"x": None, "y": [1, 2]}
    config = parse_config({"algorithm": [{"name": "rlsvi", "episodes": 10, "delta": 1e-5}]})
    assert to_jsonable(config) == to_jsonable(config.to_dict())


def test_an_unknown_type_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="cannot encode a set"):
        dumps({"s": {1, 2}})
