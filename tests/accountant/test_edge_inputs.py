"""Edge inputs of the Gaussian/RDP/zCDP/GDP paths get the right answer, never an error or an overflow.

α = ∞ in an RDP curve (its value is the pure ε), ε_R(α) = +inf, ε near the largest double, a
subnormal δ or ρ, σ near the ends of the doubles and huge compositions. References: the
mathematics (closed forms, checked with mpmath) and dp-accounting's RDP accountant recomputed here.
"""

from __future__ import annotations

import math
import re
from typing import Any

import dp_accounting
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit import accountant as a
from dpkit.accountant.pld import PLD_MIN_MU

INF = math.inf
CONVERSIONS = ["improved", "mironov"]


# --- α = ∞ and infinite values in an RDP curve ----------------------------------------------------------------


def _rr(eps0: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Binary randomized response with pure ε0: P = (p, 1 − p), Q = (1 − p, p), p = e^ε0/(1 + e^ε0)."""
    p = mpmath.e ** mpmath.mpf(eps0) / (1 + mpmath.e ** mpmath.mpf(eps0))
    return p, 1 - p


def _rr_curve(eps0: float, orders: list[float]) -> list[float]:
    """Its Rényi divergence at each order (α = ∞: ε0), rounded up (a curve must not understate)."""
    with mpmath.workdps(40):
        p, q = _rr(eps0)
        out = []
        for alpha in orders:
            if alpha == INF:
                out.append(eps0)
                continue
            al = mpmath.mpf(alpha)
            d = mpmath.log(p**al * q ** (1 - al) + q**al * p ** (1 - al)) / (al - 1)
            out.append(float(d) * (1 + 1e-15) + 1e-300)
        return out


def _rr_delta(eps0: float, eps: float) -> float:
    """True δ(ε) of randomized response: (e^ε0 − e^ε)/(1 + e^ε0) for ε < ε0, else 0."""
    with mpmath.workdps(40):
        return float(max(0, (mpmath.e ** mpmath.mpf(eps0) - mpmath.e ** mpmath.mpf(eps)) / (1 + mpmath.e**eps0)))


def _rr_epsilon(eps0: float, delta: float) -> float:
    """True ε(δ) of randomized response: ln(e^ε0 − δ(1 + e^ε0)), or 0."""
    with mpmath.workdps(40):
        inner = mpmath.e ** mpmath.mpf(eps0) - mpmath.mpf(delta) * (1 + mpmath.e**eps0)
        return float(mpmath.log(inner)) if inner > 1 else 0.0


ORDERS = [1.5, 2.0, 4.0, 16.0, 64.0, INF]


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_order_infinity_bounds_epsilon_by_the_pure_epsilon_at_every_delta(conversion: Any, eps0: float) -> None:
    values = _rr_curve(eps0, ORDERS)
    assert a.rdp_epsilon(ORDERS, values, 0.0, conversion=conversion).epsilon == eps0  # exact at δ = 0
    for delta in [5e-324, 1e-300, 1e-10, 1e-5, 1e-2, 0.1, 0.4, 0.9]:
        got = a.rdp_epsilon(ORDERS, values, delta, conversion=conversion)
        assert _rr_epsilon(eps0, delta) <= got.epsilon <= eps0, (delta, got)  # sound, and never above ε0
    # without α = ∞ a positive curve is not pure DP: ε(0) = inf
    assert a.rdp_epsilon(ORDERS[:-1], values[:-1], 0.0, conversion=conversion).epsilon == INF


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_order_infinity_gives_delta_zero_from_the_pure_epsilon(conversion: Any, eps0: float) -> None:
    values = _rr_curve(eps0, ORDERS)
    for eps in [eps0, eps0 * 1.5, 1e308, INF]:
        assert a.rdp_delta(ORDERS, values, eps, conversion=conversion).delta == 0.0
    for frac in [0.0, 0.3, 0.9, 0.999]:
        eps = eps0 * frac
        got = a.rdp_delta(ORDERS, values, eps, conversion=conversion).delta
        assert _rr_delta(eps0, eps) <= got <= -math.expm1(eps - eps0) * (1 + 1e-9)  # sound; the α = ∞ bound


def test_order_infinity_alone_and_infinite_values() -> None:
    assert a.rdp_epsilon([INF], [2.0], 0.0).epsilon == 2.0
    assert a.rdp_epsilon([INF], [2.0], 0.5).epsilon == pytest.approx(2.0 + math.log(0.5), rel=1e-12)
    assert a.rdp_epsilon([INF], [2.0], 0.5).epsilon >= 2.0 + math.log(0.5)
    assert a.rdp_delta([INF], [2.0], 2.0).delta == 0.0
    assert a.rdp_epsilon([INF], [INF], 1e-5).epsilon == INF
    assert a.rdp_epsilon([INF], [0.0], 0.0).epsilon == 0.0
    # ε_R(α) = inf at some order is allowed and changes nothing: that order gives no bound
    base = a.rdp_epsilon([2.0, 8.0], [0.1, 0.4], 1e-5)
    assert a.rdp_epsilon([2.0, 8.0, 32.0], [0.1, 0.4, INF], 1e-5) == base
    assert a.rdp_delta([2.0, 8.0, 32.0], [0.1, 0.4, INF], 1.0) == a.rdp_delta([2.0, 8.0], [0.1, 0.4], 1.0)
    assert a.rdp_epsilon([2.0, 8.0], [INF, INF], 1e-5).epsilon == INF
    assert a.rdp_delta([2.0, 8.0], [INF, INF], 3.0).delta == 1.0
    for bad in (math.nan, -INF, -1.0):
        with pytest.raises(ValueError, match=r"orders\[1\]"):
            a.rdp_epsilon([2.0, bad], [0.1, 0.2], 1e-5)
        with pytest.raises(ValueError, match=r"values\[1\]"):
            a.rdp_epsilon([2.0, 4.0], [0.1, bad], 1e-5)


def test_rdp_accountant_takes_order_infinity() -> None:
    ledger = a.Ledger.homogeneous(1.0, 3.0, compositions=4)
    with_inf = a.make_accountant("rdp", orders=[2.0, 8.0, INF])
    without = a.make_accountant("rdp", orders=[2.0, 8.0])
    assert with_inf.epsilon(ledger, 1e-5).epsilon == without.epsilon(ledger, 1e-5).epsilon  # ε_R(∞) = ∞ here
    assert with_inf.epsilon(ledger, 0.0).epsilon == INF


def _dp_accounting_curve() -> tuple[np.ndarray, np.ndarray, Any]:
    """tensorflow-privacy's MNIST DP-SGD example: q = 256/60000, σ = 1.1, 60 epochs, by dp-accounting's RDP."""
    q, steps = 256 / 60000, int(60 * 60000 / 256)
    acc = dp_accounting.rdp.RdpAccountant()  # its default orders, all finite
    acc.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(1.1)), steps
        )
    )
    return acc.orders, acc.rdp, acc


@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_a_dp_accounting_curve_converts_as_dp_accounting_does(conversion: Any) -> None:
    orders, rdp, acc = _dp_accounting_curve()
    got = a.rdp_epsilon(orders, rdp, 1e-5, conversion=conversion).epsilon
    ref = acc.get_epsilon(1e-5)  # dp-accounting uses the improved conversion (Canonne, Kamath, Steinke)
    if conversion == "improved":
        assert ref <= got <= ref * (1 + 1e-12)
    else:
        assert got >= ref  # Mironov's conversion is looser
    d = a.rdp_delta(orders, rdp, got, conversion="improved").delta
    assert acc.get_delta(got) <= d <= 1e-5 * (1 + 1e-8)  # δ is rounded up by conservative_delta's margin


# --- huge ε, subnormal δ and ρ: the linear curve and zCDP ---------------------------------------------------


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("rho", [5e-324, 1e-300, 1e-3, 0.5, 1e100, 1e308])
def test_linear_rdp_never_overflows(conversion: Any, rho: float) -> None:
    for eps in [0.0, 1.0, 1e20, 1e200, 1e308]:
        d = a.linear_rdp_delta(rho, eps, conversion=conversion).delta
        assert 0.0 <= d <= 1.0
        if eps >= 1e20 and rho <= 0.5:  # true δ is far below the smallest double
            assert d <= 1e-300
    for delta in [5e-324, 1e-300, 1e-5, 0.5]:
        e = a.linear_rdp_epsilon(rho, delta, conversion=conversion).epsilon
        assert e >= 0.0
        if rho <= 1e100:
            assert e < INF
        if rho >= 1e100:  # ε >= ρ (the curve's value at α → 1 is ρ = KL)
            assert e >= rho * (1 - 1e-12)


@pytest.mark.parametrize("conversion", ["bun-steinke", "rdp-optimal", "gaussian-exact"])
@pytest.mark.parametrize("epsilon", [1e300, 1e308, 1.7976931348623157e308])
def test_rho_of_the_largest_epsilons_is_answered(conversion: Any, epsilon: float) -> None:
    """ρ of the largest ε: once an OverflowError (the square of ε's root) or, for gaussian-exact, the cap μ = 1e150
    (ρ = 5e299 at ε = 1e308). ρ ≈ ε there (ε = ρ + 2√(ρ ln 1/δ)): answered, sound and within 1e-9 of ε."""
    rho = a.zcdp_rho(epsilon, 1e-5, conversion=conversion)
    assert epsilon * (1 - 1e-9) <= rho <= epsilon
    assert a.zcdp_epsilon(rho, 1e-5, conversion=conversion) <= epsilon


def test_bun_steinke_at_the_largest_rho_is_finite() -> None:
    # ε = ρ + 2 sqrt(ρ ln(1/δ)): ρ ln(1/δ) overflows, sqrt(ρ) sqrt(ln(1/δ)) does not
    eps = a.zcdp_epsilon(1e308, 1e-5)
    assert 1e308 <= eps < INF
    assert a.zcdp_delta(1e308, 1e308) == 1.0  # α* = (ε + ρ)/(2ρ) = 1: no bound from Mironov's conversion
    assert a.zcdp_delta(0.5, 1e308) == 0.0


@pytest.mark.parametrize("rho,eps", [(0.5, 3.0), (2.0, 30.0), (1e-4, 0.1)])
def test_mironov_delta_is_still_the_closed_form(rho: float, eps: float) -> None:
    ref = math.exp(-((eps - rho) ** 2) / (4 * rho))
    got = a.zcdp_delta(rho, eps)
    assert ref <= got <= ref * (1 + 1e-7)  # rounded up by conservative_delta's margin (1e-10 |log δ|)


@pytest.mark.parametrize("mu", [1 / 3, 1.0, 5.0])
def test_gdp_epsilon_at_a_subnormal_delta_is_sound_and_tight(mu: float) -> None:
    delta = 5e-324
    eps = a.gdp_epsilon(mu, delta)

    def true_delta(e: float) -> Any:
        with mpmath.workdps(60):
            m, x = mpmath.mpf(mu), mpmath.mpf(e)
            return mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)

    assert true_delta(eps) <= delta  # sound
    assert true_delta(eps * (1 - 1e-6)) > delta  # tight
    for method, conv in [("rdp", None), ("rdp", "mironov"), ("zcdp", None), ("zcdp", "rdp-optimal")]:
        e = a.make_accountant(method, conversion=conv).epsilon(a.Ledger.homogeneous(1.0, 1 / mu), delta).epsilon
        assert eps * (1 - 1e-12) <= e < INF


# --- σ near the ends of the doubles, huge compositions -----------------------------------------------------


@pytest.mark.parametrize("sigma", [1e155, 1e300])
def test_pld_at_a_vanishing_mu_answers_the_exact_profile(sigma: float) -> None:
    ledger = a.Ledger.homogeneous(1.0, sigma)
    assert ledger.mu < PLD_MIN_MU
    for delta in [1e-5, 0.5]:
        assert a.gaussian_epsilon(sigma, delta, method="pld").epsilon == a.gaussian_epsilon(sigma, delta).epsilon
    d = a.gaussian_delta(sigma, 0.0, method="pld").delta
    assert d == a.gaussian_delta(sigma, 0.0).delta and d > 0.0
    cmp = a.compare_methods(ledger, 1e-5)
    assert cmp.refusals == {}
    assert all(v is not None and 0.0 <= v < 1e-150 for v in cmp.epsilons.values())


def test_just_above_the_pld_limit_dp_accounting_still_answers() -> None:
    eps = a.gaussian_epsilon(1e140, 1e-5, method="pld").epsilon
    assert a.gaussian_epsilon(1e140, 1e-5).epsilon == 0.0 <= eps <= 1e-300  # 0 rounded up
    assert a.gaussian_delta(1e140, 0.0, method="pld").delta >= a.gaussian_delta(1e140, 0.0).delta


VARIANTS = [(m, c) for _, m, c in a.VARIANTS]


@pytest.mark.parametrize("method,conversion", VARIANTS)
def test_a_huge_epsilon_is_delta_zero_under_every_method(method: str, conversion: str | None) -> None:
    for eps in [1e20, 1e200, 1e308]:
        try:
            d = a.gaussian_delta(3.0, eps, method=method, conversion=conversion).delta
        except ValueError as err:  # only classic refuses (ε >= 1 per release), with its reason
            assert method == "classic" and "epsilon < 1" in str(err)
            continue
        floor = 1e-15 if method == "pld" else 1e-300  # PLD's tail truncation (sound, documented)
        assert 0.0 <= d <= floor


@pytest.mark.parametrize("method,conversion", [v for v in VARIANTS if v[0] not in ("pld", "classic")])
def test_huge_compositions_keep_every_method_above_exact(method: str, conversion: str | None) -> None:
    k = 10**300
    exact = a.gaussian_epsilon(3.0, 1e-5, compositions=k).epsilon
    assert exact >= k / 9 / 2  # μ²/2 with μ² = K/σ²
    got = a.gaussian_epsilon(3.0, 1e-5, compositions=k, method=method, conversion=conversion).epsilon
    assert got >= exact * (1 - 1e-12)
    assert a.gaussian_delta(3.0, 1.0, compositions=k, method=method, conversion=conversion).delta == 1.0


# --- counts beyond the doubles: the right answer, or a ValueError naming the count --------------------------------

#: Counts a double cannot hold (the largest double is about 1.8e308), and the nearest ones it can.
HUGE_COUNTS = [10**300, 2**1023, 2**1024, 10**400, 10**5000]
GAUSSIAN_VARIANTS = [(m, c) for m, c in VARIANTS if m not in ("pld", "classic")]


def _mu(count: int, sensitivity: float, sigma: float) -> mpmath.mpf:
    """√K·Δ/σ at 60 digits: the μ of K compositions, whatever K's size."""
    with mpmath.workdps(60):
        return mpmath.sqrt(mpmath.mpf(count)) * mpmath.mpf(sensitivity) / mpmath.mpf(sigma)


def test_the_issue_composition_is_answered_epsilon_infinite() -> None:
    """gaussian_epsilon(1, 1e-5, compositions=10**400): μ = 10²⁰⁰, ε = +inf (not an OverflowError)."""
    assert a.gaussian_epsilon(1, 1e-5, compositions=10**400).epsilon == INF
    assert a.gaussian_delta(1, 1.0, compositions=10**400).delta == 1.0
    ledger = a.Ledger.from_dicts([{"name": "g", "sensitivity": 1.0, "sigma": 1.0, "count": 10**400}])
    assert ledger.mu == pytest.approx(1e200, rel=1e-12) and ledger.rho == INF


@pytest.mark.parametrize(("method", "conversion"), GAUSSIAN_VARIANTS)
@pytest.mark.parametrize("count", HUGE_COUNTS, ids=lambda k: f"2^{k.bit_length() - 1}")
@pytest.mark.parametrize("sigma", [1.0, 1e200, 1e300])
def test_a_count_beyond_the_doubles_is_composed_exactly(
    method: str, conversion: str | None, count: int, sigma: float
) -> None:
    """μ = √K/σ is the double nearest (never below) the exact one, and each method answers at it: +inf where
    μ is beyond the doubles, a finite ε where the noise makes up for the count (σ = 1e300: μ = 1e-100 at 10⁴⁰⁰)."""
    exact_mu = _mu(count, 1.0, sigma)
    mu = a.Ledger.homogeneous(1.0, sigma, compositions=count).mu
    if exact_mu > 1.7e308:
        assert mu == INF
    else:
        assert exact_mu <= mu <= exact_mu * (1 + 1e-12)
    eps = a.gaussian_epsilon(sigma, 1e-5, compositions=count, method=method, conversion=conversion).epsilon
    # the exact ε (+inf beyond μ ≈ 1.9e154, where it is beyond the doubles)
    reference = a.gdp_epsilon(mu, 1e-5) if mu < INF else INF
    assert eps >= reference * (1 - 1e-12)  # no method below the exact ε
    if mu == INF:
        assert eps == INF


@pytest.mark.parametrize("count", HUGE_COUNTS, ids=lambda k: f"2^{k.bit_length() - 1}")
def test_calibration_of_a_count_beyond_the_doubles(count: int) -> None:
    """σ = √K·σ₁ (the exact method's σ is linear in √K): finite while it is a double, else a ValueError naming the
    count; the classic σ ∝ K names compositions too."""
    one = a.calibrate_sigma(1.0, 1e-5).sigma
    try:
        sigma = a.calibrate_sigma(1.0, 1e-5, compositions=count).sigma
    except ValueError as err:
        assert _mu(count, one, 1.0) > 1.7e308 and "compositions" in str(err), err
    else:
        assert float(_mu(count, one, 1.0)) * (1 - 1e-9) <= sigma <= float(_mu(count, one, 1.0)) * (1 + 1e-9)
    try:  # σ = Δ·K·sqrt(2 ln(1.25K/δ))/ε: a double up to K ≈ 1e306
        classic = a.classic_sigma(1.0, 1e-5, compositions=count)
    except ValueError as err:
        assert re.search(r"compositions = \d\.\d{3}e\+\d+", str(err)), err
    else:
        with mpmath.workdps(60):
            k = mpmath.mpf(count)
            assert classic >= float(k * mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) * k / mpmath.mpf(1e-5))))


