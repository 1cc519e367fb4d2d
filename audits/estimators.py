"""From attack scores to statistically valid lower bounds on ε and μ (docs/FORMULAS.md §5, §8).

A test says D′ when its score exceeds t; with one-sided Clopper–Pearson upper bounds FPR⁺ and FNR⁺ at 1 − α/2
each, ε_lower = max(ln((1 − δ − FNR⁺)/FPR⁺), ln((1 − δ − FPR⁺)/FNR⁺), 0) and μ_lower = max(Φ⁻¹(1 − FPR⁺) −
Φ⁻¹(FNR⁺), 0) hold together at 1 − α. :func:`select_threshold` picks t on a *selection* split and :func:`estimate`
bounds the error rates on a separate *evaluation* split. The one-run p-values and bounds are here too.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from dpkit.accountant.validation import (
    check_choice,
    check_extended_nonnegative,
    check_probability,
    check_real,
    check_unit_interval,
    enum_values,
)

__all__ = [
    "OBJECTIVES",
    "Objective",
    "ROC_BAND_KIND",
    "AuditEstimate",
    "RocBand",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "estimate",
    "mu_from_rates",
    "mu_lower_bound",
    "one_run_p_value",
    "one_run_epsilon_lower",
    "one_run_fdp_p_value",
    "one_run_fdp_rejects",
    "one_run_fdp_epsilon_lower",
    "one_run_mu_lower",
    "roc_band",
    "select_threshold",
    "rates_at_all_thresholds",
    "cp_upper_array",
]


class Objective(enum.StrEnum):
    """What a threshold is chosen for: the equal error rate, the largest μ or the largest ε lower bound."""

    EER = "eer"
    MU = "mu"
    EPSILON = "epsilon"


#: The values of :class:`Objective`.
OBJECTIVES: tuple[str, ...] = enum_values(Objective)


def _check_counts(k: object, n: object) -> tuple[int, int]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"k must be an integer in [0, n = {n}], got {k!r}")
    return int(k), int(n)


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided (1 − α) Clopper–Pearson upper bound on p from k successes in n trials.

    Args:
        k: The successes, an integer in [0, n].
        n: The trials, an integer >= 1.
        alpha: The bound's error probability.

    Returns:
        The bound, in [0, 1].

    Raises:
        ValueError: If k or n is not such an integer, or alpha is not a probability.
    """
    k, n = _check_counts(k, n)
    alpha = check_probability("alpha", alpha)
    return 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """One-sided (1 − α) Clopper–Pearson lower bound on p from k successes in n trials.

    Args:
        k: The successes, an integer in [0, n].
        n: The trials, an integer >= 1.
        alpha: The bound's error probability.

    Returns:
        The bound, in [0, 1].

    Raises:
        ValueError: If k or n is not such an integer, or alpha is not a probability.
    """
    k, n = _check_counts(k, n)
    alpha = check_probability("alpha", alpha)
    return 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def epsilon_lower_bound(fpr: float, fnr: float, delta: float = 0.0) -> float:
    """The smallest ε consistent with error rates ``fpr``, ``fnr`` under (ε, δ)-DP (>= 0).

    Args:
        fpr: The false-positive rate, in [0, 1] (with ``fnr``: upper confidence bounds give a lower one on ε).
        fnr: The false-negative rate, in [0, 1].
        delta: The δ, in [0, 1).

    Returns:
        max(ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR), 0) (inf when a rate is 0 and the other below 1 − δ).

    Raises:
        ValueError: If a rate is not in [0, 1] or δ not in [0, 1).
    """
    fpr, fnr = (_check_rate(name, v) for name, v in (("fpr", fpr), ("fnr", fnr)))
    delta = check_real("delta", delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    best = 0.0
    for a, b in ((fnr, fpr), (fpr, fnr)):
        num = 1.0 - delta - a
        if num > 0.0:
            best = max(best, math.inf if b == 0.0 else math.log(num) - math.log(b))
    return best


def mu_lower_bound(fpr: float, fnr: float) -> float:
    """The smallest μ consistent with error rates ``fpr``, ``fnr`` under μ-GDP (>= 0).

    Args:
        fpr: The false-positive rate, in [0, 1].
        fnr: The false-negative rate, in [0, 1].

    Returns:
        max(Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), 0).

    Raises:
        ValueError: If a rate is not in [0, 1].
    """
    return max(0.0, mu_from_rates(fpr, fnr))


def mu_from_rates(fpr: float, fnr: float) -> float:
    """Φ⁻¹(1 − FPR) − Φ⁻¹(FNR): the μ of the Gaussian trade-off curve through (FPR, FNR).

    Args:
        fpr: The false-positive rate, in [0, 1].
        fnr: The false-negative rate, in [0, 1].

    Returns:
        The μ (negative when the point lies above the diagonal).

    Raises:
        ValueError: If a rate is not in [0, 1].
    """
    fpr, fnr = (_check_rate(name, v) for name, v in (("fpr", fpr), ("fnr", fnr)))
    return float(-special.ndtri(fpr) - special.ndtri(fnr))


def _check_rate(name: str, value: object) -> float:
    x = check_real(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {x!r}")
    return x


def _check_scores(name: str, scores: object) -> np.ndarray:
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of scores, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def rates_at_all_thresholds(
    s0: np.ndarray, s1: np.ndarray, max_candidates: int = 8192
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate thresholds and the error counts at each (unvalidated).

    Args:
        s0: The scores on D.
        s1: The scores on D′.
        max_candidates: Every distinct score (plus −inf) is a threshold when there are at most this many; else
            evenly spaced quantiles of all scores plus each side's most extreme scores (large-ε tests' thresholds).

    Returns:
        The thresholds t, the false positives #{s0 > t} and the false negatives #{s1 <= t} at each.
    """
    s0s, s1s = np.sort(s0), np.sort(s1)
    pool = np.concatenate([s0s, s1s])
    if pool.size > max_candidates:
        k = max_candidates // 8
        pool = np.concatenate(
            [
                np.quantile(pool, np.linspace(0.0, 1.0, max_candidates // 2)),
                s0s[:k],
                s0s[-k:],
                s1s[:k],
                s1s[-k:],
            ]
        )
    t = np.concatenate([[-np.inf], np.unique(pool)])
    fp = s0.size - np.searchsorted(s0s, t, side="right")  # #{s0 > t}
    fn = np.searchsorted(s1s, t, side="right")  # #{s1 <= t}
    return t, fp, fn


def cp_upper_array(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """The one-sided Clopper–Pearson upper bound at confidence 1 − α of each rate k/n (unvalidated).

    Args:
        k: An array of counts of n trials.
        n: The trials.
        alpha: The bounds' error probability.

    Returns:
        The bounds, of ``k``'s shape (1 where k = n).
    """
    out = np.ones(k.shape)
    inner = k < n
    out[inner] = stats.beta.ppf(1.0 - alpha, k[inner] + 1, n - k[inner])
    return out


def select_threshold(
    scores0: object,
    scores1: object,
    objective: str = "mu",
    delta: float = 0.0,
    alpha: float = 0.05,
    max_candidates: int = 8192,
) -> float:
    """The threshold for ``objective`` on a selection split (vectorised).

    Args:
        scores0: The selection split's scores on D.
        scores1: The selection split's scores on D′.
        objective: ``eer``: where the empirical FPR and FNR are closest (the tightest μ bound of a symmetric curve,
            free of the winner's curse); ``mu`` or ``epsilon``: where that lower bound is largest.
        delta: The δ at which ε is read (objective ``epsilon``).
        alpha: The error probability of the bounds the threshold will be used with.
        max_candidates: As for :func:`rates_at_all_thresholds`.

    Returns:
        The threshold t (D′ when a score exceeds it), each distinct score weighed by the Clopper–Pearson bounds
        :func:`estimate` will use, on the selection split itself; the evaluation split must be independent of it.

    Raises:
        ValueError: If the scores are not finite vectors, ``objective`` is unknown or ``alpha`` not a probability.
    """
    s0, s1 = _check_scores("scores0", scores0), _check_scores("scores1", scores1)
    objective = check_choice("objective", objective, OBJECTIVES)
    alpha = check_probability("alpha", alpha)
    t, fp, fn = rates_at_all_thresholds(s0, s1, max_candidates)
    if objective == Objective.EER:  # the equal-error-rate threshold: no search over noisy tails
        return float(t[int(np.argmin(np.abs(fp / s0.size - fn / s1.size)))])
    fpr = cp_upper_array(fp, s0.size, alpha / 2)
    fnr = cp_upper_array(fn, s1.size, alpha / 2)
    if objective == Objective.MU:
        value = -special.ndtri(fpr) - special.ndtri(fnr)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.maximum(
                np.log(np.maximum(1 - delta - fnr, 0.0)) - np.log(fpr),
                np.log(np.maximum(1 - delta - fpr, 0.0)) - np.log(fnr),
            )
    return float(t[int(np.argmax(value))])


@dataclass(frozen=True)
class AuditEstimate:
    """Error rates of one thresholded test on an evaluation split, and the bounds they give.

    Attributes:
        threshold: The test's threshold t (D′ when a score exceeds it).
        n0: The runs on D.
        n1: The runs on D′.
        false_positives: #{scores on D > t}.
        false_negatives: #{scores on D′ <= t}.
        alpha: The error probability of the bounds together.
        delta: The δ at which ε is read.
        fpr_upper: The Clopper–Pearson upper bound FPR⁺ at 1 − α/2.
        fnr_upper: The Clopper–Pearson upper bound FNR⁺ at 1 − α/2.
        epsilon_lower: The ε lower bound from FPR⁺ and FNR⁺.
        mu_lower: The μ lower bound from FPR⁺ and FNR⁺.
        mu_estimate: μ from the smoothed empirical rates (k + ½)/(n + 1).
        mu_interval: A two-sided 1 − α interval on μ from the Clopper–Pearson bounds.
    """

    threshold: float
    n0: int
    n1: int
    false_positives: int
    false_negatives: int
    alpha: float
    delta: float
    fpr_upper: float
    fnr_upper: float
    epsilon_lower: float
    mu_lower: float
    mu_estimate: float
    mu_interval: tuple[float, float]

    @property
    def fpr(self) -> float:
        return self.false_positives / self.n0

    @property
    def fnr(self) -> float:
        return self.false_negatives / self.n1

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def to_dict(self) -> dict[str, Any]:
        """The estimate as plain data (JSON-ready).

        Returns:
            Every field, the empirical rates and the confidence.
        """
        return {
            "threshold": self.threshold,
            "n0": self.n0,
            "n1": self.n1,
            "false_positives": self.false_positives,
            "false_negatives": self.false_negatives,
            "fpr": self.fpr,
            "fnr": self.fnr,
            "fpr_upper": self.fpr_upper,
            "fnr_upper": self.fnr_upper,
            "confidence": self.confidence,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "mu_estimate": self.mu_estimate,
            "mu_interval": list(self.mu_interval),
        }


def estimate(
    scores0: object, scores1: object, threshold: float, alpha: float = 0.05, delta: float = 0.0
) -> AuditEstimate:
    """Bounds from the evaluation-split scores at ``threshold``: FPR⁺ and FNR⁺ at 1 − α/2 each.

    Args:
        scores0: The evaluation split's scores on D.
        scores1: The evaluation split's scores on D′.
        threshold: The threshold, chosen without these scores (−inf allowed).
        alpha: The error probability of the bounds together.
        delta: The δ at which ε is read, in [0, 1).

    Returns:
        The counts, the bounds (``epsilon_lower`` and ``mu_lower`` hold together with probability >= 1 − α), the
        smoothed μ estimate and a 1 − α interval on μ.

    Raises:
        ValueError: If the scores are not finite vectors, the threshold not real, α not a probability or δ ∉ [0, 1).
    """
    s0, s1 = _check_scores("scores0", scores0), _check_scores("scores1", scores1)
    t = float(threshold) if threshold == -math.inf else check_real("threshold", threshold)
    alpha = check_probability("alpha", alpha)
    delta = check_real("delta", delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    n0, n1 = s0.size, s1.size
    fp, fn = int(np.count_nonzero(s0 > t)), int(np.count_nonzero(s1 <= t))
    fpr_up = clopper_pearson_upper(fp, n0, alpha / 2)
    fnr_up = clopper_pearson_upper(fn, n1, alpha / 2)
    fpr_lo = clopper_pearson_lower(fp, n0, alpha / 2)
    fnr_lo = clopper_pearson_lower(fn, n1, alpha / 2)
    mu_hat = mu_from_rates((fp + 0.5) / (n0 + 1.0), (fn + 0.5) / (n1 + 1.0))
    return AuditEstimate(
        threshold=t,
        n0=n0,
        n1=n1,
        false_positives=fp,
        false_negatives=fn,
        alpha=alpha,
        delta=delta,
        fpr_upper=fpr_up,
        fnr_upper=fnr_up,
        epsilon_lower=epsilon_lower_bound(fpr_up, fnr_up, delta),
        mu_lower=mu_lower_bound(fpr_up, fnr_up),
        mu_estimate=mu_hat,
        mu_interval=(mu_lower_bound(fpr_up, fnr_up), max(0.0, mu_from_rates(fpr_lo, fnr_lo))),
    )


#: The kind of band :func:`roc_band` gives (the ``kind`` of its dict).
ROC_BAND_KIND = "simultaneous"


@dataclass(frozen=True)
class RocBand:
    """An empirical ROC at ``points`` thresholds and, at each point, Clopper–Pearson intervals for its rates.

    Attributes:
        fpr: #{scores0 > t_j}/``negatives`` at each threshold, from (1, 1) at t = −∞ (exact) to the largest.
        tpr: #{scores1 > t_j}/``positives`` at each threshold.
        fpr_lower: The lower ends of the FPR intervals.
        fpr_upper: The upper ends of the FPR intervals.
        tpr_lower: The lower ends of the TPR intervals.
        tpr_upper: The upper ends of the TPR intervals.
        negatives: The scores of D.
        positives: The scores of D′.
        level: The probability that every interval holds together (Bonferroni over the 2·``points`` intervals).
        kind: ``"simultaneous"`` (:data:`ROC_BAND_KIND`).
    """

    fpr: tuple[float, ...]
    tpr: tuple[float, ...]
    fpr_lower: tuple[float, ...]
    fpr_upper: tuple[float, ...]
    tpr_lower: tuple[float, ...]
    tpr_upper: tuple[float, ...]
    negatives: int
    positives: int
    level: float
    kind: str = ROC_BAND_KIND

    def to_dict(self) -> dict[str, Any]:
        """The band as plain data: ``fpr``, ``tpr`` first (as the ROC was reported before the band), then the rest.

        Returns:
            Every field, the tuples as lists.
        """
        return {
            "fpr": list(self.fpr),
            "tpr": list(self.tpr),
            "negatives": self.negatives,
            "positives": self.positives,
            "level": self.level,
            "kind": self.kind,
            "fpr_lower": list(self.fpr_lower),
            "fpr_upper": list(self.fpr_upper),
            "tpr_lower": list(self.tpr_lower),
            "tpr_upper": list(self.tpr_upper),
        }


def _cp_interval_vec(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided (1 − α) Clopper–Pearson intervals for counts ``k`` of ``n``, α/2 in each tail: the upper end
    is :func:`cp_upper_array`, the lower end the same bound on the complementary count (1 − upper(n − k))."""
    return 1.0 - cp_upper_array(n - k, n, alpha / 2), cp_upper_array(k, n, alpha / 2)


def roc_band(scores0: object, scores1: object, *, points: int = 101, level: float = 0.95) -> RocBand:
    """The ROC of scores ``scores0`` (D, negatives) and ``scores1`` (D′, positives) with a ``level`` band.

    Args:
        scores0: The scores on D.
        scores1: The scores on D′.
        points: The thresholds: evenly spaced quantiles of both score sets together, after t = −∞ (the point (1, 1)).
        level: The probability that all 2·``points`` two-sided intervals hold together (Bonferroni).

    Returns:
        The ROC and its simultaneous band (the thresholds come from the same scores, so the coverage is only
        approximately binomial: measured well above ``level``, tests/audits/test_roc_band.py).

    Raises:
        ValueError: If the scores are not finite vectors, ``points`` < 2 or ``level`` is not a probability.
    """
    s0, s1 = _check_scores("scores0", scores0), _check_scores("scores1", scores1)
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 2:
        raise ValueError(f"points must be an integer >= 2, got {points!r}")
    level = check_probability("level", level)
    cuts = np.quantile(np.concatenate([s0, s1]), np.linspace(0.0, 1.0, points))
    above0 = s0[None, :] > cuts[:, None]
    above1 = s1[None, :] > cuts[:, None]
    fpr, tpr = above0.mean(axis=1), above1.mean(axis=1)
    alpha = (1.0 - level) / (2 * points)  # each two-sided interval; 2·points of them
    fpr_lo, fpr_up = _cp_interval_vec(above0.sum(axis=1), s0.size, alpha)
    tpr_lo, tpr_up = _cp_interval_vec(above1.sum(axis=1), s1.size, alpha)

    def _with_origin(values: np.ndarray) -> tuple[float, ...]:
        return (1.0, *map(float, values))

    return RocBand(
        fpr=_with_origin(fpr),
        tpr=_with_origin(tpr),
        fpr_lower=_with_origin(np.minimum(fpr_lo, fpr)),
        fpr_upper=_with_origin(np.maximum(fpr_up, fpr)),
        tpr_lower=_with_origin(np.minimum(tpr_lo, tpr)),
        tpr_upper=_with_origin(np.maximum(tpr_up, tpr)),
        negatives=int(s0.size),
        positives=int(s1.size),
        level=level,
    )


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
