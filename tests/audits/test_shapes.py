"""The shape of a measured trade-off (dpkit.audits.shapes): the families against their closed-form privacy profiles,
the parameter through a point, what a claim allows in each family, and the power to certify or flag a violation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.accountant.closed_forms import epsilon_delta_delta, laplace_delta
from dpkit.accountant.gdp import gdp_delta, gdp_mu
from dpkit.audits.claims import Claim
from dpkit.audits.shapes import (
    FAMILIES,
    KAPPA,
    POWER_NEEDED,
    allowed_parameter,
    alternative_parameter,
    certify_probability,
    family_curve,
    family_epsilon,
    family_parameter,
    flag_probability,
    margin_threshold,
    read_shape,
    roc_points,
    trials_to_certify,
)

GRID = np.unique(np.concatenate([np.logspace(-14, -1e-9, 4000), np.linspace(0.0, 1.0, 200_001)]))


def _kinks(family: str, theta: float) -> np.ndarray:
    """Where a family's curve bends: its profile's supremum sits there."""
    return np.array([1.0 / (1.0 + math.exp(theta)), 0.5 * math.exp(-theta), 0.5])


PROFILES = {
    "gaussian": gdp_delta,
    "laplace": laplace_delta,
    "randomized-response": lambda theta, eps: epsilon_delta_delta(theta, 0.0, eps),
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("theta", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.2, 0.9, 2.0])
def test_each_curve_has_its_family_closed_form_profile(family: str, theta: float, epsilon: float) -> None:
    # δ(ε) = sup_a 1 − f(a) − e^ε a: the curve's conjugate is the mechanism's exact privacy profile (dpkit.accountant)
    a = np.concatenate([GRID, _kinks(family, theta)])
    conjugate = float(np.max(1.0 - family_curve(family, theta, a) - math.exp(epsilon) * a))
    assert conjugate == pytest.approx(PROFILES[family](theta, epsilon), abs=2e-6)


@pytest.mark.parametrize("family", FAMILIES)
def test_curves_are_symmetric_decreasing_and_order_by_parameter(family: str) -> None:
    a = np.linspace(0.0, 1.0, 401)
    f = family_curve(family, 0.8, a)
    assert np.all(np.diff(f) <= 1e-12) and f[0] == pytest.approx(1.0) and f[-1] == pytest.approx(0.0)
    # symmetric: f(f(a)) = a where f is strictly decreasing
    inner = (f > 1e-6) & (f < 1 - 1e-6)
    assert family_curve(family, 0.8, f[inner]) == pytest.approx(a[inner], abs=1e-9)
    assert np.all(family_curve(family, 1.2, a) <= f + 1e-15)  # leakier: lower everywhere


@given(
    family=st.sampled_from(FAMILIES),
    theta=st.floats(0.01, 6.0),
    fpr=st.floats(1e-6, 0.999),
)
def test_the_parameter_through_a_point_inverts_the_curve(family: str, theta: float, fpr: float) -> None:
    fnr = float(family_curve(family, theta, fpr))
    if not 1e-9 < fnr < 1.0 - fpr - 1e-9:
        return  # on an end or on the diagonal: no single member through it
    back = family_parameter(family, fpr, fnr)
    assert float(family_curve(family, back, fpr)) == pytest.approx(fnr, abs=1e-9)


def test_the_parameter_of_points_on_and_off_the_diagonal() -> None:
    assert family_parameter("gaussian", 0.5, 0.5) == 0.0 and family_parameter("laplace", 0.6, 0.6) == 0.0
    assert all(family_parameter(f, 0.0, 0.0) == math.inf for f in FAMILIES)
    assert family_parameter("randomized-response", 0.25, 0.25) == pytest.approx(math.log(3.0))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "claim",
    [Claim.dp(1.0, 1e-5), Claim.dp(0.5, 0.0), Claim.gdp(0.7), Claim.zcdp(0.1), Claim.rdp([2.0, 8.0], [0.2, 1.1])],
    ids=lambda c: c.describe(),
)
def test_what_a_claim_allows_in_each_family_is_the_leakiest_member_above_its_curve(family: str, claim: Claim) -> None:
    allowed = allowed_parameter(family, claim)
    floor = claim.trade_off(GRID)
    assert np.all(family_curve(family, allowed, GRID) >= floor - 1e-9)
    if allowed == 0.0:  # a Gaussian under a pure ε claim: every μ > 0 breaks it, far out in the tail
        assert family == "gaussian" and claim.kind == "dp" and claim.delta == 0.0
        return
    beyond = allowed * 1.02
    assert np.any(family_curve(family, beyond, GRID) < floor)  # a little leakier breaks the claim somewhere


def test_what_an_epsilon_delta_claim_allows_has_closed_forms() -> None:
    claim = Claim.dp(1.0, 1e-5)
    assert allowed_parameter("gaussian", claim) == pytest.approx(gdp_mu(1.0, 1e-5), rel=1e-12)
    assert allowed_parameter("laplace", claim) == pytest.approx(1.0 - 2 * math.log1p(-1e-5), rel=1e-12)
    assert laplace_delta(allowed_parameter("laplace", claim), 1.0) <= 1e-5
    assert epsilon_delta_delta(allowed_parameter("randomized-response", claim), 0.0, 1.0) <= 1e-5
    assert allowed_parameter("gaussian", Claim.dp(1.0, 0.0)) == 0.0  # no Gaussian mechanism is purely DP
    assert allowed_parameter("gaussian", Claim.dp(math.inf, 0.0)) == math.inf


@pytest.mark.parametrize("family", FAMILIES)
def test_the_alternative_lies_kappa_past_the_claim(family: str) -> None:
    claim = Claim.dp(1.0, 1e-5)
    alt = alternative_parameter(family, claim, 1e-5)
    assert alt is not None and family_epsilon(family, alt, 1e-5) == pytest.approx(KAPPA, rel=1e-6)
    assert alternative_parameter(family, Claim.dp(math.inf, 0.0), 1e-5) is None


def test_an_ideal_attack_certifies_a_mechanism_at_the_claim_at_most_at_its_level() -> None:
    claim, share = Claim.dp(1.0, 1e-5), 0.0375
    for family in FAMILIES:
        at = allowed_parameter(family, claim)
        p, _ = certify_probability(claim, family, at, n0=50_000, n1=50_000, share=share)
        assert p <= share  # the normal approximation of a test whose level is share/2 per rate
    # the case: a Gaussian count at σ = 2 under (1, 1e-5) (μ = 0.5): certified at 100,000 trials
    p, (fpr, fnr) = certify_probability(claim, "gaussian", 0.5, n0=50_000, n1=50_000, share=share)
    assert p > 0.95 and 1e-3 < fpr < 0.03 < 0.9 < fnr  # in the tail, where the claim's curve is tight


def test_power_grows_with_the_runs_and_trials_to_certify_are_enough() -> None:
    claim = Claim.dp(1.0, 1e-5)
    powers = [certify_probability(claim, "gaussian", 0.4, n0=n, n1=n, share=0.0375)[0] for n in (1e4, 1e5, 1e6)]
    assert powers[0] < powers[1] < powers[2]
    trials = trials_to_certify(claim, "gaussian", 0.4, n0=50_000, n1=50_000, share=0.0375, runs=100_000)
    assert trials is not None and 100_000 < trials < 2_000_000
    scale = trials / 100_000
    p, _ = certify_probability(claim, "gaussian", 0.4, n0=50_000 * scale, n1=50_000 * scale, share=0.0375)
    assert p >= POWER_NEEDED
    p, _ = certify_probability(claim, "gaussian", 0.4, n0=40_000 * scale, n1=40_000 * scale, share=0.0375)
    assert p < POWER_NEEDED


def test_flags_are_rare_at_the_claim_and_sure_far_past_it() -> None:
    allowed = allowed_parameter("gaussian", Claim.dp(1.0, 1e-5))
    assert flag_probability("gaussian", allowed, allowed, n0=50_000, n1=50_000, level=0.00625) < 0.01
    assert flag_probability("gaussian", 1.5 * allowed, allowed, n0=50_000, n1=50_000, level=0.00625) > 0.99


def _scores(kind: str, scale: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        return scale * rng.standard_normal(n), 1.0 + scale * rng.standard_normal(n)
    if kind == "laplace":
        return rng.laplace(0.0, scale, n), 1.0 + rng.laplace(0.0, scale, n)
    keep = 1.0 / (1.0 + math.exp(-1.0 / scale))  # binary randomized response with ε = 1/scale
    return (rng.random(n) > keep).astype(float), (rng.random(n) < keep).astype(float)


@pytest.mark.parametrize(("kind", "scale"), [("gaussian", 2.0), ("laplace", 1.0), ("randomized-response", 1.0)])
def test_the_shape_read_is_the_mechanism_s(kind: str, scale: float) -> None:
    s0, s1 = _scores(kind, scale, 40_000, 0)
    reading = read_shape(Claim.dp(1.0, 1e-5), roc_points(s0, s1), delta=1e-5, share=0.0375, level=0.006, runs=80_000)
    assert reading.family == kind
    truth = {"gaussian": 1 / scale, "laplace": 1 / scale, "randomized-response": 1 / scale}[kind]
    lo, hi = reading.fit.interval
    assert lo <= truth <= hi
    # a Gaussian at σ = 2 lies past (1, 1e-5); Laplace and randomized response at ε = 1 do not
    assert reading.points_to_violation is (kind == "gaussian")


def test_the_margin_threshold_sits_where_the_claim_breaks() -> None:
    s0, s1 = _scores("gaussian", 2.0, 20_000, 1)
    t, p = margin_threshold(s0, s1, Claim.dp(1.0, 1e-5), share=0.0375, n0=50_000, n1=50_000)
    assert 0.001 < float(np.mean(s0 > t)) < 0.03  # the tail, not the middle of the ROC
    assert p > 0.8


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_a_member_far_out_still_has_a_flag_probability(family: str) -> None:
    """μ = 1e18 puts the equal-error rate at 0 itself (the root finder halves its way to the subnormals): the
    probability is still a number (found by the CLI's fuzz: --mu 1e18 failed with 'no convergence')."""
    p = flag_probability(family, 1e18, 1.0, n0=1000, n1=1000, level=0.05)
    assert 0.0 <= p <= 1.0