@pytest.mark.parametrize("count", [10**400, 10**5000], ids=["10^400", "10^5000"])
def test_pld_names_a_count_it_cannot_compose(count: int) -> None:
    """dp-accounting composes a count as a double: beyond them the pld method refuses, naming the count."""
    with pytest.raises(ValueError, match=r"pld: g\.count = 1\.000e\+\d+ is beyond"):
        a.make_accountant("pld").epsilon(a.Ledger.homogeneous(1.0, 1e300, compositions=count, name="g"), 1e-5)


@pytest.mark.parametrize(("method", "conversion"), [(m, c) for m, c in VARIANTS if m != "exact"])
def test_an_event_composed_beyond_the_doubles_is_answered_or_names_the_count(
    method: str, conversion: str | None
) -> None:
    """Nested counts multiply (10²⁰⁰ × 10²⁰⁰): a method answers (+inf for a Laplace release) or names the count."""
    from dpkit.accountant import events as ev

    nested = ev.SelfComposedEvent(ev.SelfComposedEvent(ev.LaplaceEvent(1.0), 10**200), 10**200)
    acc = a.make_accountant(method, conversion=conversion)
    try:
        eps = acc.epsilon(nested, 1e-5).epsilon
    except ValueError as err:
        assert "count = 1.000e+400" in str(err) or "releases" in str(err), err
    else:
        assert eps == INF


