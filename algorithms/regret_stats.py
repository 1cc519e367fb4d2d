"""Statistics of regret curves over seeds, and the uniform-random policy's exact regret.

A curve set is the cumulative regret of N seeds over K episodes, an array of shape (N, K). :func:`mean_band` and
:func:`band_limits` give the mean curve and its Student-t band, :func:`loglog_slope` and :func:`slope_interval` the
log-log slope over the last decade of episodes with a bootstrap interval, and :func:`verdict` reads the interval.
:func:`ratio_interval` compares two σ's final regrets (a paired bootstrap over seeds), :func:`baseline_ratio` one
against a baseline's exact regret. :func:`uniform_tabular_regret` and :func:`uniform_lq_regret` give the exact
regret of the policy that ignores its data. The statistics and the verdict's thresholds:
docs/explanation/environments.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from dpkit.accountant.validation import check_count, check_rng

from .envs.lq import LQSystem, policy_cost
from .envs.tabular import TabularMDP

__all__ = [
    "RatioInterval",
    "RegretVerdict",
    "SlopeInterval",
    "baseline_ratio",
    "ratio_interval",
    "mean_band",
    "band_limits",
    "loglog_slope",
    "slope_interval",
    "verdict",
    "uniform_tabular_regret",
    "uniform_lq_regret",
]

#: Fraction of K where the fit starts: the last decade of episodes.
DECADE = 0.1
_POINTS = 50  # log-spaced episodes in the fit (as regret_slope)


def _curves(curves: np.ndarray) -> np.ndarray:
    c = np.asarray(curves, dtype=float)
    if c.ndim == 1:
        c = c[None, :]
    if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 2:
        raise ValueError(f"curves must have shape (seeds, episodes) with episodes >= 2, got {c.shape}")
    if np.any(~np.isfinite(c)):
        raise ValueError("curves must be finite")
    return c


def _check_level(level: float) -> float:
    if not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return float(level)


def mean_band(curves: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The mean curve over seeds and the half-width of its ``level`` Student-t interval, per episode.

    Args:
        curves: The curve set (N, K), or one curve (K,).
        level: The interval's confidence level, in (0, 1).

    Returns:
        The mean curve (K,) and the half-width t_{N−1, (1+level)/2}·s/√N (K,): NaN with one seed (no spread to
        estimate), 0 with identical seeds.

    Raises:
        ValueError: If ``curves`` is not finite of shape (N, K) with K >= 2, or ``level`` is outside (0, 1).

    Examples:
        >>> mean, half = mean_band([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])
        >>> mean.tolist(), round(float(half[0]), 4)
        ([2.0, 3.0, 4.0], 12.7062)
    """
    from scipy import stats  # imported where used: scipy.stats is slow to import

    c = _curves(curves)
    level = _check_level(level)
    n = c.shape[0]
    mean = c.mean(axis=0)
    if n < 2:
        return mean, np.full_like(mean, np.nan)
    t = float(stats.t.ppf(0.5 + level / 2.0, df=n - 1))
    spread = (c - c[0]).std(axis=0, ddof=1)  # shifted by the first seed: identical seeds give exactly 0
    return mean, t * spread / np.sqrt(n)


