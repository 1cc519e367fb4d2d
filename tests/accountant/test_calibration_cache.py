"""calibrate_sigma's cache (accountant/calibration.py): a target calibrated again is answered from the cache with the
very σ the calibration computes, and only its arithmetic is cached (its checks and warnings are every call's)."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import calibrate_sigma
from dpkit.accountant import calibration as cal_module
from dpkit.accountant.validation import SuspiciousTargetWarning

METHODS = ("exact", "rdp", "zcdp", "classic")


def _uncached(epsilon: float, delta: float, sensitivity: float, compositions: int, method: str) -> tuple:
    return cal_module._calibrated(epsilon, delta, sensitivity, compositions, method, None, {})


@settings(max_examples=examples(60), deadline=None)
@given(
    epsilon=st.floats(0.05, 20.0),
    delta=st.floats(-25.0, math.log(0.1)).map(math.exp),
    sensitivity=st.floats(0.01, 100.0),
    compositions=st.integers(1, 5_000),
    method=st.sampled_from(METHODS),
)
def test_cached_sigma_is_the_uncached_one_bit_for_bit(
    epsilon: float, delta: float, sensitivity: float, compositions: int, method: str
) -> None:
    try:
        expected = _uncached(epsilon, delta, sensitivity, compositions, method)
    except ValueError:  # a target the method refuses is refused by the cached path too, every time
        for _ in range(2):
            with pytest.raises(ValueError):
                calibrate_sigma(epsilon, delta, sensitivity=sensitivity, compositions=compositions, method=method)
        return
    first = calibrate_sigma(epsilon, delta, sensitivity=sensitivity, compositions=compositions, method=method)
    again = calibrate_sigma(epsilon, delta, sensitivity=sensitivity, compositions=compositions, method=method)
    assert first == again
    assert (first.sigma, first.epsilon, first.method, first.conversion) == expected
    assert first.epsilon <= epsilon  # sound: the cache never changes what σ is


def test_a_second_call_is_a_cache_hit() -> None:
    cal_module._cached_calibration.cache_clear()
    calibrate_sigma(1.3, 1e-6, sensitivity=2.0, compositions=17)
    calibrate_sigma(1.3, 1e-6, sensitivity=2.0, compositions=17.0)  # an integral float: the same checked target
    info = cal_module._cached_calibration.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_each_call_keeps_its_own_arguments_in_the_answer() -> None:
    a = calibrate_sigma(1.0, 1e-5, sensitivity=3)
    b = calibrate_sigma(1.0, 1e-5, sensitivity=3.0)
    assert a == b and type(a.sensitivity) is float and type(a.compositions) is int


def test_unhashable_options_are_computed_not_cached() -> None:
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    a = calibrate_sigma(2.0, 1e-5, method="rdp", orders=orders)
    b = calibrate_sigma(2.0, 1e-5, method="rdp", orders=tuple(orders))
    assert a == b


def test_suspicious_targets_warn_at_every_call() -> None:
    for _ in range(2):
        with pytest.warns(SuspiciousTargetWarning):
            calibrate_sigma(1e-4, 1e-3)


def test_bad_input_is_refused_at_every_call() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SuspiciousTargetWarning)
        for _ in range(2):
            with pytest.raises(ValueError, match="method"):
                calibrate_sigma(1.0, 1e-5, method="nope")
