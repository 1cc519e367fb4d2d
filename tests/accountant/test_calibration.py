"""σ calibration: calibrate_sigma and calibrate_ledger_scale under every method."""

from __future__ import annotations

import math

import dp_accounting
import mpmath
import pytest
import references as ref
from dp_accounting import mechanism_calibration
from dp_accounting.pld import pld_privacy_accountant as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import (
    GaussianRelease,
    Ledger,
    calibrate_ledger_scale,
    calibrate_sigma,
    gaussian_epsilon,
    make_accountant,
)

ROUND_TRIP = ref.FAST_METHODS

eps_st = st.floats(0.01, 50.0)
delta_st = st.floats(-230.0, math.log(0.1)).map(math.exp)  # 1e-100 … 0.1
sens_st = st.floats(0.01, 100.0)
k_st = st.integers(1, 100_000)


def test_reference_point() -> None:
    cal = calibrate_sigma(1.0, 1e-5)
    assert round(cal.sigma, 4) == 3.7306
    assert (cal.method, cal.conversion, cal.target_epsilon, cal.delta) == ("exact", None, 1.0, 1e-5)
    assert (cal.sensitivity, cal.compositions) == (1.0, 1)
    assert cal.epsilon <= 1.0
    assert cal.noise_multiplier == cal.sigma
    assert cal.to_dict()["sigma"] == cal.sigma


@settings(max_examples=examples(60))
@given(eps=eps_st, delta=delta_st, sens=sens_st, k=k_st, mc=st.sampled_from(ROUND_TRIP))
def test_calibration_round_trips(eps: float, delta: float, sens: float, k: int, mc: tuple[str, str | None]) -> None:
    cal = calibrate_sigma(eps, delta, sensitivity=sens, compositions=k, method=mc[0], conversion=mc[1])
    assert (cal.method, cal.conversion) == (mc[0], mc[1] or ({"rdp": "improved", "zcdp": "bun-steinke"}.get(mc[0])))
    assert cal.epsilon <= eps
    again = gaussian_epsilon(cal.sigma, delta, sensitivity=sens, compositions=k, method=mc[0], conversion=mc[1]).epsilon
    assert again == cal.epsilon
    assert again == pytest.approx(eps, rel=1e-9)


@settings(max_examples=examples(40))
@given(eps=st.floats(0.01, 0.999), delta=delta_st, sens=sens_st, k=st.integers(1, 1000))
def test_classic_calibration_round_trips(eps: float, delta: float, sens: float, k: int) -> None:
    total = eps * k  # ε per release below 1
    cal = calibrate_sigma(total, delta, sensitivity=sens, compositions=k, method="classic")
    assert cal.epsilon <= total
    assert gaussian_epsilon(
        cal.sigma, delta, sensitivity=sens, compositions=k, method="classic"
    ).epsilon == pytest.approx(total, rel=1e-9)
    assert cal.sigma >= ref.classic_sigma(total, delta, sensitivity=sens, compositions=k)


def test_classic_calibration_refuses_epsilon_of_one_per_release() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_sigma(2.0, 1e-5, sensitivity=1.0, compositions=2, method="classic")


@settings(max_examples=examples(100))
@given(eps=eps_st, delta=delta_st, sens=sens_st, k=k_st)
def test_exact_calibration_is_feasible_and_tight_in_mpmath(eps: float, delta: float, sens: float, k: int) -> None:
    sigma = calibrate_sigma(eps, delta, sensitivity=sens, compositions=k).sigma
    # Feasible: the true δ at the target ε, for μ = Δ sqrt(K)/σ, is at most δ (50 digits) ...
    assert ref.gdp_delta(eps, ref.gaussian_mu(sens, sigma, k)) <= delta
    # ... and tight: 1e-8 less noise breaks it (up to the documented δ slack).
    assert ref.gdp_delta(eps, ref.gaussian_mu(sens, mpmath.mpf(sigma) * (1 - mpmath.mpf("1e-8")), k)) > delta * (
        1 - ref.delta_slack(delta)
    )


