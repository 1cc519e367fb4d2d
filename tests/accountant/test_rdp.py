"""RDP curves and their conversion to (ε, δ): rdp_epsilon, rdp_delta, linear_rdp_*.

Cross-checked against dp-accounting's ``compute_epsilon`` / ``compute_delta`` on random
curves and against 50-digit mpmath evaluations of Mironov's and the improved conversion.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import references as ref
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import DEFAULT_ORDERS, linear_rdp_delta, linear_rdp_epsilon, rdp_delta, rdp_epsilon

DP_ORDERS = np.asarray(dp_rdp.DEFAULT_RDP_ORDERS, dtype=float)

delta_st = st.floats(-60.0, math.log(0.5)).map(math.exp)
rho_st = st.floats(-18.0, math.log(1e3)).map(math.exp)  # 1.5e-8 … 1000
order_st = st.floats(1.02, 2000.0)


@st.composite
def curves(draw: st.DrawFn, min_order: float = 1.02, min_value: float = 0.0) -> tuple[list[float], list[float]]:
    n = draw(st.integers(1, 12))
    orders = draw(st.lists(st.floats(min_order, 2000.0), min_size=n, max_size=n))
    # (dp-accounting's compute_delta crashes on 0 < ε_R < 1.1e-16: log1p(-exp(-r)) = log1p(-1),
    # so tiny positive values are lifted to 1e-12.)
    value = st.floats(min_value, 200.0).map(lambda v: v if v == 0.0 or v >= 1e-12 else 1e-12)
    values = draw(st.lists(value, min_size=n, max_size=n))
    return orders, values


# ----------------------------------------------------------------------------------------
# Explicit curves vs dp-accounting
# ----------------------------------------------------------------------------------------


@settings(max_examples=examples(300))
@given(curve=curves(), delta=delta_st)
@example(curve=([2.0, 2.0, 2.0, 2.0, 2.0, 5.0, 2.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.125, 0.0]), delta=0.1353352832366127)
def test_rdp_epsilon_improved_matches_dp_accounting(curve: tuple[list[float], list[float]], delta: float) -> None:
    orders, values = curve
    theirs_eps, theirs_order = dp_rdp.compute_epsilon(orders, values, delta)
    ours = rdp_epsilon(orders, values, delta, conversion="improved")
    assert ours.conversion == "improved" and ours.delta == delta
    assert ours.epsilon >= theirs_eps  # rounded up
    assert ours.epsilon == pytest.approx(theirs_eps, rel=1e-12, abs=1e-12)
    if ours.order != theirs_order:
        # Only a tie (to rounding) may pick a different order. An order may repeat in the curve (a composition of
        # two curves): the best value at it is its smallest.
        at_order = min(v for a, v in zip(orders, values, strict=True) if a == ours.order)
        at_ours, _ = dp_rdp.compute_epsilon([ours.order], [at_order], delta)
        assert at_ours == pytest.approx(theirs_eps, rel=1e-12, abs=1e-12)


@settings(max_examples=examples(200))
@given(curve=curves(), epsilon=st.floats(0.01, 100.0))
def test_rdp_delta_improved_matches_mpmath(curve: tuple[list[float], list[float]], epsilon: float) -> None:
    orders, values = curve
    ours = rdp_delta(orders, values, epsilon, conversion="improved")
    # Reference: min over the given orders of the improved bound and the KL bound, at 50 digits.
    truth = min(min(ref.rdp_improved_log_delta(a, v, epsilon), ref.kl_log_delta(v)) for a, v in zip(orders, values))
    truth_delta = min(mpmath.mpf(1), mpmath.exp(truth))
    assert ours.delta >= truth_delta  # conservative ...
    if truth_delta > mpmath.mpf("1e-300"):  # ... within the documented slack
        assert ours.delta <= truth_delta * (1 + ref.delta_slack(float(truth_delta)))


@settings(max_examples=examples(200))
@given(curve=curves(min_value=1e-3), epsilon=st.floats(0.01, 100.0))
def test_rdp_delta_improved_matches_dp_accounting(curve: tuple[list[float], list[float]], epsilon: float) -> None:
    # dp-accounting computes the same bound (improved + KL for orders > 1.01); its KL term
    # 0.5·log1p(−exp(−r)) cancels for tiny r, hence values >= 1e-3 here.
    orders, values = curve
    ours = rdp_delta(orders, values, epsilon, conversion="improved")
    theirs, _ = dp_rdp.compute_delta(orders, values, epsilon)
    assert ours.delta >= theirs * (1 - 1e-13)
    assert ours.delta == pytest.approx(theirs, rel=ref.delta_slack(max(theirs, 1e-300)) + 1e-12, abs=1e-300)


@settings(max_examples=examples(200))
@given(curve=curves(), delta=delta_st, conversion=st.sampled_from(["improved", "mironov"]))
def test_rdp_epsilon_matches_mpmath(curve: tuple[list[float], list[float]], delta: float, conversion: str) -> None:
    orders, values = curve
    ours = rdp_epsilon(orders, values, delta, conversion=conversion)
    formula = ref.rdp_improved_epsilon if conversion == "improved" else ref.rdp_mironov_epsilon
    if ref.kl_shortcut_applies(values, delta):
        assert ours.epsilon == 0.0
        return
    truth = max(mpmath.mpf(0), min(formula(a, v, delta) for a, v in zip(orders, values)))
    assert ours.epsilon >= truth
    assert ours.epsilon == pytest.approx(float(truth), rel=1e-12, abs=1e-12)


def test_kl_shortcut_gives_zero_epsilon() -> None:
    # δ² = 0.25 >= 1 − e^{−0.2} = 0.181: (0, δ)-DP by Bretagnolle–Huber.
    assert rdp_epsilon([2.0, 8.0], [0.2, 0.8], 0.5, conversion="improved").epsilon == 0.0
    assert rdp_epsilon([2.0, 8.0], [0.2, 0.8], 0.5, conversion="mironov").epsilon == 0.0
    # δ² = 0.25 < 1 − e^{−1} = 0.632 and the improved bound at α = 2 is 1 − ln 2 > 0.
    assert rdp_epsilon([2.0], [1.0], 0.5, conversion="improved").epsilon == pytest.approx(1 - math.log(2), rel=1e-14)


@settings(max_examples=examples(200))
@given(order=order_st, value=st.floats(0.0, 500.0), delta=delta_st, epsilon=st.floats(0.01, 100.0))
def test_improved_is_at_most_mironov_at_every_order(order: float, value: float, delta: float, epsilon: float) -> None:
    imp = rdp_epsilon([order], [value], delta, conversion="improved")
    mir = rdp_epsilon([order], [value], delta, conversion="mironov")
    assert imp.epsilon <= mir.epsilon
    assert (
        rdp_delta([order], [value], epsilon, conversion="improved").delta
        <= rdp_delta([order], [value], epsilon, conversion="mironov").delta
    )


@settings(max_examples=examples(100))
@given(curve=curves(min_value=1e-3), delta=delta_st, conversion=st.sampled_from(["improved", "mironov"]))
def test_rdp_delta_of_rdp_epsilon_is_at_most_delta(
    curve: tuple[list[float], list[float]], delta: float, conversion: str
) -> None:
    orders, values = curve
    eps = rdp_epsilon(orders, values, delta, conversion=conversion).epsilon
    assume(eps > 0.0)
    assert rdp_delta(orders, values, eps, conversion=conversion).delta <= delta * (1 + ref.delta_slack(delta))


@settings(max_examples=examples(100))
@given(curve=curves(), delta=delta_st, extra=st.floats(1e-6, 5.0))
def test_rdp_epsilon_is_monotone_in_the_curve(
    curve: tuple[list[float], list[float]], delta: float, extra: float
) -> None:
    orders, values = curve
    bigger = [v + extra for v in values]
    for conversion in ("improved", "mironov"):
        assert (
            rdp_epsilon(orders, values, delta, conversion=conversion).epsilon
            <= rdp_epsilon(orders, bigger, delta, conversion=conversion).epsilon
        )


def test_rdp_accepts_numpy_arrays_and_tuples() -> None:
    o = np.array([2.0, 4.0, 8.0])
    v = 0.1 * o
    a = rdp_epsilon(o, v, 1e-5)
    b = rdp_epsilon(tuple(o.tolist()), tuple(v.tolist()), 1e-5)
    assert a == b


# ----------------------------------------------------------------------------------------
# Linear curves αρ: continuous α
# ----------------------------------------------------------------------------------------


def test_default_orders_include_dp_accounting_defaults() -> None:
    # Documented: the fine grid is merged with dp-accounting's default orders.
    assert set(DP_ORDERS.tolist()) <= set(DEFAULT_ORDERS.tolist())
    assert np.all(np.diff(DEFAULT_ORDERS) > 0) and DEFAULT_ORDERS[0] > 1.0


@settings(max_examples=examples(40))
@given(rho=rho_st, delta=delta_st)
@pytest.mark.slow
def test_linear_improved_matches_mpmath_continuous_minimum(rho: float, delta: float) -> None:
    ours = linear_rdp_epsilon(rho, delta, conversion="improved")
    if ref.kl_shortcut_applies([rho * 1.0001], delta):
        assert ours.epsilon == 0.0
        return
    truth = ref.linear_rdp_improved_epsilon(rho, delta)
    assume(truth > 0)
    # Any α gives a valid bound, so ours cannot be below the true minimum (up to rounding) ...
    assert ours.epsilon >= float(truth) * (1 - 1e-14)
    # ... and the continuous minimisation must find it.
    assert ours.epsilon == pytest.approx(float(truth), rel=1e-10)
    # The reported order really attains it.
    at_order = ref.rdp_improved_epsilon(ours.order, ours.order * rho, delta)
    assert ours.epsilon >= float(at_order) * (1 - 1e-13)


@settings(max_examples=examples(100))
@given(rho=rho_st, delta=delta_st)
def test_linear_mironov_is_the_bun_steinke_closed_form(rho: float, delta: float) -> None:
    ours = linear_rdp_epsilon(rho, delta, conversion="mironov")
    truth = ref.bun_steinke_epsilon(rho, delta)
    assert ours.epsilon >= truth
    assert ours.epsilon == pytest.approx(float(truth), rel=1e-13)
    # at the optimal order α* = 1 + sqrt(ln(1/δ)/ρ)
    assert ours.order == pytest.approx(1 + math.sqrt(-math.log(delta) / rho), rel=1e-12)


@settings(max_examples=examples(100))
@given(rho=rho_st, delta=delta_st, orders=st.lists(order_st, min_size=1, max_size=20))
def test_linear_improved_beats_every_grid(rho: float, delta: float, orders: list[float]) -> None:
    o = np.asarray(orders)
    grid = rdp_epsilon(o, o * rho, delta, conversion="improved").epsilon
    assert linear_rdp_epsilon(rho, delta, conversion="improved").epsilon <= grid * (1 + 1e-12)
    grid_dp = rdp_epsilon(DP_ORDERS, DP_ORDERS * rho, delta, conversion="improved").epsilon
    assert linear_rdp_epsilon(rho, delta, conversion="improved").epsilon <= grid_dp * (1 + 1e-12)


@settings(max_examples=examples(100))
@given(rho=rho_st, delta=delta_st, orders=st.lists(order_st, min_size=1, max_size=20))
def test_linear_mironov_beats_every_grid_outside_the_kl_regime(rho: float, delta: float, orders: list[float]) -> None:
    o = np.asarray(orders)
    assume(not ref.kl_shortcut_applies((o * rho).tolist(), delta))
    grid = rdp_epsilon(o, o * rho, delta, conversion="mironov").epsilon
    assert linear_rdp_epsilon(rho, delta, conversion="mironov").epsilon <= grid * (1 + 1e-12)


def test_linear_mironov_is_pure_bun_steinke_even_in_the_kl_regime() -> None:
    """Documented choice: the continuous Mironov conversion is the published closed form, so in
    the degenerate regime δ² >= 1 − e^{−ρ} a grid conversion with the KL shortcut is tighter."""
    rho, delta = 0.2, 0.5
    o = np.array([1.01, 2.0])
    assert rdp_epsilon(o, o * rho, delta, conversion="mironov").epsilon == 0.0
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert linear_rdp_epsilon(rho, delta, conversion="mironov").epsilon == pytest.approx(expected, rel=1e-13)


@settings(max_examples=examples(40))
@given(rho=rho_st, epsilon=st.floats(0.01, 100.0))
@pytest.mark.slow
def test_linear_improved_delta_matches_mpmath(rho: float, epsilon: float) -> None:
    ours = linear_rdp_delta(rho, epsilon, conversion="improved")
    # Sound: never below the best of the improved bound over all α > 1 (scanned down to
    # α − 1 = 1e-13: for large ρ and δ near 1 the optimum lies below the grid) and the KL
    # bound, whose best order is α → 1 (ε_R(1) = ρ) ...
    truth = min(mpmath.mpf(0), ref.linear_rdp_improved_log_delta(rho, epsilon, lo=-30.0), ref.kl_log_delta(rho))
    improved = ref.linear_rdp_improved_log_delta(rho, epsilon, lo=math.log(1e-4))
    assert ours.delta >= mpmath.exp(truth)
    # ... and tight, given that the documented grid starts at α = 1 + 1e-4.
    best = min(mpmath.mpf(0), improved, ref.kl_log_delta(rho * (1 + 1e-4)))
    if best >= math.log(1e-300):
        assert math.log(ours.delta) - float(best) <= 2e-10 * max(1.0, abs(float(best)))


@settings(max_examples=examples(100))
@given(rho=rho_st, epsilon=st.floats(0.01, 100.0))
def test_linear_mironov_delta_closed_form(rho: float, epsilon: float) -> None:
    ours = linear_rdp_delta(rho, epsilon, conversion="mironov")
    # min over α > 1 of exp((α − 1)(αρ − ε)): −(ε − ρ)²/(4ρ) if the minimiser (ε + ρ)/(2ρ) > 1, else 1.
    with mpmath.workdps(50):
        r, e = mpmath.mpf(rho), mpmath.mpf(epsilon)
        truth = mpmath.exp(-((e - r) ** 2) / (4 * r)) if (e + r) / (2 * r) > 1 else mpmath.mpf(1)
    assert ours.delta >= truth
    if truth >= mpmath.mpf("1e-300"):
        assert ours.delta <= truth * (1 + ref.delta_slack(float(truth)))


@settings(max_examples=examples(60))
@given(rho=rho_st, delta=delta_st, conversion=st.sampled_from(["improved", "mironov"]))
def test_linear_delta_and_epsilon_are_inverses(rho: float, delta: float, conversion: str) -> None:
    eps = linear_rdp_epsilon(rho, delta, conversion=conversion).epsilon
    assume(eps > 0.0)
    # The continuous ε- and δ-minimisers may stop at slightly different orders (tightness only).
    assert linear_rdp_delta(rho, eps, conversion=conversion).delta <= delta * (1 + ref.delta_slack(delta) + 1e-12)


@settings(max_examples=examples(60))
@given(r1=rho_st, r2=rho_st, delta=delta_st, conversion=st.sampled_from(["improved", "mironov"]))
def test_linear_epsilon_is_increasing_in_rho(r1: float, r2: float, delta: float, conversion: str) -> None:
    lo, hi = sorted((r1, r2))
    assert (
        linear_rdp_epsilon(lo, delta, conversion=conversion).epsilon
        <= linear_rdp_epsilon(hi, delta, conversion=conversion).epsilon
    )


def test_linear_rho_zero_is_zero_epsilon() -> None:
    assert linear_rdp_epsilon(0.0, 1e-5).epsilon == 0.0
    assert linear_rdp_delta(0.0, 1.0).delta == 0.0