def band_limits(mean: np.ndarray, half_width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The band's lower and upper ends, mean ∓ half-width, the lower one clipped at 0.

    Cumulative regret is a sum of nonnegative per-episode regrets, so its mean over seeds is nonnegative too and a
    band below 0 says nothing.

    Args:
        mean: The mean curve (K,).
        half_width: The band's half-width (K,), NaN where there is none (one seed).

    Returns:
        The lower and upper ends (K,) each; NaN where the half-width is NaN.

    Examples:
        >>> low, high = band_limits([1.0, 2.0], [1.5, 0.5])
        >>> low.tolist(), high.tolist()
        ([0.0, 1.5], [2.5, 2.5])
    """
    m = np.asarray(mean, dtype=float)
    h = np.asarray(half_width, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(np.isnan(h), np.nan, np.maximum(m - h, 0.0))
    return lower, m + h


def _fit_points(episodes: int, start: float) -> np.ndarray:
    """The 1-based episodes of the fit: log-spaced from ⌊start·K⌋ to K (as regret_slope)."""
    first = max(1, int(start * episodes))
    return np.unique(np.geomspace(first, episodes, num=min(_POINTS, episodes - first + 1)).astype(int))


def _check_start(start: float) -> float:
    if not isinstance(start, (int, float)) or not 0.0 < start < 1.0:
        raise ValueError(f"start must lie in (0, 1), got {start!r}")
    return float(start)


def _slopes(values: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Least-squares slopes of log values (rows) against log ks; points with value <= 0 are left out;
    NaN for a row with fewer than two points left."""
    x = np.log(ks.astype(float))
    keep = values > 0
    logv = np.log(np.where(keep, values, 1.0))
    w = keep.astype(float)
    count = w.sum(axis=1)
    safe = np.maximum(count, 1.0)
    mx = (w * x).sum(axis=1) / safe
    my = (w * logv).sum(axis=1) / safe
    dx = (x[None, :] - mx[:, None]) * w
    sxx = (dx * dx).sum(axis=1)
    sxy = (dx * (logv - my[:, None])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = sxy / sxx
    out[(count < 2) | (sxx <= 0)] = np.nan
    return out


def loglog_slope(curves: np.ndarray, *, start: float = DECADE) -> float:
    """Slope of log R̄(k) against log k for k in [``start``·K, K], R̄ the mean curve.

    The fit uses the same log-spaced points as :func:`dpkit.algorithms.simulation.regret_slope` (the two agree on
    any curve); a slope below 1 is sublinear growth over that range.

    Args:
        curves: The curve set (N, K), or one curve (K,).
        start: The fraction of K where the fit starts, in (0, 1); the last decade by default.

    Returns:
        The slope; NaN if fewer than two points with positive regret remain.

    Raises:
        ValueError: If ``curves`` is not finite of shape (N, K) with K >= 2, or ``start`` is outside (0, 1).

    Examples:
        >>> import numpy as np
        >>> round(loglog_slope(np.sqrt(np.arange(1, 1001))), 6)
        0.5
    """
    c = _curves(curves)
    ks = _fit_points(c.shape[1], _check_start(start))
    return float(_slopes(c.mean(axis=0)[None, ks - 1], ks)[0])


@dataclass(frozen=True)
class SlopeInterval:
    """The slope of the mean curve and its bootstrap percentile interval.

    Attributes:
        slope: The slope of the mean curve (:func:`loglog_slope`).
        low: The interval's lower end (NaN when no resample had a slope).
        high: The interval's upper end (NaN when no resample had a slope).
        level: The interval's confidence level.
        resamples: The bootstrap draws.
    """

    slope: float
    low: float
    high: float
    level: float
    resamples: int


def slope_interval(
    curves: np.ndarray,
    rng: np.random.Generator | int,
    *,
    start: float = DECADE,
    level: float = 0.95,
    resamples: int = 2000,
) -> SlopeInterval:
    """:func:`loglog_slope` of the mean of ``curves`` with a percentile bootstrap interval over seeds.

    Each resample draws N seeds with replacement and refits the slope of their mean curve. With one seed
    the interval is the point (nothing to resample). Resamples whose slope is undefined are dropped.

    Args:
        curves: The curve set (N, K), or one curve (K,).
        rng: A Generator or an integer seed, drawing the resamples.
        start: The fraction of K where the fit starts, in (0, 1).
        level: The interval's confidence level, in (0, 1).
        resamples: The bootstrap draws, an integer >= 1.

    Returns:
        The slope and its interval.

    Raises:
        ValueError: If ``curves`` is not finite of shape (N, K) with K >= 2, or ``start``, ``level``,
            ``resamples`` or ``rng`` is invalid.
    """
    c = _curves(curves)
    start = _check_start(start)
    level = _check_level(level)
    b = check_count("resamples", resamples)
    rng = check_rng("rng", rng)
    ks = _fit_points(c.shape[1], start)
    points = c[:, ks - 1]
    slope = float(_slopes(points.mean(axis=0)[None, :], ks)[0])
    n = c.shape[0]
    if n < 2:
        return SlopeInterval(slope, slope, slope, level, b)
    idx = rng.integers(0, n, size=(b, n))
    boot = _slopes(points[idx].mean(axis=1), ks)
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return SlopeInterval(slope, float("nan"), float("nan"), level, b)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return SlopeInterval(slope, float(low), float(high), level, b)


@dataclass(frozen=True)
class RatioInterval:
    """A ratio of mean final regrets and its interval.

    Attributes:
        ratio: The ratio of the means.
        low: The interval's lower end.
        high: The interval's upper end.
        level: The interval's confidence level.
    """

    ratio: float
    low: float
    high: float
    level: float


def _finals(name: str, values: object) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size < 1 or np.any(~np.isfinite(v)) or np.any(v < 0):
        raise ValueError(f"{name} must be a non-empty 1-d array of finite regrets >= 0, got {values!r}")
    return v


def ratio_interval(
    numerator: object,
    denominator: object,
    rng: np.random.Generator | int,
    *,
    level: float = 0.95,
    resamples: int = 2000,
) -> RatioInterval:
    """mean(numerator) ÷ mean(denominator) with a paired percentile bootstrap interval over seeds.

    The two hold the final regrets of the same seeds at two σ (seed i faces the same users in both), so each
    resample draws seeds with replacement and keeps the pairs. One seed, or identical pairs: the interval is the
    point. Resamples whose denominator is 0 are dropped.

    Args:
        numerator: Final regrets at one σ, one per seed.
        denominator: Final regrets at the other σ, of the same seeds in the same order.
        rng: A Generator or an integer seed, drawing the resamples.
        level: The interval's confidence level, in (0, 1).
        resamples: The bootstrap draws, an integer >= 1.

    Returns:
        The ratio and its interval (NaN throughout when the denominator's mean is 0).

    Raises:
        ValueError: If the arrays are not 1-d, finite and >= 0 of one length, or ``level``, ``resamples`` or
            ``rng`` is invalid.

    Examples:
        >>> r = ratio_interval([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], 0)
        >>> r.ratio, r.low, r.high
        (0.5, 0.5, 0.5)
    """
    a, b = _finals("numerator", numerator), _finals("denominator", denominator)
    if a.shape != b.shape:
        raise ValueError(f"numerator and denominator must hold the same seeds, got {a.size} and {b.size} values")
    level = _check_level(level)
    n_boot = check_count("resamples", resamples)
    rng = check_rng("rng", rng)
    if b.mean() <= 0.0:
        return RatioInterval(float("nan"), float("nan"), float("nan"), level)
    ratio = float(a.mean() / b.mean())
    if a.size < 2:
        return RatioInterval(ratio, ratio, ratio, level)
    idx = rng.integers(0, a.size, size=(n_boot, a.size))
    num, den = a[idx].mean(axis=1), b[idx].mean(axis=1)
    keep = den > 0.0
    boot = num[keep] / den[keep]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return RatioInterval(ratio, min(float(low), ratio), max(float(high), ratio), level)


def baseline_ratio(finals: object, baseline: float, *, level: float = 0.95) -> RatioInterval:
    """mean(finals) ÷ ``baseline`` with the Student-t interval of the mean over seeds, divided by the baseline.

    The baseline is exact (a policy's expected regret, e.g. :func:`uniform_tabular_regret` × K), so only the
    mean's spread over seeds enters; one seed gives the point.

    Args:
        finals: Final regrets, one per seed.
        baseline: The baseline's regret over the same episodes, > 0.
        level: The interval's confidence level, in (0, 1).

    Returns:
        The ratio and its interval (the lower end clipped at 0).

    Raises:
        ValueError: If ``finals`` is not 1-d, finite and >= 0, ``baseline`` is not > 0, or ``level`` is invalid.

    Examples:
        >>> baseline_ratio([2.0, 2.0], 4.0)
        RatioInterval(ratio=0.5, low=0.5, high=0.5, level=0.95)
    """
    from scipy import stats  # imported where used: scipy.stats is slow to import

    v = _finals("finals", finals)
    if not isinstance(baseline, (int, float, np.floating)) or not np.isfinite(baseline) or baseline <= 0:
        raise ValueError(f"baseline must be a finite regret > 0, got {baseline!r}")
    level = _check_level(level)
    ratio = float(v.mean() / baseline)
    if v.size < 2:
        return RatioInterval(ratio, ratio, ratio, level)
    half = float(stats.t.ppf((1.0 + level) / 2.0, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)) / float(baseline)
    return RatioInterval(ratio, max(ratio - half, 0.0), ratio + half, level)


#: A slope interval reaching above this (but below 1) is "near-linear": sublinear, yet a straight line to the eye.
NEAR_LINEAR = 0.95


class RegretVerdict(enum.StrEnum):
    """Every verdict :func:`verdict` gives on the growth of a regret curve (not an audit's :class:`Verdict
    <dpkit.audits.verdicts.Verdict>`)."""

    SUBLINEAR = "sublinear"
    NEAR_LINEAR = "near-linear"
    LINEAR = "linear"
    NOT_SHOWN_SUBLINEAR = "not shown sublinear"


def verdict(interval: SlopeInterval) -> str:
    """The growth a slope interval shows (a :class:`RegretVerdict` value).

    Args:
        interval: The slope interval (:func:`slope_interval`).

    Returns:
        ``"sublinear"`` when the interval's upper end is at most 0.95; ``"near-linear"`` when it is below 1 but
        above 0.95 (shown sublinear, but barely: a straight line over the decade fitted); ``"linear"`` when the
        interval reaches 1 and its lower end is at least 0.95 (indistinguishable from, or above, linear growth);
        otherwise ``"not shown sublinear"``.

    Examples:
        >>> verdict(SlopeInterval(0.5, 0.4, 0.6, 0.95, 2000)), verdict(SlopeInterval(0.97, 0.96, 1.02, 0.95, 2000))
        ('sublinear', 'linear')
    """
    if not np.isfinite(interval.high):
        return "not shown sublinear"
    if interval.high < 1.0:
        return "near-linear" if interval.high > NEAR_LINEAR else "sublinear"
    if interval.low >= NEAR_LINEAR:
        return "linear"
    return "not shown sublinear"


def uniform_tabular_regret(env: TabularMDP) -> float:
    """V*_1(s_1) − V^unif_1(s_1): the expected regret of one episode of the uniformly random policy.

    Args:
        env: The tabular MDP.

    Returns:
        The regret per episode, exact by backward induction.

    Raises:
        ValueError: If ``env`` is not a :class:`TabularMDP`.

    Examples:
        >>> from dpkit.algorithms.envs.tabular import riverswim
        >>> round(uniform_tabular_regret(riverswim(2)), 6)
        0.546108
    """
    if not isinstance(env, TabularMDP):
        raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
    uniform = np.full((env.horizon, env.states, env.actions), 1.0 / env.actions)
    return float(env.regret(uniform))


def uniform_lq_regret(system: LQSystem) -> float:
    """J^unif(x0) − J*(x0) for controls u_h drawn independently and uniformly from the ball ‖u‖ <= γ.

    E[uuᵀ] = γ²/(d + 2)·I in d dimensions; the control then enters the dynamics as extra zero-mean noise
    B·u_h independent of the past, so the cost is that of the zero gains under noise covariance
    W + B·E[uuᵀ]·Bᵀ, plus H·tr(R·E[uuᵀ]). (The zero control alone is ``system.regret(0)``.)

    Args:
        system: The LQ system.

    Returns:
        The regret per episode, exact.

    Raises:
        ValueError: If ``system`` is not an :class:`LQSystem`.
    """
    if not isinstance(system, LQSystem):
        raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
    n, d, h = system.state_dim, system.control_dim, system.horizon
    cov_u = np.eye(d) * system.gamma**2 / (d + 2)
    w = system.noise_covariance + system.B @ cov_u @ system.B.T
    zero = np.zeros((h, d, n))
    cost = float(policy_cost(system.A, system.B, system.Q, system.R, zero, system.x0, w))
    return cost + h * float(np.trace(system.R @ cov_u)) - system.optimal_cost()
