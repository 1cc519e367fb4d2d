"""From attack scores to statistically valid lower bounds on ε and μ (docs/FORMULAS.md §5, §8).

A test says D′ when its score exceeds t; with one-sided Clopper–Pearson upper bounds FPR⁺ and FNR⁺ at 1 − α/2
each, ε_lower = max(ln((1 − δ − FNR⁺)/FPR⁺), ln((1 − δ − FPR⁺)/FNR⁺), 0) and μ_lower = max(Φ⁻¹(1 − FPR⁺) −
Φ⁻¹(FNR⁺), 0) hold together at 1 − α. :func:`select_threshold` picks t on a *selection* split and :func:`estimate`
bounds the error rates on a separate *evaluation* split. The one-run p-values and bounds are here too.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from dpkit.accountant.validation import (
    check_member,
    check_probability,
    check_real,
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
    objective: Objective | str = "mu",
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
    objective = check_member("objective", objective, Objective)
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
