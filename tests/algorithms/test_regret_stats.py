"""The statistics of regret curves (dpkit.algorithms.regret_stats)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.envs.lq import random_lq
from dpkit.algorithms.envs.tabular import TabularMDP, riverswim
from dpkit.algorithms.regret_stats import (
    SlopeInterval,
    band_limits,
    loglog_slope,
    mean_band,
    slope_interval,
    uniform_lq_regret,
    uniform_tabular_regret,
    verdict,
)
from dpkit.algorithms.simulation import regret_slope

K = 2000
KS = np.arange(1, K + 1, dtype=float)


@pytest.mark.parametrize("a", [0.25, 0.5, 0.8, 1.0, 1.3])
@pytest.mark.parametrize("c", [0.01, 3.0, 700.0])
def test_slope_of_a_power_law_is_its_exponent(a: float, c: float) -> None:
    assert loglog_slope(c * KS**a) == pytest.approx(a, abs=1e-12)
    curves = np.stack([c * KS**a] * 4)
    got = slope_interval(curves, rng=0)
    assert (got.slope, got.low, got.high) == pytest.approx((a, a, a), abs=1e-12)


def test_slope_agrees_with_regret_slope() -> None:
    rng = np.random.default_rng(5)
    curve = np.cumsum(rng.exponential(size=K) / np.sqrt(KS))
    assert loglog_slope(curve) == pytest.approx(regret_slope(curve), abs=1e-12)
    assert loglog_slope(curve, start=0.3) == pytest.approx(regret_slope(curve, start=0.3), abs=1e-12)


def test_slope_uses_the_last_decade_only() -> None:
    # linear up to K/10, flat (slope 0 in log-log… almost) after: only the tail counts
    curve = np.minimum(KS, K / 10)
    assert loglog_slope(curve) == pytest.approx(0.0, abs=1e-12)
    curve = np.where(KS < K / 20, 1.0, KS)  # a burn-in before the decade changes nothing
    assert loglog_slope(curve) == pytest.approx(1.0, abs=1e-12)


def test_band_of_identical_curves_has_zero_width() -> None:
    mean, half = mean_band(np.stack([np.sqrt(KS)] * 10))
    np.testing.assert_allclose(mean, np.sqrt(KS))
    np.testing.assert_array_equal(half, 0.0)


def test_band_is_the_student_t_interval() -> None:
    curves = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]])
    mean, half = mean_band(curves)
    np.testing.assert_allclose(mean, [3.0, 6.0])
    t = 4.302652729911275  # t_{2, 0.975}
    np.testing.assert_allclose(half, [t * 2.0 / np.sqrt(3.0), t * 4.0 / np.sqrt(3.0)])
    _, one = mean_band(curves[:1])
    assert np.isnan(one).all()


def test_band_covers_the_true_mean_at_its_level() -> None:
    rng = np.random.default_rng(0)
    hits = 0
    trials = 400
    for _ in range(trials):
        curves = 5.0 + rng.standard_normal((10, 3))
        mean, half = mean_band(curves)
        hits += int(abs(mean[0] - 5.0) <= half[0])
    assert 0.92 <= hits / trials <= 0.98


def test_interval_covers_the_exponent_of_noisy_power_laws() -> None:
    rng = np.random.default_rng(1)
    a, covered, trials = 0.6, 0, 60
    for t in range(trials):
        scale = rng.lognormal(0.0, 0.3, size=(10, 1))  # each seed its own constant
        steps = KS**a - (KS - 1.0) ** a  # E[R(k)] = E[scale]·k^a exactly
        curves = scale * np.cumsum(rng.exponential(size=(10, K)) * steps, axis=1)
        got = slope_interval(curves, rng=t, resamples=500)
        assert got.low <= got.slope <= got.high
        covered += int(got.low <= a <= got.high)
    assert covered / trials >= 0.8


def test_interval_is_reproducible_and_validated() -> None:
    curves = np.cumsum(np.random.default_rng(2).random((10, 500)), axis=1)
    assert slope_interval(curves, rng=3) == slope_interval(curves, rng=3)
    single = slope_interval(curves[:1], rng=3)
    assert single.low == single.slope == single.high
    with pytest.raises(ValueError):
        slope_interval(curves, rng=0, level=1.5)
    with pytest.raises(ValueError):
        loglog_slope(curves, start=0.0)
    with pytest.raises(ValueError):
        mean_band(np.ones((2, 1)))


def test_zero_curves_have_no_slope() -> None:
    assert np.isnan(loglog_slope(np.zeros(100)))
    assert verdict(slope_interval(np.zeros((3, 100)), rng=0)) == "not shown sublinear"


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.4, 0.9, "sublinear"),
        (0.4, 0.95, "sublinear"),
        (0.4, 0.99, "near-linear"),
        (0.992, 0.997, "near-linear"),  # RLSVI's 0.995 [0.992, 0.997] on a visibly straight line (issue 33)
        (0.8, 1.0, "not shown sublinear"),
        (0.96, 1.02, "linear"),
        (0.5, 1.2, "not shown sublinear"),
    ],
)
def test_verdict(low: float, high: float, expected: str) -> None:
    assert verdict(SlopeInterval((low + high) / 2, low, high, 0.95, 100)) == expected


def test_band_limits_never_go_below_zero() -> None:
    # three seeds, one far above the others: the t-band of the mean reaches below 0, which regret never does
    curves = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 30.0, 60.0]])
    mean, half = mean_band(curves)
    assert np.any(mean - half < 0.0)
    lower, upper = band_limits(mean, half)
    assert np.all(lower >= 0.0) and np.array_equal(upper, mean + half)
    assert np.array_equal(lower[mean - half >= 0.0], (mean - half)[mean - half >= 0.0])  # clipped only below 0
    lower, _ = band_limits(np.array([1.0, 2.0]), np.array([np.nan, np.nan]))  # one seed: no band
    assert np.all(np.isnan(lower))


def test_uniform_regret_of_a_two_state_chain_by_hand() -> None:
    # H = 1: rewards 1 (action 1) and 0 (action 0) in the start state: the uniform policy loses 1/2
    p = np.zeros((1, 2, 2, 2))
    p[..., 0] = 1.0
    r = np.array([[[0.0, 1.0], [0.0, 0.0]]])
    assert uniform_tabular_regret(TabularMDP(p, r)) == pytest.approx(0.5)


def test_uniform_regret_on_riverswim_matches_a_monte_carlo() -> None:
    env = riverswim(2)
    exact = uniform_tabular_regret(env)
    _, v = env.optimal_values()
    rng = np.random.default_rng(0)
    runs, total = 20000, 0.0
    for _ in range(runs):
        s = env.initial_state
        for h in range(env.horizon):
            a = int(rng.integers(2))
            total += env.rewards[h, s, a]
            s = int(rng.choice(env.states, p=env.transitions[h, s, a]))
    assert exact == pytest.approx(v[0, 0] - total / runs, abs=0.01)
    assert 0.0 < exact <= 1.0


def test_uniform_lq_regret_matches_a_monte_carlo() -> None:
    system = random_lq(2, 1, 10, np.random.default_rng(0))
    exact = uniform_lq_regret(system)
    rng = np.random.default_rng(1)
    runs = 40000
    n, h = system.state_dim, system.horizon
    w = rng.standard_normal((runs, h, n))  # uniform in the C_w-ball: direction × radius U^(1/n)
    w *= (system.noise_bound * rng.random((runs, h, 1)) ** (1 / n)) / np.linalg.norm(w, axis=2, keepdims=True)
    u = system.gamma * (2.0 * rng.random((runs, h, 1)) - 1.0)  # d = 1: the ball is [−γ, γ]
    x = np.tile(system.x0, (runs, 1))
    cost = np.zeros(runs)
    for t in range(h):
        cost += system.cost(x, u[:, t])
        x = system.step(x, u[:, t], w[:, t])
    mc = cost.mean() - system.optimal_cost()
    assert exact == pytest.approx(mc, rel=0.03)
    assert exact > float(system.regret(np.zeros((h, 1, n))))  # random controls cost more than none here


# -- ratios of final regrets ----------------------------------------------------------------------------------


@given(
    st.lists(st.floats(0.0, 1e3), min_size=1, max_size=8),
    st.floats(0.1, 10.0),
)
@settings(max_examples=40, deadline=None)
def test_ratio_interval_of_a_scaled_copy_is_the_point(values: list[float], scale: float) -> None:
    from dpkit.algorithms.regret_stats import ratio_interval

    den = np.asarray(values) + 1.0
    r = ratio_interval(scale * den, den, 0)
    assert r.ratio == pytest.approx(scale, rel=1e-12)
    assert r.low == pytest.approx(scale, rel=1e-9) and r.high == pytest.approx(scale, rel=1e-9)


def test_ratio_interval_is_a_paired_bootstrap_holding_the_ratio() -> None:
    from dpkit.algorithms.regret_stats import ratio_interval

    rng = np.random.default_rng(1)
    den = rng.uniform(50, 100, size=6)
    num = 0.5 * den + rng.normal(0, 5, size=6)
    r = ratio_interval(num, den, 7, level=0.9, resamples=500)
    assert r.ratio == pytest.approx(num.mean() / den.mean()) and r.low <= r.ratio <= r.high and r.level == 0.9
    idx = np.random.default_rng(7).integers(0, 6, size=(500, 6))  # brute force: the same resamples, paired
    boot = num[idx].mean(axis=1) / den[idx].mean(axis=1)
    low, high = np.quantile(boot, [0.05, 0.95])
    assert (r.low, r.high) == pytest.approx((min(low, r.ratio), max(high, r.ratio)), rel=1e-12)
    assert np.isnan(ratio_interval([1.0], [0.0], 0).ratio)  # no regret at the paper's σ: no ratio
    with pytest.raises(ValueError, match="same seeds"):
        ratio_interval([1.0, 2.0], [1.0], 0)
    with pytest.raises(ValueError, match="numerator"):
        ratio_interval([-1.0], [1.0], 0)


def test_baseline_ratio_is_the_student_t_interval_over_the_baseline() -> None:
    from scipy import stats

    from dpkit.algorithms.regret_stats import baseline_ratio

    finals = np.array([10.0, 12.0, 14.0])
    r = baseline_ratio(finals, 40.0, level=0.95)
    half = stats.t.ppf(0.975, 2) * finals.std(ddof=1) / np.sqrt(3) / 40.0
    assert r.ratio == 0.3 and (r.low, r.high) == pytest.approx((max(0.3 - half, 0.0), 0.3 + half))
    assert baseline_ratio([5.0], 10.0) == baseline_ratio([5.0], 10.0) and baseline_ratio([5.0], 10.0).low == 0.5
    with pytest.raises(ValueError, match="baseline"):
        baseline_ratio([1.0], 0.0)