@settings(max_examples=examples(40))
@given(eps=eps_st, delta=st.floats(-40.0, math.log(0.1)).map(math.exp))
def test_method_sigmas_are_ordered(eps: float, delta: float) -> None:
    s = {
        mc: calibrate_sigma(eps, delta, sensitivity=1.0, compositions=10, method=mc[0], conversion=mc[1]).sigma
        for mc in ROUND_TRIP
    }
    assert s[("exact", None)] <= s[("rdp", "improved")] <= s[("rdp", "mironov")]
    assert s[("zcdp", "gaussian-exact")] == pytest.approx(s[("exact", None)], rel=1e-12)
    assert s[("rdp", "improved")] == pytest.approx(s[("zcdp", "rdp-optimal")], rel=1e-12)
    assert s[("rdp", "mironov")] == pytest.approx(s[("zcdp", "bun-steinke")], rel=1e-12)


# ----------------------------------------------------------------------------------------
# Cross-checks with dp-accounting
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("eps", "delta", "k"), [(1.0, 1e-5, 1), (2.0, 1e-6, 10), (0.5, 1e-5, 100)])
def test_pld_calibration_matches_dp_accounting(eps: float, delta: float, k: int) -> None:
    ours = calibrate_sigma(eps, delta, sensitivity=1.0, compositions=k, method="pld")
    assert ours.epsilon <= eps
    assert make_accountant("pld").epsilon(Ledger.homogeneous(1.0, ours.sigma, compositions=k), delta).epsilon <= eps
    # dp-accounting's PLD calibration (Brent, tol 1e-6 in σ), bracketed around its own exact σ.
    exact = dp_accounting.get_sigma_gaussian(eps, delta) * math.sqrt(k)
    theirs = mechanism_calibration.calibrate_dp_mechanism(
        dp_pld.PLDAccountant,
        lambda s: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(s), k),
        eps,
        delta,
        mechanism_calibration.ExplicitBracketInterval(0.99 * exact, 1.01 * exact),
    )
    assert ours.sigma == pytest.approx(theirs, rel=1e-6, abs=2e-6)
    # PLD needs at least the exact σ and, at 1e-4 discretisation, hardly more.
    assert calibrate_sigma(eps, delta, sensitivity=1.0, compositions=k).sigma <= ours.sigma <= exact * (1 + 1e-4)


@pytest.mark.parametrize(("eps", "delta", "k"), [(1.0, 1e-5, 1), (3.0, 1e-8, 50)])
def test_rdp_with_orders_calibration_matches_dp_accounting(eps: float, delta: float, k: int) -> None:
    orders = tuple(float(o) for o in dp_rdp.DEFAULT_RDP_ORDERS)
    ours = calibrate_sigma(eps, delta, sensitivity=1.0, compositions=k, method="rdp", orders=orders)
    assert ours.epsilon <= eps
    assert ours.epsilon == pytest.approx(eps, rel=1e-8)
    theirs = mechanism_calibration.calibrate_dp_mechanism(
        lambda: dp_rdp.RdpAccountant(orders),
        lambda s: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(s), k),
        eps,
        delta,
        mechanism_calibration.LowerEndpointAndGuess(0.1, 1.0),
        tol=1e-9,
    )
    assert ours.sigma == pytest.approx(theirs, rel=1e-7)


# ----------------------------------------------------------------------------------------
# calibrate_ledger_scale: heterogeneous ledgers
# ----------------------------------------------------------------------------------------


@st.composite
def ledgers(draw: st.DrawFn) -> Ledger:
    n = draw(st.integers(1, 4))
    return Ledger(
        tuple(
            GaussianRelease(f"r{i}", draw(st.floats(0.1, 10.0)), draw(st.floats(0.1, 100.0)), draw(st.integers(1, 500)))
            for i in range(n)
        )
    )


@settings(max_examples=examples(60))
@given(ledger=ledgers(), eps=eps_st, delta=delta_st, mc=st.sampled_from(ROUND_TRIP))
def test_ledger_scale_round_trips(ledger: Ledger, eps: float, delta: float, mc: tuple[str, str | None]) -> None:
    c = calibrate_ledger_scale(ledger, eps, delta, method=mc[0], conversion=mc[1])
    got = make_accountant(mc[0], conversion=mc[1]).epsilon(ledger.scaled(c), delta).epsilon
    assert got <= eps
    assert got == pytest.approx(eps, rel=1e-9)


