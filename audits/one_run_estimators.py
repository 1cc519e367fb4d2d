"""The p-values and lower bounds of one run: m canaries, r guesses, v of them right (docs/FORMULAS.md §8).

:func:`one_run_p_value` is Steinke, Nasr & Jagielski's (2023) theorem for (ε, δ) as the paper states it;
:func:`one_run_fdp_p_value` is the exact worst case over every mechanism with a symmetric trade-off curve f, which
dpkit's one-run verdicts use, with :func:`one_run_fdp_rejects`, :func:`one_run_fdp_epsilon_lower` and
:func:`one_run_mu_lower` built on it. The many-run estimators (error rates of a thresholded attack) are in
:mod:`dpkit.audits.estimators`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special, stats

from dpkit.accountant.validation import (
    check_extended_nonnegative,
    check_probability,
    check_real,
    check_unit_interval,
)

__all__ = [
    "one_run_p_value",
    "one_run_epsilon_lower",
    "one_run_fdp_p_value",
    "one_run_fdp_rejects",
    "one_run_fdp_epsilon_lower",
    "one_run_mu_lower",
]


def _one_run_counts(canaries: object, guesses: object, correct: object) -> tuple[int, int, int]:
    for name, value in (("canaries", canaries), ("guesses", guesses), ("correct", correct)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    m, r, v = int(canaries), int(guesses), int(correct)  # type: ignore[call-overload]
    if not v <= r <= m:
        raise ValueError(f"need correct <= guesses <= canaries, got {v}, {r}, {m}")
    return m, r, v


def one_run_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float, delta: float) -> float:
    """The p-value of ``correct`` right guesses under (ε, δ)-DP: the main theorem of Steinke, Nasr & Jagielski (2023).

    With abstention, P[V ≥ v] ≤ P[Bin(r, q) ≥ v] + 2mδ · max_{1≤i≤v} P[v − i ≤ Bin(r, q) < v] / i, q = e^ε/(1 + e^ε).

    Kept as the paper states it; with δ > 0 it can fall short of the exact worst case (docs/FORMULAS.md §8), so
    dpkit's verdicts use :func:`one_run_fdp_p_value`.

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        epsilon: The ε tested, >= 0.
        delta: The δ tested, in [0, 1].

    Returns:
        The p-value bound, in [0, 1] (binomial tails from scipy, rounded up; increasing in ε).

    Raises:
        ValueError: If the counts are not integers with v <= r <= m, ε is negative or δ outside [0, 1].
    """
    m, r, v = _one_run_counts(canaries, guesses, correct)
    eps = check_real("epsilon", epsilon)
    if eps < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    d = check_unit_interval("delta", delta)
    if v == 0:
        return 1.0
    q = float(special.expit(eps))
    tail = float(stats.binom.sf(v - 1, r, q))
    if d > 0.0:
        below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[Bin = v − i], i = 1 … v
        worst = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
        tail += 2.0 * m * d * worst
    return min(1.0, math.nextafter(tail, math.inf))


def one_run_epsilon_lower(*, canaries: int, guesses: int, correct: int, delta: float, alpha: float = 0.05) -> float:
    """The largest ε at which (ε, δ)-DP is rejected at level ``alpha`` (:func:`one_run_p_value`).

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        delta: The δ of the claims tested.
        alpha: The test's level, in (0, 1).

    Returns:
        A lower bound on ε with confidence 1 − α (bisection, at the rejected end); 0 when nothing is rejected.

    Raises:
        ValueError: If the counts are invalid or ``alpha`` is not in (0, 1).
    """
    level = check_probability("alpha", alpha)
    if not 0.0 < level < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    kwargs: dict[str, Any] = {"canaries": canaries, "guesses": guesses, "correct": correct, "delta": delta}
    if one_run_p_value(epsilon=0.0, **kwargs) > level:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(epsilon=hi, **kwargs) <= level:  # all-correct guesses reject up to a finite ε only
        lo, hi = hi, 2.0 * hi
        if hi > 1e3:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if one_run_p_value(epsilon=mid, **kwargs) <= level:
            lo = mid
        else:
            hi = mid
    return lo


def _incorrect_floor(
    *, mu: float | None, epsilon: float | None, delta: float, trade_off: Callable[[float], Any] | None = None
) -> Callable[[float], float]:
    """h(a) = f⁻¹(1 − a) = f(1 − a) for the claim's symmetric trade-off function f: the least share of wrong guesses
    that an f-DP mechanism must pair with a share ``a`` of right ones. Gaussian (μ-GDP): h(a) = Φ(Φ⁻¹(a) − μ);
    (ε, δ)-DP: h(a) = max(0, e^{−ε}(a − δ), 1 − δ − e^ε(1 − a)); any other curve through ``trade_off``."""
    if trade_off is not None:
        return lambda a: max(0.0, float(trade_off(1.0 - a)))
    if mu is not None:
        m_ = float(mu)
        if math.isinf(m_):
            return lambda a: 0.0
        return lambda a: float(special.ndtr(special.ndtri(a) - m_)) if a > 0.0 else 0.0
    e, d = float(epsilon), float(delta)  # type: ignore[arg-type]
    if math.isinf(e) or d >= 1.0:
        return lambda a: 0.0  # ε = ∞ or δ = 1 constrain nothing (f = 0 away from the corner): no test rejects
    return lambda a: max(0.0, math.exp(-e) * (a - d), 1.0 - d - math.exp(e) * (1.0 - a))


def _tail_contradicts(tau: float, *, m: int, r: int, v: int, floor: Any) -> bool:
    """Whether P[V ≥ v] ≥ τ is impossible for an f-DP mechanism (``floor`` = h of :func:`_incorrect_floor`).

    The recursion on T_i = P[V ≥ i] carries T_v ≥ τ down to T_0 = 1; a lower bound above 1 is a contradiction
    (the derivation: docs/FORMULAS.md §8).
    """
    lower = tau  # lower bound on T_i, i = v first
    above = 0.0  # Σ_{j>i} of the lower bounds
    for i in range(v, 0, -1):
        need = (above + lower + m * floor(min(1.0, (i * lower + above) / m))) / (r - i + 1)
        above += lower
        lower = max(lower, need)
        if lower > 1.0 + 1e-9:
            return True
    return False


def _fdp_setting(
    canaries: object,
    guesses: object,
    correct: object,
    mu: float | None,
    epsilon: float | None,
    delta: float,
    trade_off: Callable[[float], Any] | None,
) -> tuple[int, int, int, Callable[[float], float]]:
    """The checked counts and the floor h of the one curve given (exactly one of ``mu``, ``epsilon`` with
    ``delta``, ``trade_off``)."""
    m, r, v = _one_run_counts(canaries, guesses, correct)
    if (mu is not None) + (epsilon is not None) + (trade_off is not None) != 1:
        raise ValueError("give exactly one of mu (a Gaussian trade-off curve), epsilon (with delta) or trade_off")
    if trade_off is not None:
        if not callable(trade_off):
            raise TypeError(f"trade_off must be callable, got {type(trade_off).__name__}")
    elif mu is not None:
        mu = check_extended_nonnegative("mu", mu)
    else:
        epsilon = check_extended_nonnegative("epsilon", epsilon)
    d = check_unit_interval("delta", delta)
    if epsilon is None and d != 0.0:
        raise ValueError(f"delta applies only with epsilon, got delta={delta!r}")
    return m, r, v, _incorrect_floor(mu=mu, epsilon=epsilon, delta=d, trade_off=trade_off)


def _largest_rejected(rejects: Callable[[float], bool], cap: float) -> float:
    """The largest parameter (ε or μ, rejection monotone in it) that ``rejects`` still rejects, by doubling then
    bisection, returned at the rejected end (rounded down); 0 when 0 is not rejected, ``cap``'s half when all are."""
    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > cap:
            return lo
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


