"""μ-GDP / analytic Gaussian: gdp_delta, gdp_epsilon, gdp_mu (and the gdp_log_delta kernel).

Checked against an independent 50-digit mpmath evaluation of
δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) over the extreme ranges the package promises
(δ down to 1e-300, ε up to 1000, μ from 1e-6 to 1e3), and against dp-accounting's exact
Gaussian functions.
"""

from __future__ import annotations

import math

import dp_accounting
import mpmath
import pytest
import references as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import calibrate_sigma, gaussian_epsilon, gdp_delta, gdp_epsilon, gdp_mu
from dpkit.accountant.gdp import gdp_log_delta

MUS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1e3]
EPSILONS = [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0]
DELTAS = [1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-12, 1e-8, 1e-5, 1e-3, 1e-2, 0.1, 0.3, 0.5, 0.9]

#: Relative precision (in ε or μ) at which the root-finds must be tight.
TIGHT = 1e-8

mu_st = st.floats(1e-6, 1e3)
eps_st = st.floats(1e-6, 1e3)
log_delta_st = st.floats(-690.0, math.log(0.99)).map(math.exp)


# ----------------------------------------------------------------------------------------
# The kernel and δ(ε)
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", MUS)
def test_log_delta_kernel_matches_mpmath_over_grid(mu: float) -> None:
    for eps in [0.0, *EPSILONS]:
        truth = ref.gdp_log_delta(eps, mu)
        ours = gdp_log_delta(mu, eps)
        assert math.isfinite(ours), (mu, eps)
        err = abs(ours - float(truth))
        assert err <= 1e-12 * max(1.0, abs(float(truth))), (mu, eps, ours, truth)


@pytest.mark.parametrize("mu", MUS)
def test_gdp_delta_is_conservative_and_accurate_over_grid(mu: float) -> None:
    for eps in EPSILONS:
        truth = ref.gdp_delta(eps, mu)
        ours = gdp_delta(mu, eps)
        assert 0.0 <= ours <= 1.0
        assert ours >= truth, (mu, eps, ours, truth)  # rounded up: never below the truth
        if truth >= mpmath.mpf("1e-300"):
            log_truth = float(mpmath.log(truth))
            # The reported δ carries at most the documented slack (1e-10 relative in log δ).
            assert math.log(ours) - log_truth <= 2e-10 * max(1.0, abs(log_truth)), (mu, eps)
        else:
            # The truth underflows doubles: the reported δ is (rounded-up) zero territory.
            assert ours < 1e-300


@settings(max_examples=examples(200))
@given(mu=mu_st, eps=eps_st)
def test_gdp_delta_matches_mpmath(mu: float, eps: float) -> None:
    truth = ref.gdp_delta(eps, mu)
    ours = gdp_delta(mu, eps)
    assert ours >= truth
    if truth >= mpmath.mpf("1e-300"):
        log_truth = float(mpmath.log(truth))
        assert math.log(ours) - log_truth <= 2e-10 * max(1.0, abs(log_truth))


def test_gdp_delta_at_mu_1_eps_1_by_hand() -> None:
    # Φ(−1/2) − e·Φ(−3/2) = 0.3085375387 − 2.7182818285 × 0.0668072013 = 0.1269367...
    assert gdp_delta(1.0, 1.0) == pytest.approx(0.3085375387259869 - math.e * 0.06680720126885807, rel=1e-9)


@settings(max_examples=examples(100))
@given(mu=mu_st, e1=eps_st, e2=eps_st)
def test_gdp_delta_is_decreasing_in_epsilon(mu: float, e1: float, e2: float) -> None:
    lo, hi = sorted((e1, e2))
    assert gdp_delta(mu, hi) <= gdp_delta(mu, lo)


@settings(max_examples=examples(100))
@given(m1=mu_st, m2=mu_st, eps=eps_st)
def test_gdp_delta_is_increasing_in_mu(m1: float, m2: float, eps: float) -> None:
    lo, hi = sorted((m1, m2))
    assert gdp_delta(lo, eps) <= gdp_delta(hi, eps)


# ----------------------------------------------------------------------------------------
# ε(δ): feasible (ref δ(ε) <= δ) and tight
# ----------------------------------------------------------------------------------------


def _check_epsilon(mu: float, delta: float) -> None:
    eps = gdp_epsilon(mu, delta)
    assert eps >= 0.0 and math.isfinite(eps)
    assert ref.gdp_delta(eps, mu) <= delta, (mu, delta, eps)
    if eps > 0.0:
        # Tight: a slightly smaller ε is infeasible (up to the documented δ slack).
        assert ref.gdp_delta(eps * (1 - TIGHT), mu) > delta * (1 - ref.delta_slack(delta)), (mu, delta, eps)
    else:
        # ε = 0 only when the mechanism is (0, δ)-DP already.
        assert ref.gdp_delta(0, mu) <= delta


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("delta", DELTAS)
def test_gdp_epsilon_feasible_and_tight_over_grid(mu: float, delta: float) -> None:
    _check_epsilon(mu, delta)


@settings(max_examples=examples(150))
@given(mu=mu_st, delta=log_delta_st)
def test_gdp_epsilon_feasible_and_tight(mu: float, delta: float) -> None:
    _check_epsilon(mu, delta)


def test_gdp_epsilon_is_zero_when_already_zero_delta_dp() -> None:
    # δ(0; μ) = 2Φ(μ/2) − 1 ≈ μ/sqrt(2π) = 4e-7 for μ = 1e-6, below δ = 1e-5.
    assert ref.gdp_delta(0, 1e-6) < 1e-5
    assert gdp_epsilon(1e-6, 1e-5) == 0.0
    assert gdp_epsilon(1e-6, 1e-7) > 0.0