@settings(max_examples=examples(60), deadline=None, derandomize=True, database=None)
@given(
    count=st.one_of(st.integers(min_value=1, max_value=10**1200), st.sampled_from(HUGE_COUNTS)),
    function=st.sampled_from(
        [
            lambda k: a.gaussian_epsilon(2.0, 1e-5, compositions=k).epsilon,
            lambda k: a.gaussian_delta(2.0, 1.0, compositions=k).delta,
            lambda k: a.calibrate_sigma(1.0, 1e-5, compositions=k).sigma,
            lambda k: a.classic_sigma(1.0, 1e-5, compositions=k),
            lambda k: a.gaussian_epsilon(1e300, 1e-5, compositions=k, method="zcdp").epsilon,
            lambda k: a.gaussian_epsilon(1e300, 1e-5, compositions=k, method="rdp").epsilon,
            lambda k: a.gaussian_epsilon(1e300, 1e-5, compositions=k, method="classic").epsilon,
            lambda k: a.make_accountant("pld").epsilon(a.Ledger.homogeneous(1.0, 1e300, compositions=k), 1e-5).epsilon,
            lambda k: a.tree_epsilon(k, sigma=1.0, delta=1e-5).epsilon,
            lambda k: a.calibrate_tree_sigma(k, epsilon=1.0, delta=1e-5).sigma,
            lambda k: a.rlsvi_worst_case_mu(states=2, actions=2, horizon=4, episodes=k),
            lambda k: a.rlsvi_closed_form(states=2, actions=2, horizon=4, episodes=k, delta=1e-5).epsilon_paper,
            lambda k: a.episode_sum_sensitivity(1.0, steps=k, relation="replace_one"),
            lambda k: a.assess_ledger(a.Ledger.homogeneous(1.0, 10.0), delta=1e-5, users=k).certified_epsilon,
            lambda k: a.compare_methods(a.Ledger.homogeneous(1.0, 1e200, compositions=k), 1e-5).epsilons["exact"],
        ]
    ),
)
def test_no_public_function_taking_a_count_overflows(count: int, function: Any) -> None:
    """Any integer count is answered (a float or +inf) or refused with a ValueError naming a count and its value:
    never an OverflowError (issue 34)."""
    try:
        value = function(count)
    except ValueError as err:
        message = str(err)
        assert any(n in message for n in ("compositions", "count", "steps", "episodes", "release")), message
        assert any(c.isdigit() for c in message), message
    else:
        assert value is None or isinstance(value, float) and not math.isnan(value)


