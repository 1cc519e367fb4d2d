"""RDP curves of single mechanisms (dpkit.accountant.rdp_mechanisms): soundness, tightness, edges.

References, all recomputed here: dp-accounting's RDP functions (``rdp_privacy_accountant``),
mpmath evaluations (the exact integer-order binomial sum; the defining integral
A_α = ∫ N(z; 0, σ²) (1 − q + q e^{(2z − 1)/(2σ²)})^α dz by quadrature at any order; the closed forms of
Laplace and randomized response), and published vectors with their provenance.

At fractional orders dp-accounting's ``_compute_log_a_frac`` sums the magnitudes of MTZ's series,
an upper bound that is up to ~60 % above the exact value near α = 1; dpkit sums the series with
its signs (Leibniz). So at fractional orders dpkit is checked against the quadrature (never below,
close) and against dp-accounting from below (never above it).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.rdp import rdp_epsilon
from dpkit.accountant.rdp_mechanisms import (
    laplace_rdp,
    poisson_gaussian_rdp,
    randomized_response_rdp,
    sampled_without_replacement_gaussian_rdp,
)
from dpkit.accountant.validation import ArgumentTypeError

DP_ORDERS = np.asarray(dp_rdp.DEFAULT_RDP_ORDERS, dtype=float)
INT_ORDERS = np.array([2.0, 3.0, 4.0, 5.0, 8.0, 16.0, 32.0, 63.0, 128.0, 256.0, 1024.0])
FRAC_ORDERS = np.array([1.01, 1.1, 1.5, 2.5, 3.7, 8.1, 20.5, 60.5])


def _quad_log_a(q: float, sigma: float, alpha: float, dps: int = 40) -> float:
    """log A_α of the Poisson-subsampled Gaussian by mpmath quadrature of its defining integral."""
    with mpmath.workdps(dps):
        qm, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

        def f(z: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(z, 0, s) * (1 - qm + qm * mpmath.exp((2 * z - 1) / (2 * s * s))) ** a

        z0 = s * s * mpmath.log(1 / qm - 1) + mpmath.mpf(0.5)
        pts = sorted({-mpmath.inf, -40 * s, -10 * s, mpmath.mpf(0), z0, mpmath.mpf(1), a, a + 10 * s, mpmath.inf})
        return float(mpmath.log(mpmath.quad(f, pts, maxdegree=10)))


def _exact_int_log_a(q: float, sigma: float, alpha: int, dps: int = 60) -> float:
    """log A_α at an integer order: the binomial sum in mpmath (digits beyond the cancellation)."""
    with mpmath.workdps(dps):
        qm, s2 = mpmath.mpf(q), 2 * mpmath.mpf(sigma) ** 2
        total = mpmath.fsum(
            mpmath.binomial(alpha, j) * (1 - qm) ** (alpha - j) * qm**j * mpmath.expm1((j * j - j) / s2)
            for j in range(2, alpha + 1)
        )
        return float(mpmath.log1p(total))


# ----------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian against dp-accounting


@pytest.mark.parametrize("q", [1e-4, 1e-3, 1e-2, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.7, 1.1, 2.0, 5.0])
def test_poisson_integer_orders_match_dp_accounting(q: float, sigma: float) -> None:
    ours = poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=INT_ORDERS)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, INT_ORDERS)
    # dp-accounting sums 1 + O(q²) in doubles: ~1e-16/(A − 1) relative error, here below 1e-9
    assert np.all(ours >= theirs * (1 - 1e-9))
    assert np.all(ours <= theirs * (1 + 1e-9) + 1e-300)


@pytest.mark.slow
@pytest.mark.parametrize("q", [1e-4, 1e-3, 1e-2, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.7, 1.1, 2.0, 5.0])
def test_poisson_fractional_orders_never_above_dp_accounting(q: float, sigma: float) -> None:
    ours = poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=DP_ORDERS)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, DP_ORDERS)
    finite = np.isfinite(theirs)  # dp-accounting gives up (inf) where its series converges slowly
    assert np.all(np.isfinite(ours))
    assert np.all(ours[finite] <= theirs[finite] * (1 + 1e-9))


# ----------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian against mpmath


@pytest.mark.parametrize(
    ("q", "sigma", "alpha"),
    [(1e-5, 20.0, 2), (1e-3, 1.1, 8), (256 / 60000, 1.1, 32), (0.01, 5.0, 64), (0.1, 0.7, 100), (0.5, 2.0, 7)],
)
def test_poisson_integer_order_matches_exact_sum(q: float, sigma: float, alpha: int) -> None:
    ours = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    exact = _exact_int_log_a(q, sigma, alpha) / (alpha - 1)
    assert exact <= ours <= exact * (1 + 1e-9)


# dp-accounting's test_compute_log_a_equals_mp points (rdp_privacy_accountant_test.py), plus others
QUAD_POINTS = [
    (1e-4, 1.0, 1.5),
    (0.1, 100.0, 20.5),
    (0.1, 2.0, 1.1),
    (0.01, 0.8, 1.1),
    (1e-3, 0.5, 2.5),
    (256 / 60000, 1.1, 8.1),
    (0.5, 1.1, 1.5),
    (0.9, 5.0, 3.7),
    (1e-5, 20.0, 60.5),
]


@pytest.mark.parametrize(("q", "sigma", "alpha"), QUAD_POINTS)
def test_poisson_fractional_order_matches_quadrature(q: float, sigma: float, alpha: float) -> None:
    ours = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    exact = _quad_log_a(q, sigma, alpha) / (alpha - 1)
    assert ours >= exact * (1 - 1e-12)  # the quadrature's own error is far below 1e-12
    assert ours <= exact * (1 + 1e-7)


def test_dp_accounting_fractional_orders_are_loose_near_one() -> None:
    # why the fractional orders are checked against the quadrature and not dp-accounting
    q, sigma, alpha = 0.1, 2.0, 1.1
    exact = _quad_log_a(q, sigma, alpha) / (alpha - 1)
    theirs = float(dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
    ours = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    assert theirs > 1.5 * exact
    assert exact <= ours <= exact * (1 + 1e-9)


def test_poisson_slow_series_is_finite_and_sound() -> None:
    # q = 0.5, σ = 20: dp-accounting's series does not converge in 1000 terms (inf); here the
    # series is stopped after 2^16 terms, an upper bound.
    q, sigma, alpha = 0.5, 20.0, 1.5
    assert math.isinf(dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
    ours = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    exact = _quad_log_a(q, sigma, alpha) / (alpha - 1)
    assert exact <= ours <= exact * (1 + 1e-6)


# ----------------------------------------------------------------------------------------
# Published vectors


def test_dp_accounting_poisson_vector() -> None:
    # dp-accounting, rdp/rdp_privacy_accountant_test.py, test_compute_rdp_poisson_sampled_gaussian:
    # q = 0.01, σ = 2.5, 50 steps, orders [1.5, 2.5, 5, 50, 100, inf], asserted with rtol 1e-4.
    orders = [1.5, 2.5, 5, 50, 100, math.inf]
    published = np.array([6.70579741e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02, 1.67416308e02, math.inf])
    ours = 50 * poisson_gaussian_rdp(q=0.01, noise_multiplier=2.5, orders=orders)
    assert math.isinf(ours[-1])
    np.testing.assert_allclose(ours[2:5], published[2:5], rtol=1e-4)  # integer orders: the same sum
    # fractional orders: dp-accounting's magnitude sum is an upper bound; ours is between the truth and it
    for k, a in enumerate(orders[:2]):
        exact = 50 * _quad_log_a(0.01, 2.5, a) / (a - 1)
        assert exact <= ours[k] <= published[k] * (1 + 1e-4)


def test_tensorflow_privacy_mnist_example() -> None:
    # tensorflow-privacy's DP-SGD MNIST tutorial (compute_dp_sgd_privacy): n = 60000, batch 256,
    # σ = 1.1, 60 epochs, δ = 1e-5, steps = ceil(60 · 60000/256) = 14063 (its compute_dp_sgd_privacy
    # rounds the steps up). ε of dp-accounting's RdpAccountant over its default orders is recomputed here.
    q, sigma, steps, delta = 256 / 60000, 1.1, math.ceil(60 * 60000 / 256), 1e-5
    acc = dp_rdp.RdpAccountant(orders=DP_ORDERS)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps))
    theirs_eps, theirs_order = acc.get_epsilon_and_optimal_order(delta)
    ours = steps * poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=DP_ORDERS)
    integer = DP_ORDERS == np.floor(DP_ORDERS)
    # integer orders: the same sum; dp-accounting's double sum of 1 + O(q²) is off by ~1e-13 relative
    # (at α = 2 it is 1.4e-13 *below* the exact value, which dpkit never is)
    assert np.all(ours[integer] >= acc.rdp[integer] * (1 - 1e-11))
    np.testing.assert_allclose(ours[integer], acc.rdp[integer], rtol=1e-9)
    assert ours[DP_ORDERS == 2.0][0] >= steps * _exact_int_log_a(q, sigma, 2)
    # fractional orders: never above dp-accounting's looser bound, never below the quadrature
    assert np.all(ours[~integer] <= acc.rdp[~integer] * (1 + 1e-12))
    exact = steps * _quad_log_a(q, sigma, theirs_order) / (theirs_order - 1)
    k = int(np.flatnonzero(DP_ORDERS == theirs_order)[0])
    assert exact <= ours[k]
    conv = rdp_epsilon(DP_ORDERS, ours, delta)
    assert conv.order == theirs_order == 8.1
    assert conv.epsilon == pytest.approx(theirs_eps, rel=1e-6)
    assert 2.59 < conv.epsilon < 2.60


# ----------------------------------------------------------------------------------------
# Monotonicity (hypothesis)


@settings(max_examples=examples(40), deadline=None)
@given(
    q=st.floats(1e-5, 0.95),
    ratio=st.floats(1.01, 3.0),
    sigma=st.floats(0.5, 10.0),
    alpha=st.sampled_from([1.3, 2.0, 2.7, 5.0, 12.5, 64.0]),
)
def test_poisson_monotone_in_q(q: float, ratio: float, sigma: float, alpha: float) -> None:
    lo = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    hi = float(poisson_gaussian_rdp(q=min(1.0, q * ratio), noise_multiplier=sigma, orders=alpha))
    assert lo <= hi


@settings(max_examples=examples(40), deadline=None)
@given(
    q=st.floats(1e-5, 0.95),
    ratio=st.floats(1.01, 3.0),
    sigma=st.floats(0.5, 10.0),
    alpha=st.sampled_from([1.3, 2.0, 2.7, 5.0, 12.5, 64.0]),
)
def test_poisson_monotone_in_inverse_sigma(q: float, ratio: float, sigma: float, alpha: float) -> None:
    more_noise = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma * ratio, orders=alpha))
    less_noise = float(poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=alpha))
    assert more_noise <= less_noise
    assert less_noise <= alpha / (2 * sigma**2) * (1 + 1e-12)  # subsampling never hurts


@settings(max_examples=examples(25), deadline=None)
@given(q=st.floats(1e-4, 0.9), sigma=st.floats(0.6, 8.0), alpha=st.floats(1.05, 200.0))
def test_poisson_between_its_integer_neighbours(q: float, sigma: float, alpha: float) -> None:
    # log A_α is convex in α (so below the chord) and ε(α) is non-decreasing in α
    lo, hi = math.floor(alpha), math.ceil(alpha)
    vals = poisson_gaussian_rdp(q=q, noise_multiplier=sigma, orders=[alpha, max(lo, 1.0001), hi])
    # the fractional series is an upper bound whose added error bound is absolute (~1e-18), which dominates the
    # 1e-9 relative slack where the values are ~1e-10 (q = 1e-4, σ = 8): hence the absolute 1e-15
    assert vals[1] * (1 - 1e-9) - 1e-15 <= vals[0] <= vals[2] * (1 + 1e-9) + 1e-15
    if lo >= 2:
        t = alpha - lo
        chord = ((1 - t) * vals[1] * (lo - 1) + t * vals[2] * (hi - 1)) / (alpha - 1)
        assert vals[0] <= chord * (1 + 1e-9) + 1e-15


# ----------------------------------------------------------------------------------------
# Edges and speed


def test_poisson_edges() -> None:
    orders = [1.5, 2.0, 10.0, 1e6, math.inf]
    assert np.all(poisson_gaussian_rdp(q=0.0, noise_multiplier=1.0, orders=orders) == 0.0)
    assert np.all(poisson_gaussian_rdp(q=0.3, noise_multiplier=math.inf, orders=orders) == 0.0)
    assert np.all(np.isinf(poisson_gaussian_rdp(q=0.3, noise_multiplier=0.0, orders=orders)))
    full = poisson_gaussian_rdp(q=1.0, noise_multiplier=2.0, orders=orders[:4])
    np.testing.assert_allclose(full, np.array(orders[:4]) / 8.0, rtol=1e-14)
    assert np.all(full >= np.array(orders[:4]) / 8.0)
    some = poisson_gaussian_rdp(q=0.01, noise_multiplier=1.0, orders=orders)
    assert math.isinf(some[-1]) and np.all(np.isfinite(some[:-1]))
    # huge orders do not overflow to NaN: joint convexity / the chord
    huge = poisson_gaussian_rdp(q=1e-3, noise_multiplier=3.0, orders=[2.0**21, 2.0**21 + 0.5, 1e300])
    assert np.all(~np.isnan(huge)) and np.all(huge > 0)
    assert poisson_gaussian_rdp(q=0.5, noise_multiplier=1.0, orders=3.0).shape == ()
    assert poisson_gaussian_rdp(q=0.5, noise_multiplier=1.0, orders=np.full((2, 3), 3.0)).shape == (2, 3)
    # huge finite σ and tiny q: tiny but positive
    tiny = float(poisson_gaussian_rdp(q=1e-12, noise_multiplier=1e6, orders=2.0))
    assert 0.0 < tiny and tiny == pytest.approx(1e-24 * math.expm1(1e-12), rel=1e-6)


@pytest.mark.parametrize("bad", [1.0, 0.5, -1.0, math.nan])
def test_bad_orders(bad: float) -> None:
    with pytest.raises(ValueError, match="order"):
        poisson_gaussian_rdp(q=0.1, noise_multiplier=1.0, orders=[2.0, bad])


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="q"):
        poisson_gaussian_rdp(q=1.5, noise_multiplier=1.0, orders=2.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        poisson_gaussian_rdp(q=0.5, noise_multiplier=-1.0, orders=2.0)
    with pytest.raises(ArgumentTypeError, match="orders"):
        poisson_gaussian_rdp(q=0.5, noise_multiplier=1.0, orders="2")
    with pytest.raises(ValueError, match="batch"):
        sampled_without_replacement_gaussian_rdp(population=10, batch=11, noise_multiplier=1.0, orders=2.0)
    with pytest.raises(ValueError, match="epsilon"):
        randomized_response_rdp(epsilon=-1.0, orders=2.0)


# ----------------------------------------------------------------------------------------
# Sampling without replacement (WBK 2019)


def _wbk_log_a_mp(q: float, sigma: float, alpha: int) -> float:
    """WBK Theorem 27 for the Gaussian base curve α/(2σ²), in mpmath (as dp-accounting states it)."""
    with mpmath.workdps(80):
        qm, s2 = mpmath.mpf(q), 2 * mpmath.mpf(sigma) ** 2

        def moment(k: int) -> mpmath.mpf:  # E[(L − 1)^k]
            return mpmath.fsum(
                (-1) ** (k - v) * mpmath.binomial(k, v) * mpmath.exp(v * (v - 1) / s2) for v in range(k + 1)
            )

        e2 = 2 / s2
        total = 1 + qm**2 * mpmath.binomial(alpha, 2) * min(4 * mpmath.expm1(e2), 2 * mpmath.exp(e2))
        for i in range(3, alpha + 1):
            m = 4 * mpmath.sqrt(moment(2 * (i // 2)) * moment(2 * ((i + 1) // 2)))
            total += qm**i * mpmath.binomial(alpha, i) * min(m, 2 * mpmath.exp((i - 1) * i / s2))
        return float(mpmath.log(total))


@pytest.mark.parametrize(("q", "sigma", "alpha"), [(0.01, 1.1, 8), (0.001, 5.0, 12), (0.1, 2.0, 20), (0.05, 20.0, 6)])
def test_wor_matches_wbk_in_mpmath(q: float, sigma: float, alpha: int) -> None:
    n = 100_000
    ours = float(
        sampled_without_replacement_gaussian_rdp(population=n, batch=round(q * n), noise_multiplier=sigma, orders=alpha)
    )
    exact = min(_wbk_log_a_mp(q, sigma, alpha), alpha * (alpha - 1) / (2 * sigma**2)) / (alpha - 1)
    assert exact <= ours <= exact * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("q", [1e-3, 1e-2, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.7, 1.1, 5.0])
def test_wor_against_dp_accounting(q: float, sigma: float) -> None:
    n = 100_000
    b = round(q * n)
    ours = sampled_without_replacement_gaussian_rdp(population=n, batch=b, noise_multiplier=sigma, orders=DP_ORDERS)
    theirs = dp_rdp._compute_rdp_sample_wor_gaussian(b / n, sigma, DP_ORDERS)
    gaussian = DP_ORDERS / (2 * sigma**2)
    # the same WBK bound, capped by the unsubsampled Gaussian (subsampling never hurts)
    assert np.all(ours <= theirs * (1 + 1e-8))
    assert np.all(ours >= np.minimum(theirs, gaussian) * (1 - 1e-9))


def test_wor_edges() -> None:
    orders = [1.5, 2.0, 7.0, math.inf]
    assert np.all(
        sampled_without_replacement_gaussian_rdp(population=10, batch=0, noise_multiplier=1, orders=orders) == 0
    )
    full = sampled_without_replacement_gaussian_rdp(population=10, batch=10, noise_multiplier=2.0, orders=orders[:3])
    np.testing.assert_allclose(full, np.array(orders[:3]) / 8.0, rtol=1e-14)
    some = sampled_without_replacement_gaussian_rdp(population=100, batch=3, noise_multiplier=1.0, orders=orders)
    assert math.isinf(some[-1]) and np.all(np.isfinite(some[:-1]))
    inf_noise = sampled_without_replacement_gaussian_rdp(
        population=100, batch=3, noise_multiplier=math.inf, orders=orders
    )
    assert np.all(inf_noise == 0)
    big = sampled_without_replacement_gaussian_rdp(population=100, batch=3, noise_multiplier=3.0, orders=[5000.0, 1e7])
    assert np.all(np.isfinite(big)) and np.all(big <= np.array([5000.0, 1e7]) / 18.0 * (1 + 1e-12))


# ----------------------------------------------------------------------------------------
# Laplace and randomized response


def _laplace_mp(eps: float, alpha: float) -> float:
    with mpmath.workdps(60):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        return float(
            mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)) / (a - 1)
        )


def _rr_mp(eps: float, k: int, alpha: float) -> float:
    with mpmath.workdps(60):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        r = 1 / (mpmath.exp(e) + k - 1)
        p = mpmath.exp(e) * r
        return float(mpmath.log(p**a * r ** (1 - a) + r**a * p ** (1 - a) + (k - 2) * r) / (a - 1))


LAP_ORDERS = [1.001, 1.1, 1.5, 2.0, 3.3, 10.0, 64.0, 1024.0, 1e5]


@pytest.mark.parametrize("eps", [1e-6, 0.01, 0.5, 3.0, 30.0])
def test_laplace_exact(eps: float) -> None:
    ours = laplace_rdp(scale=1.0, sensitivity=eps, orders=LAP_ORDERS)
    exact = np.array([_laplace_mp(eps, a) for a in LAP_ORDERS])
    assert np.all(ours >= exact)
    np.testing.assert_allclose(ours, exact, rtol=1e-12)
    theirs = np.array([dp_rdp._laplace_rdp(eps, a) for a in LAP_ORDERS])
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    assert float(laplace_rdp(scale=1.0 / eps, orders=math.inf)) >= eps


def test_laplace_published_vector() -> None:
    # dp-accounting rdp_privacy_accountant_test.py, test_laplace: order 1e10 ~ pure DP, ε · count
    for eps, count in [(0.01, 1), (1.0, 1), (100.0, 1), (1.0, 100)]:
        curve = count * laplace_rdp(scale=1.0 / eps, orders=[1 + 1e-6, 1e10])
        assert rdp_epsilon([1 + 1e-6, 1e10], curve, 1e-10).epsilon == pytest.approx(eps * count, rel=1e-7)
        assert curve[0] <= min(eps, eps * eps / 2) * count * (1 + 1e-6)


@pytest.mark.parametrize("eps", [1e-6, 0.01, 0.5, 3.0, 30.0])
@pytest.mark.parametrize("k", [2, 5, 100])
def test_randomized_response_exact(eps: float, k: int) -> None:
    ours = randomized_response_rdp(epsilon=eps, k=k, orders=LAP_ORDERS)
    exact = np.array([_rr_mp(eps, k, a) for a in LAP_ORDERS])
    assert np.all(ours >= exact)
    np.testing.assert_allclose(ours, exact, rtol=1e-12)
    assert float(randomized_response_rdp(epsilon=eps, k=k, orders=math.inf)) == eps


@pytest.mark.parametrize(
    ("p", "k", "published"),
    [
        # dp-accounting rdp_privacy_accountant_test.py, test_compute_rdp_randomized_response_replace_one
        (0.3, 10, [2.6946320226546314, 2.983865364028855, 3.11316970070507, 3.1854244842182466, 3.1886682560677593]),
        (0.05, 20, [5.850317703374384, 5.910360162307462, 5.930633082131939, 5.94180620835157, 5.942307807732949]),
        (0.01, 3, [5.684126770932727, 5.692634596034571, 5.695421239467805, 5.696956976543137, 5.697025920968522]),
    ],
)
def test_randomized_response_published_vector(p: float, k: int, published: list[float]) -> None:
    eps = math.log1p(k * (1 - p) / p)
    ours = randomized_response_rdp(epsilon=eps, k=k, orders=[1.5, 2.5, 5, 50, 100])
    np.testing.assert_allclose(ours, published, rtol=1e-9)


def test_laplace_and_rr_edges() -> None:
    orders = [1.5, math.inf]
    assert np.all(laplace_rdp(scale=math.inf, orders=orders) == 0)
    assert np.all(laplace_rdp(scale=1.0, sensitivity=0.0, orders=orders) == 0)
    assert np.all(np.isinf(laplace_rdp(scale=0.0, orders=orders)))
    assert np.all(randomized_response_rdp(epsilon=0.0, orders=orders) == 0)
    assert np.all(randomized_response_rdp(epsilon=3.0, k=1, orders=orders) == 0)
    assert np.all(np.isinf(randomized_response_rdp(epsilon=math.inf, orders=orders)))
    # huge orders: no overflow
    assert np.all(np.isfinite(laplace_rdp(scale=1.0, orders=[1e300]))) and np.all(
        np.isfinite(randomized_response_rdp(epsilon=2.0, orders=[1e300]))
    )