@settings(max_examples=examples(100))
@given(mu=mu_st, delta=log_delta_st)
def test_gdp_delta_of_gdp_epsilon_is_at_most_delta(mu: float, delta: float) -> None:
    eps = gdp_epsilon(mu, delta)
    if eps > 0.0:
        assert gdp_delta(mu, eps) <= delta * (1 + 1e-12)


@settings(max_examples=examples(100))
@given(m1=mu_st, m2=mu_st, delta=log_delta_st)
def test_gdp_epsilon_is_increasing_in_mu(m1: float, m2: float, delta: float) -> None:
    lo, hi = sorted((m1, m2))
    assert gdp_epsilon(lo, delta) <= gdp_epsilon(hi, delta)


@settings(max_examples=examples(100))
@given(mu=mu_st, d1=log_delta_st, d2=log_delta_st)
def test_gdp_epsilon_is_decreasing_in_delta(mu: float, d1: float, d2: float) -> None:
    lo, hi = sorted((d1, d2))
    assert gdp_epsilon(mu, hi) <= gdp_epsilon(mu, lo)


# ----------------------------------------------------------------------------------------
# μ(ε, δ): the largest admissible μ, feasible and tight
# ----------------------------------------------------------------------------------------


def _check_mu(eps: float, delta: float) -> None:
    mu = gdp_mu(eps, delta)
    assert mu > 0.0 and math.isfinite(mu)
    assert ref.gdp_delta(eps, mu) <= delta, (eps, delta, mu)
    assert ref.gdp_delta(eps, mu * (1 + TIGHT)) > delta * (1 - ref.delta_slack(delta)), (eps, delta, mu)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_gdp_mu_feasible_and_tight_over_grid(eps: float, delta: float) -> None:
    _check_mu(eps, delta)


@settings(max_examples=examples(150))
@given(eps=eps_st, delta=log_delta_st)
def test_gdp_mu_feasible_and_tight(eps: float, delta: float) -> None:
    _check_mu(eps, delta)


@settings(max_examples=examples(100))
@given(eps=st.floats(1e-4, 100.0), delta=st.floats(-200.0, -1.0).map(math.exp))
def test_gdp_mu_and_gdp_epsilon_are_inverses(eps: float, delta: float) -> None:
    mu = gdp_mu(eps, delta)
    back = gdp_epsilon(mu, delta)
    # Both ends are rounded conservatively (μ down, ε up), so the round trip may land a few
    # ulps of μ above ε; where δ(ε) is flat in ε (small ε, large δ) those ulps are amplified.
    assert back == pytest.approx(eps, rel=1e-9)


# ----------------------------------------------------------------------------------------
# dp-accounting's exact Gaussian functions (Balle & Wang 2018)
# ----------------------------------------------------------------------------------------


#: dp-accounting's brentq: xtol = 1e-12 (absolute), rtol = 4·2^-52 (relative).
def _their_tol(x: float) -> float:
    return 1e-12 + 4 * 2.0**-52 * abs(x)


SIGMAS = [0.05, 0.2, 0.5, 1.0, 3.7, 10.0, 100.0, 1000.0]
DP_DELTAS = [1e-12, 1e-8, 1e-5, 1e-3, 1e-2, 0.1, 0.3]


def _compare_epsilon_with_dp_accounting(sigma: float, delta: float) -> None:
    theirs = dp_accounting.get_epsilon_gaussian(sigma, delta)
    ours = gaussian_epsilon(sigma, delta).epsilon
    if theirs == 0:
        assert ours == 0.0 or ref.gdp_delta(0, 1 / sigma) > delta * (1 - ref.delta_slack(delta))
        return
    assert ours == pytest.approx(theirs, rel=1e-6)
    # Ours is the feasible end of a tight bracket: never below theirs beyond their tolerance.
    assert ours >= theirs - _their_tol(theirs)


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("delta", DP_DELTAS)
def test_epsilon_matches_dp_accounting_grid(sigma: float, delta: float) -> None:
    _compare_epsilon_with_dp_accounting(sigma, delta)


@settings(max_examples=examples(60))
@given(sigma=st.floats(0.05, 1000.0), delta=st.floats(-27.0, math.log(0.5)).map(math.exp))
def test_epsilon_matches_dp_accounting(sigma: float, delta: float) -> None:
    _compare_epsilon_with_dp_accounting(sigma, delta)


def _compare_sigma_with_dp_accounting(eps: float, delta: float) -> None:
    theirs = dp_accounting.get_sigma_gaussian(eps, delta)
    ours = calibrate_sigma(eps, delta).sigma
    assert ours == pytest.approx(theirs, rel=1e-6)
    # Ours is the feasible σ: not below theirs beyond their root-find tolerance.
    assert ours >= theirs - _their_tol(theirs)
    # ... and consistent with the largest admissible μ.
    assert ours == pytest.approx(1.0 / gdp_mu(eps, delta), rel=1e-12)


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-2])
def test_sigma_matches_dp_accounting_grid(eps: float, delta: float) -> None:
    _compare_sigma_with_dp_accounting(eps, delta)


@settings(max_examples=examples(40))
@given(eps=st.floats(0.01, 30.0), delta=st.floats(-27.0, math.log(0.1)).map(math.exp))
def test_sigma_matches_dp_accounting(eps: float, delta: float) -> None:
    _compare_sigma_with_dp_accounting(eps, delta)