# --- a target that looks like a mistake is answered, with a warning ----------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "delta", "reasons"),
    [
        (1e-5, 1.0, ("at least 0.5", "larger than epsilon")),  # the issue's swap: δ = 1 is vacuous, σ = 0
        (1.0, 0.5, ("at least 0.5",)),
        (0.01, 0.1, ("larger than epsilon",)),
    ],
)
def test_a_suspicious_target_is_answered_with_a_warning(epsilon: float, delta: float, reasons: tuple[str, ...]) -> None:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cal = a.calibrate_sigma(epsilon, delta)
    assert [w.category for w in caught] == [a.SuspiciousTargetWarning] * len(reasons)
    for w, reason in zip(caught, reasons, strict=True):
        assert reason in str(w.message) and f"delta = {delta:g}" in str(w.message)
        assert w.filename == __file__  # attributed to the caller
    if delta == 1.0:
        assert cal.sigma == 0.0  # δ = 1 is met by every mechanism: no noise
    else:
        assert cal.sigma > 0.0 and a.gaussian_epsilon(cal.sigma, delta).epsilon <= epsilon


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.0, 1e-5), (INF, 1e-5), (1.0, 0.0), (8.0, 0.49)])
def test_a_usual_target_gives_no_warning(epsilon: float, delta: float) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a.calibrate_sigma(epsilon, delta)


