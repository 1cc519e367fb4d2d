"""Claims' trade-off curves, the verdict against the whole curve, power and `inconclusive`."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import GaussianRelease, Ledger
from dpkit.audits import Claim
from dpkit.audits.estimators import estimate
from dpkit.audits.verdicts import delta_lower_bound, judge, power_bound


def _gdp_curve(mu: float, x: float) -> float:
    x = mpmath.mpf(x)
    return float(mpmath.ncdf(mpmath.erfinv(1 - 2 * x) * mpmath.sqrt(2) - mu))


@given(st.floats(0.05, 5.0), st.floats(1e-6, 0.999))
@settings(max_examples=examples(60), deadline=None)
def test_gdp_curve_matches_mpmath_and_never_lies_above_it(mu: float, x: float) -> None:
    got = float(Claim.gdp(mu).trade_off(x))
    ref = _gdp_curve(mu, x)
    assert got <= ref + 1e-15 and got >= ref - 1e-9


@given(st.floats(0.0, 5.0), st.sampled_from([0.0, 1e-5, 0.1]), st.floats(0.0, 1.0))
@settings(max_examples=examples(60), deadline=None)
def test_dp_curve_closed_form(epsilon: float, delta: float, x: float) -> None:
    f = float(Claim.dp(epsilon, delta).trade_off(x))
    ref = max(0.0, 1 - delta - math.exp(epsilon) * x, math.exp(-epsilon) * (1 - delta - x))
    assert ref - 1e-9 <= f <= ref


def test_zcdp_and_rdp_envelopes_lie_below_the_gaussian_they_describe() -> None:
    """A Gaussian with μ is μ²/2-zCDP, with RDP curve α μ²/2: their envelopes are sound (below its curve)."""
    mu = 1.0
    x = np.linspace(1e-4, 0.99, 200)
    gauss = Claim.gdp(mu).trade_off(x)
    zcdp = Claim.zcdp(mu**2 / 2).trade_off(x)
    orders = [1.5, 2, 4, 8, 16, 32, 64]
    rdp = Claim.rdp(orders, [a * mu**2 / 2 for a in orders]).trade_off(x)
    assert np.all(zcdp <= gauss + 1e-12) and np.all(rdp <= gauss + 1e-12)
    assert zcdp.max() > 0.5 and rdp.max() > 0.5  # not trivially zero


def test_ledger_claim_is_its_exact_mu() -> None:
    ledger = Ledger((GaussianRelease("a", 1.0, 2.0, 4), GaussianRelease("b", 1.0, 4.0)))
    claim = Claim.ledger(ledger)
    assert claim.mu == pytest.approx(ledger.mu) and claim.unit == "mu"


def test_pure_dp_at_delta_zero() -> None:
    c = Claim.dp(1.0, 0.0)
    assert c.epsilon_at(0.0) == 1.0 and c.default_delta() == 0.0
    assert Claim.gdp(1.0).epsilon_at(0.0) == math.inf and c.epsilon_at(1.0) == 0.0


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Claim.dp(1.0, 2.0),
        lambda: Claim.dp(-1.0, 0.0),
        lambda: Claim.gdp(-1.0),
        lambda: Claim.gaussian(-1.0),
        lambda: Claim.gaussian(1.0, 1.0, 2.5),
        lambda: Claim.rdp([0.5], [1.0]),
        lambda: Claim.zcdp(float("nan")),
    ],
)
def test_constructors_refuse_nonsense(bad) -> None:
    with pytest.raises((ValueError, TypeError)):
        bad()


def test_delta_lower_bound() -> None:
    assert delta_lower_bound(0.0, 0.5, 1.0) == 0.5
    assert delta_lower_bound(0.3, 0.3, 0.0) == pytest.approx(0.4)
    assert delta_lower_bound(0.5, 0.5, 1.0) == 0.0


@pytest.mark.parametrize(
    "claim", [Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125)], ids=lambda c: c.describe()
)
@pytest.mark.slow
def test_a_mechanism_exactly_at_the_claim_is_called_a_violation_at_most_alpha(claim: Claim) -> None:
    """Error counts drawn from the claim's own curve (the strongest mechanism it allows, at a few
    operating points, the three tests of the engine each at α/3): violations at most α (+ noise)."""
    rng = np.random.default_rng(0)
    n, alpha, trials, alarms = 2000, 0.05, 400, 0
    points = (0.02, 0.1, 0.3)
    for _ in range(trials):
        ests = []
        for x in points:
            fp = rng.binomial(n, x)
            fn = rng.binomial(n, float(claim.trade_off(x)))
            s0 = np.r_[np.ones(fp), np.zeros(n - fp)]
            s1 = np.r_[np.zeros(fn), np.ones(n - fn)]
            ests.append(estimate(s0, s1, 0.5, alpha / 3, claim.default_delta()))
        alarms += judge(claim, ests, delta=claim.default_delta(), alpha=alpha, n0=n, n1=n).verdict == "violation"
    assert alarms / trials <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials)


@pytest.mark.parametrize(
    "claim", [Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125)], ids=lambda c: c.describe()
)
@pytest.mark.slow
def test_the_same_in_sequential_mode_under_optional_stopping(claim: Claim) -> None:
    """The sequential audit (:mod:`dpkit.audits.sequential`) of the strongest mechanism the claim allows
    (:func:`~dpkit.audits.mechanisms.at_the_claim`), its e-process looked at after every pair and stopped at its
    first crossing: the e-process crosses for at most α/2 of the seeds (Ville), the audit — e-process or final
    test — is a violation for at most α. α = 0.2, so that the bound is tested and not only its tail; a bet chosen
    on the pairs it is played on would cross for most seeds (tests/audits/test_sequential.py)."""
    from dpkit.audits import ScoreFunction
    from dpkit.audits.mechanisms import at_the_claim
    from dpkit.audits.sequential import SEQUENTIAL_SHARE, audit_sequential_batches, release_source

    release, d0, d1 = at_the_claim(claim)
    identity = ScoreFunction(_first_column, name="identity")  # the likelihood ratio's order for these mechanisms
    seeds, alpha = 60, 0.2
    crossed = violations = 0
    for seed in range(seeds):
        source = release_source(release, d0, d1, seed=seed)
        r = audit_sequential_batches(source, claim, runs=1_000, attack=identity, alpha=alpha)
        crossed += r.e_value_max >= r.threshold
        violations += r.verdict == "violation"
    noise = 3 * math.sqrt(alpha * (1 - alpha) / seeds)
    assert crossed / seeds <= alpha * SEQUENTIAL_SHARE + noise
    assert violations / seeds <= alpha + noise


@pytest.mark.parametrize(
    "claim", [Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125)], ids=lambda c: c.describe()
)
@pytest.mark.slow
def test_the_fixed_audit_at_the_claims_extremal_mechanism_is_a_violation_at_most_alpha(claim: Claim) -> None:
    """The whole fixed audit (the threshold where the claim breaks chosen on its selection runs through the ROC's
    fitted shape, the equal-error one, the shape read on the evaluation runs) of the strongest mechanism the claim
    allows, the likelihood ratio's order as the attack: violations for at most α of the seeds. α = 0.2, so that the
    bound is tested and not only its tail (bench/verdict_sweep.py --type-i: 1,000 seeds at α = 0.05)."""
    from dpkit.algorithms.executors import InProcessExecutor
    from dpkit.audits import ScoreFunction, audit_pair
    from dpkit.audits.mechanisms import at_the_claim

    release, d0, d1 = at_the_claim(claim)
    identity = ScoreFunction(_first_column, name="identity")
    seeds, alpha = 150, 0.2
    with InProcessExecutor() as ex:
        verdicts = [
            audit_pair(release, d0, d1, claim, runs=1_000, seed=s, attack=identity, alpha=alpha, executor=ex).verdict
            for s in range(seeds)
        ]
    assert verdicts.count("violation") / seeds <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / seeds)


def _first_column(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs)[:, 0]


def test_power_grows_with_runs_and_decides_inconclusive() -> None:
    claim = Claim.gdp(0.5)
    powers = [power_bound(claim, n0=n, n1=n, alpha=0.05, delta=1e-5) for n in (50, 1000, 100_000)]
    assert powers[0] < powers[1] < powers[2] < 0.5
    assert powers[0] < 0.25 <= powers[2]
    weak = estimate(np.zeros(50), np.ones(50), 0.5, 0.05 / 3, 1e-5)
    assert judge(claim, [weak], delta=1e-5, alpha=0.05, n0=50, n1=50).verdict != "consistent"


def test_points_below_the_curve_are_violations() -> None:
    s0, s1 = np.zeros(10_000), np.ones(10_000)  # perfectly separated: FPR⁺ and FNR⁺ tiny
    est = estimate(s0, s1, 0.5, 0.05 / 3, 1e-5)
    j = judge(Claim.dp(1.0, 1e-5), [est], delta=1e-5, alpha=0.05, n0=10_000, n1=10_000)
    assert j.verdict == "violation" and j.delta_lower > 0.99


@pytest.mark.parametrize(
    ("estimate", "interval", "sigma", "expected"),
    [
        (1.0, (0.9, 1.1), None, None),  # at the claim: nothing to diagnose
        (1.3, (0.95, 1.6), None, None),  # the interval holds 1: no diagnosis
        (2.05, (1.8, 2.3), None, "factor 2 in the sensitivity"),
        (1.42, (1.3, 1.55), None, "factor √2"),
        (3.0, (2.7, 3.3), 9.0, "σ used as a variance"),  # noise of sd √9 = 3 where σ = 9 was meant
        (40.0, (30.0, 60.0), None, "noise term missing"),
        (5.0, (4.5, 5.5), None, None),  # above the claim, but no usual factor fits
    ],
)
def test_diagnose_names_the_factor(
    estimate: float, interval: tuple[float, float], sigma: float | None, expected: str | None
) -> None:
    from dpkit.audits.verdicts import diagnose

    text = diagnose(estimate, interval, 1.0, sigma=sigma)
    if expected is None:
        assert text is None
    else:
        assert text is not None and expected in text


def test_every_claim_reads_in_mu() -> None:
    from dpkit.accountant.gdp import gdp_epsilon

    assert Claim.gdp(0.7).mu_allowed == 0.7
    mu = Claim.dp(1.0, 1e-5).mu_allowed
    assert mu is not None and gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-9)  # the Gaussian mechanism at (1, δ)
    assert Claim.dp(1.0, 0.0).mu_allowed is None  # no Gaussian mechanism is purely DP
    assert Claim.zcdp(0.125).mu_allowed == pytest.approx(0.5)
    assert Claim.rdp([2.0, 4.0], [0.25, 0.6]).mu_allowed == pytest.approx(0.5)  # min over α of √(2ε(α)/α)