def one_run_fdp_p_value(
    *,
    canaries: int,
    guesses: int,
    correct: int,
    mu: float | None = None,
    epsilon: float | None = None,
    delta: float = 0.0,
    trade_off: Callable[[float], Any] | None = None,
) -> float:
    """An upper bound on P[V ≥ ``correct``] over every mechanism that is f-DP with respect to each canary's coin.

    The f-DP one-run analysis (after Mahloujifar, Melis & Chaudhuri 2024; docs/FORMULAS.md §8), by bisection on the
    tail. Give exactly one curve f: ``mu``, ``epsilon`` (with ``delta``) or ``trade_off``.

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        mu: Gaussian differential privacy: the curve of a Gaussian mechanism with Δ/σ = μ.
        epsilon: The curve of one (ε, δ).
        delta: The δ with ``epsilon`` (only with it).
        trade_off: Any symmetric trade-off function (e.g. :meth:`dpkit.audits.claims.Claim.trade_off`), never above
            the true curve.

    Returns:
        The p-value bound, in [0, 1] (the bisection's upper end, rounded up).

    Raises:
        ValueError: If the counts are invalid, not exactly one curve is given, or ``delta`` comes without
            ``epsilon``.
        TypeError: If ``trade_off`` is not callable.
    """
    m, r, v, floor = _fdp_setting(canaries, guesses, correct, mu, epsilon, delta, trade_off)
    if v == 0:
        return 1.0
    contradicts = lambda tau: _tail_contradicts(tau, m=m, r=r, v=v, floor=floor)  # noqa: E731
    if not contradicts(1.0):
        return 1.0
    lo, hi = 1e-300, 1.0  # contradicts(hi) always; the bound is the sup of the τ that do not
    if contradicts(lo):
        return lo
    while hi > lo * (1.0 + 1e-7):  # bisection on log τ: relative precision at every scale
        mid = math.sqrt(lo * hi)
        if contradicts(mid):
            hi = mid
        else:
            lo = mid
    return min(1.0, math.nextafter(hi, math.inf))