def test_the_module_docstring_says_what_calibration_answers() -> None:
    """The ends it documents are answered (no longer "calibrating σ still needs 0 < δ < 1 and ε > 0")."""
    doc = a.__doc__ or ""
    assert "still needs 0 < δ < 1" not in doc
    assert "σ = +inf at δ = 0" in doc and a.calibrate_sigma(1.0, 0.0).sigma == INF
    assert "σ = 0 at δ = 1 or ε = +inf" in doc
    assert a.calibrate_sigma(INF, 1e-5).sigma == 0.0
    with pytest.warns(a.SuspiciousTargetWarning, match="at least 0.5"):
        assert a.calibrate_sigma(1.0, 1.0).sigma == 0.0
    assert "a finite σ at ε = 0" in doc and 0.0 < a.calibrate_sigma(0.0, 1e-5).sigma < INF


# --- huge μ and ε: the Gaussian tail bound, checked in high precision (no minutes of mpmath per call) ----------------


def _gdp_delta_mp(mu: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of μ-GDP, Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), at enough digits for the cancellation of huge μ."""
    with mpmath.workdps(60 + 3 * int(math.log10(max(mu, 10.0)))):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("mu", [1e15, 3e20, 1e50, 1e100, 9e149, 1e152, 1.8e154])
@pytest.mark.parametrize("delta", [1e-5, 1e-300, 0.3])
def test_epsilon_of_a_huge_mu_is_sound_and_tight(mu: float, delta: float) -> None:
    eps = a.gdp_epsilon(mu, delta)
    assert _gdp_delta_mp(mu, eps) <= delta  # sound
    assert _gdp_delta_mp(mu, eps * (1 - 1e-12)) > delta  # tight: 1e-12 less ε is not enough


@pytest.mark.parametrize("epsilon", [1e30, 1e60, 1e200, 2e299, 1e300, 1e308, 1.7976931348623157e308])
@pytest.mark.parametrize("delta", [1e-5, 1e-300])
def test_mu_of_a_huge_epsilon_is_sound_and_tight(epsilon: float, delta: float) -> None:
    mu = a.gdp_mu(epsilon, delta)
    assert _gdp_delta_mp(mu, epsilon) <= delta  # sound
    assert _gdp_delta_mp(mu * (1 + 1e-12), epsilon) > delta  # tight


@pytest.mark.parametrize("epsilon", [1e300, 1e308, 1.7976931348623157e308])
def test_mu_of_the_largest_epsilons_is_the_mu_they_allow(epsilon: float) -> None:
    """Issue 43: ``gdp_mu(1e308, 1e-5)`` once answered 1e150, a cap, for the μ ≈ √(2ε) = 1.41e154 that ε allows. Every
    finite ε has its μ, a double (at most 1.9e154), never above the truth and within 1e-14 of it; its ε, read back, is
    finite and at most ε; a μ just beyond the largest has an ε beyond the doubles (+inf)."""
    for delta in (1e-5, 1e-300):
        mu = a.gdp_mu(epsilon, delta)
        with mpmath.workdps(50):  # the tail bound's μ, 2ε/(z + √(z² + 2ε)); the exact μ is larger by ~1e-150
            e, z = mpmath.mpf(epsilon), mpmath.sqrt(2 * mpmath.log(1 / mpmath.mpf(delta)))
            truth = 2 * e / (z + mpmath.sqrt(z * z + 2 * e))
            assert truth * (1 - mpmath.mpf(1e-14)) <= mu <= truth
        assert a.gdp_epsilon(mu, delta) <= epsilon
    assert a.gdp_epsilon(1.9e154, 1e-5) == INF