@settings(max_examples=examples(60))
@given(ledger=ledgers(), eps=eps_st, delta=delta_st)
def test_exact_ledger_scale_is_feasible_in_mpmath(ledger: Ledger, eps: float, delta: float) -> None:
    c = calibrate_ledger_scale(ledger, eps, delta)
    mu = ref.ledger_mu([(r.sensitivity, r.sigma * c, r.count) for r in ledger.releases])
    assert ref.gdp_delta(eps, mu) <= delta
    assert ref.gdp_delta(eps, mu * (1 + mpmath.mpf("1e-8"))) > delta * (1 - ref.delta_slack(delta))


@st.composite
def classic_feasible(draw: st.DrawFn) -> tuple[Ledger, float, float]:
    """A ledger and an (ε, δ) target that the classic bound can meet (every share of ε < 1)."""
    ledger = draw(ledgers())
    delta = draw(st.floats(-40.0, math.log(0.1)).map(math.exp))
    ratios = [(r.sensitivity / r.sigma, r.count) for r in ledger.releases]
    total = sum(q * n for q, n in ratios)
    # Release i's share of ε is (qᵢ/Σ qⱼ nⱼ)·ε; the largest share must stay below 1.
    max_eps = total / max(q for q, _ in ratios)
    return ledger, draw(st.floats(0.01, 0.999)) * max_eps, delta


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.filter_too_much])
@given(case=classic_feasible())
def test_classic_ledger_scale_when_feasible(case: tuple[Ledger, float, float]) -> None:
    ledger, eps, delta = case
    c = calibrate_ledger_scale(ledger, eps, delta, method="classic")
    got = make_accountant("classic").epsilon(ledger.scaled(c), delta).epsilon
    assert got <= eps
    assert got == pytest.approx(eps, rel=1e-9)
    triples = [(r.sensitivity, r.sigma * c, r.count) for r in ledger.releases]
    assert ref.classic_composed_epsilon(triples, delta) <= eps


def test_classic_ledger_scale_two_releases_matches_calibrate_sigma() -> None:
    # Two identical releases with (1.5, 1e-5): 0.75 each, feasible for the classic bound.
    split = Ledger((GaussianRelease("a", 1.0, 1.0, 1), GaussianRelease("b", 1.0, 1.0, 1)))
    c = calibrate_ledger_scale(split, 1.5, 1e-5, method="classic")
    assert c == pytest.approx(
        calibrate_sigma(1.5, 1e-5, sensitivity=1.0, compositions=2, method="classic").sigma, rel=1e-12
    )


def test_classic_ledger_scale_refuses_infeasible_share() -> None:
    led = Ledger((GaussianRelease("a", 1.0, 1.0, 1), GaussianRelease("b", 2.0, 3.0, 1)))
    # Shares ∝ Δ/σ = 1 : 2/3, so release a gets 0.6 ε: ε = 3 gives it 1.8 >= 1.
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_ledger_scale(led, 3.0, 1e-5, method="classic")


PLD_SETTINGS = settings(
    max_examples=examples(3),
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


@pytest.mark.slow
@PLD_SETTINGS
@given(ledger=ledgers(), eps=st.floats(0.3, 4.0), delta=st.floats(-20.0, -7.0).map(math.exp))
def test_pld_ledger_scale(ledger: Ledger, eps: float, delta: float) -> None:
    c = calibrate_ledger_scale(ledger, eps, delta, method="pld")
    got = make_accountant("pld").epsilon(ledger.scaled(c), delta).epsilon
    assert got <= eps
    exact_c = calibrate_ledger_scale(ledger, eps, delta, method="exact")
    assert exact_c <= c <= exact_c * (1 + 1e-3)


@settings(max_examples=examples(40))
@given(e1=eps_st, e2=eps_st, delta=delta_st, mc=st.sampled_from(ROUND_TRIP))
def test_sigma_decreasing_in_target_epsilon(e1: float, e2: float, delta: float, mc: tuple[str, str | None]) -> None:
    lo, hi = sorted((e1, e2))
    assume(lo < hi)
    assert (
        calibrate_sigma(hi, delta, sensitivity=1.0, compositions=7, method=mc[0], conversion=mc[1]).sigma
        <= calibrate_sigma(lo, delta, sensitivity=1.0, compositions=7, method=mc[0], conversion=mc[1]).sigma
    )
