"""zCDP: zcdp_epsilon, zcdp_delta, zcdp_rho under the three conversions."""

from __future__ import annotations

import math

import mpmath
import pytest
import references as ref
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import (
    ZCDP_CONVERSIONS,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    linear_rdp_epsilon,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
)

rho_st = st.floats(-16.0, math.log(500.0)).map(math.exp)
delta_st = st.floats(-400.0, math.log(0.5)).map(math.exp)
eps_st = st.floats(1e-3, 200.0)
conversion_st = st.sampled_from(ZCDP_CONVERSIONS)


def test_bun_steinke_by_hand() -> None:
    # ρ = 0.5, δ = 1e-5: ε = 0.5 + 2 sqrt(0.5 · ln 1e5) = 0.5 + 2 sqrt(5.756463) = 0.5 + 4.798526.
    eps = zcdp_epsilon(0.5, 1e-5, conversion="bun-steinke")
    assert eps == pytest.approx(5.298526, abs=5e-7)
    assert eps >= ref.bun_steinke_epsilon(0.5, 1e-5)
    assert eps == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-14)


@settings(max_examples=examples(150))
@given(rho=rho_st, delta=delta_st)
def test_bun_steinke_matches_mpmath(rho: float, delta: float) -> None:
    ours = zcdp_epsilon(rho, delta, conversion="bun-steinke")
    truth = ref.bun_steinke_epsilon(rho, delta)
    assert ours >= truth
    assert ours == pytest.approx(float(truth), rel=1e-13)


@settings(max_examples=examples(100))
@given(rho=rho_st, delta=delta_st)
def test_gaussian_exact_is_gdp_with_mu_sqrt_2rho(rho: float, delta: float) -> None:
    mu = math.sqrt(2.0 * rho)
    assert zcdp_epsilon(rho, delta, conversion="gaussian-exact") == gdp_epsilon(mu, delta)
    # ... and so it is feasible for the true μ-GDP profile at 50 digits.
    eps = zcdp_epsilon(rho, delta, conversion="gaussian-exact")
    assert ref.gdp_delta(eps, mpmath.sqrt(2 * mpmath.mpf(rho))) <= delta * (1 + 1e-15)


@settings(max_examples=examples(100))
@given(rho=rho_st, epsilon=eps_st)
def test_gaussian_exact_delta_is_gdp_delta(rho: float, epsilon: float) -> None:
    assert zcdp_delta(rho, epsilon, conversion="gaussian-exact") == gdp_delta(math.sqrt(2.0 * rho), epsilon)


@settings(max_examples=examples(100))
@given(epsilon=eps_st, delta=delta_st)
def test_gaussian_exact_rho_is_half_gdp_mu_squared(epsilon: float, delta: float) -> None:
    rho = zcdp_rho(epsilon, delta, conversion="gaussian-exact")
    assert rho <= gdp_mu(epsilon, delta) ** 2 / 2
    assert rho == pytest.approx(gdp_mu(epsilon, delta) ** 2 / 2, rel=1e-12)
    assert ref.gdp_delta(epsilon, mpmath.sqrt(2 * mpmath.mpf(rho))) <= delta


def test_rdp_optimal_is_the_continuous_improved_rdp_conversion() -> None:
    for rho, delta in [(0.5, 1e-5), (1e-4, 1e-10), (20.0, 1e-3)]:
        assert (
            zcdp_epsilon(rho, delta, conversion="rdp-optimal")
            == linear_rdp_epsilon(rho, delta, conversion="improved").epsilon
        )


@settings(max_examples=examples(150))
@given(rho=rho_st, delta=delta_st)
def test_conversion_order(rho: float, delta: float) -> None:
    exact = zcdp_epsilon(rho, delta, conversion="gaussian-exact")
    optimal = zcdp_epsilon(rho, delta, conversion="rdp-optimal")
    bs = zcdp_epsilon(rho, delta, conversion="bun-steinke")
    assert exact <= optimal <= bs


@settings(max_examples=examples(80))
@given(rho=rho_st, epsilon=eps_st)
def test_conversion_order_for_delta(rho: float, epsilon: float) -> None:
    exact = zcdp_delta(rho, epsilon, conversion="gaussian-exact")
    optimal = zcdp_delta(rho, epsilon, conversion="rdp-optimal")
    bs = zcdp_delta(rho, epsilon, conversion="bun-steinke")
    assert exact <= optimal * (1 + 1e-12) and optimal <= bs * (1 + 1e-12)


@settings(max_examples=examples(100))
@given(r1=rho_st, r2=rho_st, delta=delta_st, conversion=conversion_st)
def test_epsilon_increasing_in_rho(r1: float, r2: float, delta: float, conversion: str) -> None:
    # Monotone up to the root-finder's documented precision (1e-13 relative; accountant/numerics.py):
    # ρ and ρ(1 + 7e-16) may come back in either order, each rounded up from its own exact value.
    lo, hi = sorted((r1, r2))
    assert zcdp_epsilon(lo, delta, conversion=conversion) <= zcdp_epsilon(hi, delta, conversion=conversion) * (
        1 + 1e-12
    )


@settings(max_examples=examples(100))
@given(rho=rho_st, delta=delta_st, conversion=conversion_st)
def test_delta_of_epsilon_is_at_most_delta(rho: float, delta: float, conversion: str) -> None:
    eps = zcdp_epsilon(rho, delta, conversion=conversion)
    assume(eps > 0.0)
    assert zcdp_delta(rho, eps, conversion=conversion) <= delta * (1 + ref.delta_slack(delta) + 1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(epsilon=eps_st, delta=delta_st, conversion=conversion_st)
def test_rho_is_the_largest_admissible(epsilon: float, delta: float, conversion: str) -> None:
    rho = zcdp_rho(epsilon, delta, conversion=conversion)
    assert rho > 0.0
    # feasible ...
    assert zcdp_epsilon(rho, delta, conversion=conversion) <= epsilon
    # ... and tight: a slightly larger ρ breaks the target.
    assert zcdp_epsilon(rho * (1 + 1e-8), delta, conversion=conversion) > epsilon


@settings(max_examples=examples(100))
@given(epsilon=eps_st, delta=delta_st)
def test_bun_steinke_rho_matches_mpmath(epsilon: float, delta: float) -> None:
    ours = zcdp_rho(epsilon, delta, conversion="bun-steinke")
    truth = ref.bun_steinke_rho(epsilon, delta)
    assert ours <= truth  # rounded down
    assert ours == pytest.approx(float(truth), rel=1e-13)


@settings(max_examples=examples(60))
@given(epsilon=eps_st, delta=delta_st)
def test_rho_order_across_conversions(epsilon: float, delta: float) -> None:
    bs = zcdp_rho(epsilon, delta, conversion="bun-steinke")
    optimal = zcdp_rho(epsilon, delta, conversion="rdp-optimal")
    exact = zcdp_rho(epsilon, delta, conversion="gaussian-exact")
    assert bs <= optimal <= exact