def one_run_fdp_rejects(
    *,
    canaries: int,
    guesses: int,
    correct: int,
    alpha: float,
    mu: float | None = None,
    epsilon: float | None = None,
    delta: float = 0.0,
    trade_off: Callable[[float], Any] | None = None,
) -> bool:
    """Whether ``correct`` right guesses reject the trade-off curve at level ``alpha`` (one recursion, no bisection).

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        alpha: The test's level.
        mu: As for :func:`one_run_fdp_p_value`.
        epsilon: As for :func:`one_run_fdp_p_value`.
        delta: As for :func:`one_run_fdp_p_value`.
        trade_off: As for :func:`one_run_fdp_p_value`.

    Returns:
        True when P[V ≥ correct] ≥ α is impossible for the curve (exactly when the p-value of
        :func:`one_run_fdp_p_value` is at most α, up to its rounding).

    Raises:
        ValueError: As for :func:`one_run_fdp_p_value` (and TypeError if ``trade_off`` is not callable).
    """
    m, r, v, floor = _fdp_setting(canaries, guesses, correct, mu, epsilon, delta, trade_off)
    level = check_probability("alpha", alpha)
    return v > 0 and _tail_contradicts(level, m=m, r=r, v=v, floor=floor)


def one_run_mu_lower(*, canaries: int, guesses: int, correct: int, alpha: float = 0.05) -> float:
    """The largest μ whose Gaussian trade-off curve is rejected at level ``alpha`` (:func:`one_run_fdp_p_value`).

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        alpha: The test's level, in (0, 1).

    Returns:
        A lower bound on the μ of any GDP curve the mechanism satisfies, at 1 − α (bisection); 0 if none rejected.

    Raises:
        ValueError: If the counts are invalid or ``alpha`` is not in (0, 1).
    """
    m, r, v = _one_run_counts(canaries, guesses, correct)
    level = check_probability("alpha", alpha)
    if not 0.0 < level < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    rejects = lambda mu: one_run_fdp_rejects(canaries=m, guesses=r, correct=v, alpha=level, mu=mu)  # noqa: E731
    return _largest_rejected(rejects, 64.0)


def one_run_fdp_epsilon_lower(*, canaries: int, guesses: int, correct: int, delta: float, alpha: float = 0.05) -> float:
    """The largest ε whose (ε, ``delta``) trade-off curve the f-DP one-run analysis rejects at level ``alpha``.

    Args:
        canaries: The number of canaries m (each a fair coin).
        guesses: The guesses r made (abstaining on the other canaries).
        correct: The right guesses v, with v <= r <= m.
        delta: The δ of the curves tested.
        alpha: The test's level, in (0, 1).

    Returns:
        A lower bound on ε at that δ with confidence 1 − α (bisection, at the rejected end); 0 if none rejected.

    Raises:
        ValueError: If the counts are invalid or ``alpha`` is not in (0, 1).
    """
    m, r, v = _one_run_counts(canaries, guesses, correct)
    level = check_probability("alpha", alpha)
    if not 0.0 < level < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    d = check_unit_interval("delta", delta)
    kw: dict[str, Any] = {"canaries": m, "guesses": r, "correct": v, "alpha": level, "delta": d}
    return _largest_rejected(lambda eps: one_run_fdp_rejects(epsilon=eps, **kw), 1e3)
