"""Statistics of regret curves over seeds, and the uniform-random policy's exact regret.

A curve set is the cumulative regret of N seeds over K episodes, an array of shape (N, K).

* :func:`mean_band` — the mean curve with a per-episode Student-t interval for the mean over seeds
  (mean ± t_{N−1, (1+level)/2}·s/√N, s the sample standard deviation).
* :func:`loglog_slope` — the least-squares slope of log R̄(k) against log k over the last decade of
  episodes (k from K/10 to K), on the same log-spaced points as
  :func:`dpkit.algorithms.simulation.regret_slope` (the two agree on any curve): a slope below 1 is
  sublinear growth over that range.
* :func:`slope_interval` — a percentile bootstrap interval for that slope: resample the seeds with
  replacement, recompute the mean curve and its slope.
* :func:`band_limits` — the band's ends, the lower one clipped at 0 (regret is nonnegative, and so is its mean).
* :func:`verdict` — "sublinear" only when the interval lies below 1 and its upper end at most 0.95; "near-linear"
  when it lies below 1 but reaches above 0.95 (sublinear, but a straight line to the eye); "linear" when its
  lower end is at least 0.95 and it reaches 1.
* :func:`uniform_tabular_regret` and :func:`uniform_lq_regret` — the expected regret per episode of the
  policy that ignores its data: uniform over the actions (tabular, exact by backward induction), or a
  control drawn uniformly from the ball of radius γ (LQ, exact: an independent zero-mean control acts as
  extra process noise of covariance B·E[uuᵀ]·Bᵀ plus its own cost tr(R·E[uuᵀ]) per step).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from dpkit.accountant.validation import check_count, check_rng

from .envs.lq import LQSystem, policy_cost
from .envs.tabular import TabularMDP

__all__ = [
    "RegretVerdict",
    "SlopeInterval",
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

    ``curves`` (N, K). With one seed the half-width is NaN (no spread to estimate); with identical seeds 0.
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
    """The band's lower and upper ends, mean ∓ half-width, the lower one clipped at 0: cumulative regret is a sum of
    nonnegative per-episode regrets, so its mean over seeds is nonnegative too and a band below 0 says nothing.
    NaN half-widths (one seed) stay NaN."""
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
    """Slope of log R̄(k) against log k for k in [``start``·K, K], R̄ the mean of ``curves`` (N, K) or a curve (K,)."""
    c = _curves(curves)
    ks = _fit_points(c.shape[1], _check_start(start))
    return float(_slopes(c.mean(axis=0)[None, ks - 1], ks)[0])


@dataclass(frozen=True)
class SlopeInterval:
    """The slope of the mean curve and its bootstrap percentile interval at ``level`` (``resamples`` draws)."""

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
    """:func:`loglog_slope` of the mean of ``curves`` (N, K) with a percentile bootstrap interval over seeds.

    Each resample draws N seeds with replacement and refits the slope of their mean curve. With one seed
    the interval is the point (nothing to resample). Resamples whose slope is undefined are dropped.
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
    """``"sublinear"`` when the interval's upper end is at most 0.95; ``"near-linear"`` when it is below 1 but above
    0.95 (shown sublinear, but barely: a straight line over the decade fitted); ``"linear"`` when the interval
    reaches 1 and its lower end is at least 0.95 (indistinguishable from, or above, linear growth); otherwise
    ``"not shown sublinear"``."""
    if not np.isfinite(interval.high):
        return "not shown sublinear"
    if interval.high < 1.0:
        return "near-linear" if interval.high > NEAR_LINEAR else "sublinear"
    if interval.low >= NEAR_LINEAR:
        return "linear"
    return "not shown sublinear"


def uniform_tabular_regret(env: TabularMDP) -> float:
    """V*_1(s_1) − V^unif_1(s_1): the expected regret of one episode of the uniformly random policy."""
    if not isinstance(env, TabularMDP):
        raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
    uniform = np.full((env.horizon, env.states, env.actions), 1.0 / env.actions)
    return float(env.regret(uniform))


def uniform_lq_regret(system: LQSystem) -> float:
    """J^unif(x0) − J*(x0) for controls u_h drawn independently and uniformly from the ball ‖u‖ <= γ.

    E[uuᵀ] = γ²/(d + 2)·I in d dimensions; the control then enters the dynamics as extra zero-mean noise
    B·u_h independent of the past, so the cost is that of the zero gains under noise covariance
    W + B·E[uuᵀ]·Bᵀ, plus H·tr(R·E[uuᵀ]). (The zero control alone is ``system.regret(0)``.)
    """
    if not isinstance(system, LQSystem):
        raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
    n, d, h = system.state_dim, system.control_dim, system.horizon
    cov_u = np.eye(d) * system.gamma**2 / (d + 2)
    w = system.noise_covariance + system.B @ cov_u @ system.B.T
    zero = np.zeros((h, d, n))
    cost = float(policy_cost(system.A, system.B, system.Q, system.R, zero, system.x0, w))
    return cost + h * float(np.trace(system.R @ cov_u)) - system.optimal_cost()
