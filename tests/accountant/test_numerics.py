"""The hand-written root-finders: Brent against SciPy's ``brentq`` (the peer it reproduces), the monotone bracketing and
feasible-root search against mpmath's roots."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from tiers import examples

from dpkit.accountant.gdp import gdp_delta
from dpkit.accountant.numerics import (
    bracket_monotone,
    brent_root,
    feasible_root,
    feasible_secant,
    monotone_feasible_root,
)


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


# -- the monotone root-finders the calibrations share: bracket from a guess, then the feasible end -------------------

#: Monotone functions with their roots by mpmath (50 digits), each with a guess, a first step and its direction.
MONOTONE = [
    pytest.param(lambda x: math.exp(x) - 3.0, "exp(x) - 3", 0.0, 0.25, True, id="exp"),
    pytest.param(lambda x: math.atan(x) - 1.2, "atan(x) - 1.2", -5.0, 0.2, True, id="atan-far-guess"),
    pytest.param(lambda x: 1.0 / (1.0 + x * x) - 0.3, "1/(1 + x^2) - 0.3", 0.2, 0.25, False, id="decreasing"),
    pytest.param(lambda x: x**3 + x - 1e-6, "x^3 + x - 1e-6", 40.0, 1.0, True, id="cubic-tiny-root"),
    pytest.param(lambda x: math.log1p(math.exp(x)) - 7.5, "log(1 + exp(x)) - 7.5", -30.0, 0.2, True, id="softplus"),
]


def _mp_root(expression: str, guess: float) -> float:
    import mpmath

    with mpmath.workdps(50):
        f = eval("lambda x: " + expression.replace("^", "**"), {**vars(mpmath)})  # noqa: S307 (the test's own text)
        return float(mpmath.findroot(f, guess))


@pytest.mark.parametrize(("g", "expression", "x0", "step", "increasing"), MONOTONE)
def test_bracket_monotone_brackets_the_root(g, expression: str, x0: float, step: float, increasing: bool) -> None:  # noqa: ANN001
    x, gx, y, gy = bracket_monotone(g, x0, increasing=increasing, step=step)
    assert (gx > 0.0) != (gy > 0.0) and gx == g(x) and gy == g(y)
    root = _mp_root(expression, (x + y) / 2)
    assert min(x, y) <= root <= max(x, y)
    # Brent's method on the bracket is SciPy's brentq to the bit, and mpmath's root to the doubles' precision
    lo, hi = min(x, y), max(x, y)
    ours = brent_root(g, lo, hi, xtol=1e-15, rtol=4 * 2.0**-52)
    assert ours == optimize.brentq(g, lo, hi, xtol=1e-15, rtol=4 * 2.0**-52, maxiter=200)
    assert ours == pytest.approx(root, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize(("g", "expression", "x0", "step", "increasing"), MONOTONE)
def test_monotone_feasible_root_is_feasible_and_close(
    g, expression: str, x0: float, step: float, increasing: bool
) -> None:  # noqa: ANN001, E501
    x = monotone_feasible_root(g, x0, increasing=increasing, step=step, xtol=1e-12)
    assert g(x) <= 0.0
    root = _mp_root(expression, x)
    a, _, b, _ = bracket_monotone(g, x0, increasing=increasing, step=step)
    assert abs(x - root) <= 4 * 1e-12 * max(1.0, abs(a), abs(b))  # feasible_root's xtol is relative to the bracket
    assert (x <= root) == increasing or x == root  # the feasible side of the root


def test_monotone_feasible_root_at_the_ends_of_the_range() -> None:
    # the root lies beyond x_max, where g is still feasible: that end is the answer
    assert monotone_feasible_root(lambda x: x - 10.0, 0.0, increasing=True, step=0.5, x_max=3.0) == 3.0
    # ... and beyond x_min, where g is not: nothing in range is feasible
    with pytest.raises(ArithmeticError, match="no feasible point"):
        monotone_feasible_root(lambda x: x + 10.0, 0.0, increasing=True, step=0.5, x_min=-3.0)
    # bracketing clipped at an end on the guess's side: x == y
    x, gx, y, gy = bracket_monotone(lambda x: x - 10.0, 0.0, increasing=True, step=0.5, x_max=3.0)
    assert x == y == 3.0 and gx == gy == -7.0


def test_bracket_monotone_gives_up_without_a_sign_change() -> None:
    with pytest.raises(ArithmeticError, match="no change of sign"):
        bracket_monotone(lambda x: 1.0, 0.0, increasing=True, step=1.0, maxiter=20)


@pytest.mark.parametrize(("g", "expression", "x0", "step", "increasing"), MONOTONE)
def test_feasible_secant_lands_in_the_band_below_the_target(
    g, expression: str, x0: float, step: float, increasing: bool
) -> None:  # noqa: ANN001, E501
    """Solving g(x) + t = t from near the root: a feasible point within the accepted band, beside mpmath's root."""
    a, _, b, _ = bracket_monotone(g, x0, increasing=increasing, step=step)
    root = _mp_root(expression, (a + b) / 2)
    target = 2.0  # f = g + target is monotone, and f(root) = target
    f = lambda x: g(x) + target  # noqa: E731
    sign = 1.0 if increasing else -1.0
    x, fx = feasible_secant(
        f,
        root + 0.05,
        target=target,
        aim=target * (1 - 2.5e-4),
        accept=target * (1 - 5e-4),
        slope=sign * 0.5,
        increasing=increasing,
        xtol=1e-12,
    )
    assert fx == f(x) and target * (1 - 5e-4) <= fx <= target
    assert (x <= root) == increasing  # on the feasible side of the root


def test_feasible_secant_walks_to_the_feasible_side() -> None:
    """A slope that points the wrong way (the secant steps go astray) still ends at a feasible point, by the walk."""
    calls: list[float] = []

    def f(x: float) -> float:
        calls.append(x)
        return x  # feasible below 1

    x, fx = feasible_secant(f, 5.0, target=1.0, aim=0.99, accept=0.98, slope=-1.0, increasing=True, xtol=1e-9)
    assert fx <= 1.0 and x == fx
    with pytest.raises(ArithmeticError, match="no feasible point"):
        feasible_secant(f, 5.0, target=1.0, aim=0.99, accept=0.98, slope=-1.0, increasing=True, xtol=1e-9, x_min=2.0)
