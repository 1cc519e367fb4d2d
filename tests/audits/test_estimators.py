"""Clopper–Pearson bounds, ε and μ lower bounds, threshold selection, and claims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from tiers import examples

from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.zcdp import zcdp_epsilon
from dpkit.audits.claims import Claim
from dpkit.audits.estimators import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    estimate,
    mu_from_rates,
    mu_lower_bound,
    select_threshold,
)


@settings(max_examples=examples(200))
@given(n=st.integers(1, 10_000), frac=st.floats(0, 1), alpha=st.floats(1e-6, 0.5))
def test_clopper_pearson_is_the_binomial_inversion(n: int, frac: float, alpha: float) -> None:
    k = int(frac * n)
    up = clopper_pearson_upper(k, n, alpha)
    lo = clopper_pearson_lower(k, n, alpha)
    assert 0.0 <= lo <= k / n <= up <= 1.0
    if k < n:  # P[Bin(n, up) <= k] = α
        assert stats.binom.cdf(k, n, up) == pytest.approx(alpha, rel=1e-6, abs=1e-12)
    if k > 0:  # P[Bin(n, lo) >= k] = α
        assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha, rel=1e-6, abs=1e-12)


def test_clopper_pearson_covers() -> None:
    rng = np.random.default_rng(0)
    n, p, alpha, reps = 200, 0.03, 0.1, 20_000
    k = rng.binomial(n, p, size=reps)
    ups = np.array([clopper_pearson_upper(int(x), n, alpha) for x in np.unique(k)])
    upper_of = dict(zip(np.unique(k).tolist(), ups.tolist()))
    misses = np.mean([upper_of[int(x)] < p for x in k])
    assert misses <= alpha  # CP is conservative: miss rate at most α


@settings(max_examples=examples(300))
@given(mu=st.floats(0.01, 6), fpr=st.floats(1e-9, 1 - 1e-9), delta=st.floats(0, 0.5))
def test_bounds_on_the_exact_gaussian_curve(mu: float, fpr: float, delta: float) -> None:
    fnr = float(stats.norm.cdf(stats.norm.ppf(1 - fpr) - mu))  # a point of the μ-GDP trade-off curve
    if fnr <= 0.0 or fnr >= 1.0:
        return
    assert mu_from_rates(fpr, fnr) == pytest.approx(mu, abs=1e-6)
    eps = epsilon_lower_bound(fpr, fnr, delta)
    if delta > 0:  # a μ-GDP mechanism is (ε(δ), δ)-DP: no point of its curve certifies more
        assert eps <= gdp_epsilon(mu, delta) * (1 + 1e-9) + 1e-9


def test_epsilon_lower_bound_reference_values() -> None:
    assert epsilon_lower_bound(0.1, 0.1) == pytest.approx(math.log(9))
    assert epsilon_lower_bound(0.1, 0.1, 0.05) == pytest.approx(math.log(0.85 / 0.1))
    assert epsilon_lower_bound(0.6, 0.6) == 0.0
    assert epsilon_lower_bound(0.0, 0.5) == math.inf
    assert mu_lower_bound(0.5, 0.6) == 0.0


def test_select_threshold_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    s0, s1 = rng.normal(0, 1, 300).round(1), rng.normal(1, 1, 300).round(1)
    candidates = np.concatenate([[-np.inf], np.unique(np.concatenate([s0, s1]))])

    def bounds(x: float) -> tuple[float, float]:
        return (
            clopper_pearson_upper(int(np.sum(s0 > x)), 300, 0.025),
            clopper_pearson_upper(int(np.sum(s1 <= x)), 300, 0.025),
        )

    t = select_threshold(s0, s1, "mu")
    best = max(mu_from_rates(*bounds(c)) for c in candidates)
    assert mu_from_rates(*bounds(t)) == pytest.approx(best, rel=1e-9)
    te = select_threshold(s0, s1, "epsilon", 1e-3)
    best = max(epsilon_lower_bound(*bounds(c), 1e-3) for c in candidates)
    assert epsilon_lower_bound(*bounds(te), 1e-3) == pytest.approx(best, rel=1e-9)


@pytest.mark.slow
def test_estimate_is_valid_and_tight_on_gaussian_scores() -> None:
    # Scores of the most powerful test between N(0,1) and N(μ,1) trace the μ-GDP curve.
    mu, alpha, n, reps = 1.5, 0.1, 4_000, 300
    rng = np.random.default_rng(2)
    lows = []
    for _ in range(reps):
        sel0, sel1 = rng.normal(0, 1, n), rng.normal(mu, 1, n)
        ev0, ev1 = rng.normal(0, 1, n), rng.normal(mu, 1, n)
        t = select_threshold(sel0, sel1)
        lows.append(estimate(ev0, ev1, t, alpha).mu_lower)
    lows = np.array(lows)
    # valid: the bound exceeds the truth in at most α of the repetitions (+ binomial slack)
    assert np.mean(lows > mu) <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)
    # tight: with 4000 runs per side the bound reaches 80% of μ
    assert np.median(lows) >= 0.8 * mu


def test_estimate_fields() -> None:
    est = estimate(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.5, 3.5, 4.0, 1.0]), 2.0, 0.05, 1e-5)
    assert (est.false_positives, est.false_negatives) == (1, 1)
    assert est.fpr == 0.25 and est.fnr == 0.25 and est.confidence == 0.95
    assert est.fpr_upper == clopper_pearson_upper(1, 4, 0.025)
    assert est.mu_interval[0] == est.mu_lower <= est.mu_estimate <= est.mu_interval[1]
    assert est.to_dict()["n0"] == 4


def test_claims() -> None:
    c = Claim.gaussian(2.0, 1.0, 4)
    assert c.mu == 1.0 and c.epsilon_at(1e-5) == gdp_epsilon(1.0, 1e-5)
    assert Claim.gdp(0.5).mu == 0.5
    z = Claim.zcdp(0.5)
    assert z.mu is None and z.epsilon_at(1e-6) == zcdp_epsilon(0.5, 1e-6, conversion="rdp-optimal")
    d = Claim.dp(1.0, 1e-5)
    assert d.mu is None and d.epsilon_at(1e-5) == 1.0 and d.epsilon_at(1e-6) == math.inf
    assert d.default_delta() == 1e-5 and z.default_delta() == 1e-5
    assert Claim.dp(0, 0).epsilon == 0.0
    for claim in (c, z, d):
        assert claim.to_dict()["kind"] == claim.kind and claim.describe()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: clopper_pearson_upper(5, 4, 0.05), "k must"),
        (lambda: clopper_pearson_upper(1, 0, 0.05), "n must"),
        (lambda: clopper_pearson_upper(1, 4, 1.5), "alpha"),
        (lambda: epsilon_lower_bound(1.5, 0.1), "fpr"),
        (lambda: epsilon_lower_bound(0.1, 0.1, 1.0), "delta"),
        (lambda: select_threshold([], [1.0]), "scores0"),
        (lambda: select_threshold([1.0], [np.nan]), "scores1"),
        (lambda: select_threshold([1.0], [1.0], "auc"), "objective"),
        (lambda: estimate([1.0], [1.0], float("nan")), "threshold"),
        (lambda: Claim.gaussian(0.0), "sigma"),
        (lambda: Claim.dp(1.0, 1.5), "delta"),
        (lambda: Claim.gdp(-1.0), "mu"),
        (lambda: Claim("dp", epsilon=1.0), "delta"),
        (lambda: Claim("renyi"), "kind"),
    ],
)
def test_bad_input(call, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        call()


#: Claims built directly (not through the classmethods) with a value out of range: each names the field and value.
BAD_CLAIMS = [
    (lambda: Claim("gaussian", sigma=-1, sensitivity=1), "sigma must be > 0, got -1"),
    (lambda: Claim("gaussian", sigma=1, sensitivity=0), "sensitivity must be > 0, got 0"),
    (lambda: Claim("gaussian", sigma=1, sensitivity=1, count=0), "count must be an integer >= 1, got 0"),
    (lambda: Claim("dp", epsilon=-5, delta=2), "epsilon must be >= 0, got -5"),
    (lambda: Claim("dp", epsilon=5, delta=2), "delta must lie in [0, 1], got 2"),
    (lambda: Claim("dp", epsilon=math.nan, delta=0.1), "epsilon must be a number, got NaN"),
    (lambda: Claim("gdp", mu_value=-1.0), "mu must be > 0, got -1"),
    (lambda: Claim("gdp", mu_value=math.inf), "mu must be finite, got inf"),
    (lambda: Claim("ledger", mu_value=-1.0), "mu must be >= 0, got -1"),
    (lambda: Claim("zcdp", rho=0.0), "rho must be > 0, got 0"),
    (lambda: Claim("rdp", orders=(0.5,), values=(1.0,)), "orders must be Rényi orders > 1, got orders[0] = 0.5"),
    (lambda: Claim("rdp", orders=(2.0,), values=(-1.0,)), "values[0] must be >= 0, got -1"),
    (lambda: Claim("dp", epsilon=1.0, delta=1e-5, sigma=2.0), "a dp claim takes no sigma, got 2.0"),
    (lambda: Claim("gdp", mu_value=1.0, count=3), "a gdp claim takes no count, got 3"),
    (lambda: Claim("gaussian", sigma=1.0), "a gaussian claim needs sensitivity"),
]


@pytest.mark.parametrize(("call", "message"), BAD_CLAIMS, ids=[m.split(",")[0] for _, m in BAD_CLAIMS])
def test_a_claim_built_directly_is_validated_naming_the_field_and_value(call, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


@settings(max_examples=examples(80), deadline=None, derandomize=True, database=None)
@given(
    epsilon=st.floats(min_value=0.0, max_value=50.0) | st.just(math.inf),
    delta=st.floats(min_value=0.0, max_value=1.0),
    sigma=st.floats(min_value=1e-3, max_value=1e3),
    count=st.integers(min_value=1, max_value=10**6),
)
def test_every_way_of_building_a_valid_claim_gives_the_same_claim(
    epsilon: float, delta: float, sigma: float, count: int
) -> None:
    """The classmethods and the dataclass agree (the checks moved into __post_init__; values are normalised)."""
    from dpkit.accountant import Ledger

    assert Claim.dp(epsilon, delta) == Claim("dp", epsilon=epsilon, delta=delta)
    assert Claim.dp(int(min(epsilon, 50)), 0) == Claim("dp", epsilon=float(int(min(epsilon, 50))), delta=0.0)
    assert Claim.gaussian(sigma, 2.0, count) == Claim("gaussian", sigma=sigma, sensitivity=2.0, count=count)
    assert Claim.gaussian(sigma, 2.0, count).mu == pytest.approx(2.0 * math.sqrt(count) / sigma, rel=1e-12)
    assert Claim.gdp(sigma) == Claim("gdp", mu_value=sigma) and Claim.zcdp(sigma) == Claim("zcdp", rho=sigma)
    assert Claim.rdp([2, 3], [sigma, 2 * sigma]) == Claim("rdp", orders=(2.0, 3.0), values=(sigma, 2 * sigma))
    ledger = Claim.ledger(Ledger.homogeneous(1.0, sigma, compositions=count))
    assert ledger.mu == Ledger.homogeneous(1.0, sigma, compositions=count).mu and len(ledger.releases) == 1
