"""The hand-written Brent root-finder against SciPy's ``brentq`` (the peer it reproduces)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from tiers import examples

from dpkit.accountant.gdp import gdp_delta
from dpkit.accountant.numerics import brent_root, feasible_root


def _cubic(c: float, s: float):
    return lambda x: s * ((x - c) ** 3 + 0.5 * (x - c))


@settings(max_examples=examples(300), deadline=None)
@given(
    c=st.floats(-50.0, 50.0),
    s=st.sampled_from([1.0, -1.0, 1e-8, 3e5]),
    left=st.floats(0.01, 100.0),
    right=st.floats(0.01, 100.0),
    xtol=st.sampled_from([1e-15, 1e-12, 1e-6]),
)
def test_brent_root_is_scipys_brentq_to_the_bit(c: float, s: float, left: float, right: float, xtol: float) -> None:
    f = _cubic(c, s)
    a, b = c - left, c + right
    ours = brent_root(f, a, b, xtol=xtol, rtol=4 * 2.0**-52)
    theirs = optimize.brentq(f, a, b, xtol=xtol, rtol=4 * 2.0**-52, maxiter=200)
    assert ours == theirs


@settings(max_examples=examples(100), deadline=None)
@given(mu=st.floats(0.05, 20.0), log_delta=st.floats(-40.0, -1.0))
def test_brent_root_on_the_gdp_curve_matches_brentq(mu: float, log_delta: float) -> None:
    """The function the accountant actually solves: log δ_μ(ε) = target, in ε."""
    target = log_delta

    def g(eps: float) -> float:
        d = gdp_delta(mu, eps)
        return (math.log(d) if d > 0 else -math.inf) - target

    lo, hi = 1e-6, mu * mu / 2 + 12 * mu + 10
    if not (g(lo) > 0 and g(hi) < 0):
        return
    ours = brent_root(g, lo, hi, xtol=1e-15 * hi, rtol=4 * 2.0**-52)
    assert ours == optimize.brentq(g, lo, hi, xtol=1e-15 * hi, rtol=4 * 2.0**-52, maxiter=200)


def test_brent_root_refuses_a_bracket_without_a_sign_change() -> None:
    with pytest.raises(ArithmeticError, match="same sign"):
        brent_root(lambda x: x * x + 1.0, -1.0, 1.0, xtol=1e-12, rtol=1e-15)


def test_brent_root_endpoint_roots() -> None:
    assert brent_root(lambda x: x, 0.0, 1.0, xtol=1e-12, rtol=1e-15) == 0.0
    assert brent_root(lambda x: x - 1.0, 0.0, 1.0, xtol=1e-12, rtol=1e-15) == 1.0


@settings(max_examples=examples(200), deadline=None)
@given(root=st.floats(-10.0, 10.0), ok=st.floats(0.1, 30.0), bad=st.floats(0.1, 30.0))
def test_feasible_root_stays_on_the_feasible_side(root: float, ok: float, bad: float) -> None:
    g = lambda x: x - root  # noqa: E731  (feasible below the root)
    x = feasible_root(g, root - ok, root + bad)
    assert g(x) <= 0.0
    assert root - x <= 1e-13 * max(1.0, abs(root) + 30.0)
