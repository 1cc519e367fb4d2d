"""The ROC of an attack with its simultaneous Clopper–Pearson band (audits/estimators.py ``roc_band``): the band
holds the curve, a reference value against the beta quantiles and a brute-force binomial, widths like 1/√n,
coverage of a known pair of Gaussians by simulation, and the RL audit's ``roc`` dict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from dpkit.audits.estimators import RocBand, roc_band

LEVEL = 0.95


def quantile_scores(n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """N(0, 1) and N(shift, 1) represented by their n mid-quantiles (deterministic scores)."""
    z = special.ndtri((np.arange(n) + 0.5) / n)
    return z, z + shift


def test_old_fields_are_the_roc_as_before_and_the_band_holds_it() -> None:
    rng = np.random.default_rng(4)
    s0, s1 = rng.standard_normal(700), 1.0 + rng.standard_normal(500)
    band = roc_band(s0, s1, points=101, level=LEVEL)
    # fpr and tpr exactly as audits/rl/fixed.py computed them before the band (byte-identical reports)
    cuts = np.quantile(np.concatenate([s0, s1]), np.linspace(0.0, 1.0, 101))
    assert band.fpr == (1.0, *map(float, (s0[None, :] > cuts[:, None]).mean(axis=1)))
    assert band.tpr == (1.0, *map(float, (s1[None, :] > cuts[:, None]).mean(axis=1)))
    assert (band.negatives, band.positives, band.level, band.kind) == (700, 500, LEVEL, "simultaneous")
    f, t = np.array(band.fpr), np.array(band.tpr)
    assert np.all((0 <= np.array(band.fpr_lower)) & (np.array(band.fpr_lower) <= f) & (f <= band.fpr_upper))
    assert np.all((0 <= np.array(band.tpr_lower)) & (np.array(band.tpr_lower) <= t) & (t <= band.tpr_upper))
    assert np.all(np.array(band.fpr_upper) <= 1) and np.all(np.array(band.tpr_upper) <= 1)
    assert band.fpr_lower[0] == band.fpr_upper[0] == band.tpr_lower[0] == band.tpr_upper[0] == 1.0  # t = −∞
    # the bounds are monotone in the threshold, as the rates are
    for key in ("fpr_lower", "fpr_upper", "tpr_lower", "tpr_upper"):
        assert np.all(np.diff(getattr(band, key)) <= 0), key
    d = band.to_dict()
    assert list(d)[:2] == ["fpr", "tpr"] and d["fpr"] == list(band.fpr)
    assert set(d) == {"fpr", "tpr", "negatives", "positives", "level", "kind"} | {
        f"{r}_{e}" for r in ("fpr", "tpr") for e in ("lower", "upper")
    }
    assert roc_band(s0, s1) == band  # deterministic


def _binomial_cdf(k: int, n: int, p: float) -> float:
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_reference_value_against_beta_quantiles_and_a_brute_force_binomial() -> None:
    s0, s1 = quantile_scores(30, 0.8)
    points = 11
    band = roc_band(s0, s1, points=points, level=LEVEL)
    a = (1 - LEVEL) / (2 * points) / 2  # each tail of each of the 2·points intervals
    j = 6  # a threshold inside both score sets
    k, n = round(band.fpr[j] * 30), 30
    assert 0 < k < n
    lo, up = band.fpr_lower[j], band.fpr_upper[j]
    assert lo == pytest.approx(stats.beta.ppf(a, k, n - k + 1), rel=1e-10)
    assert up == pytest.approx(stats.beta.ppf(1 - a, k + 1, n - k), rel=1e-10)
    # Clopper–Pearson: at the upper end P[Bin(n, p) <= k] = a, at the lower end P[Bin(n, p) >= k] = a
    assert _binomial_cdf(k, n, up) == pytest.approx(a, rel=1e-8)
    assert 1 - _binomial_cdf(k - 1, n, lo) == pytest.approx(a, rel=1e-8)
    # the same for the positives at that threshold
    k1 = round(band.tpr[j] * 30)
    assert band.tpr_upper[j] == pytest.approx(stats.beta.ppf(1 - a, k1 + 1, n - k1), rel=1e-10)
    assert band.tpr_lower[j] == pytest.approx(stats.beta.ppf(a, k1, n - k1 + 1), rel=1e-10)


def test_widths_shrink_like_one_over_root_n() -> None:
    widths = []
    for n in (400, 1600, 6400):
        band = roc_band(*quantile_scores(n, 1.0), points=101, level=LEVEL)
        j = 50  # the pooled median: FPR ≈ 0.31, TPR ≈ 0.69 at every n
        widths.append((band.fpr_upper[j] - band.fpr_lower[j], band.tpr_upper[j] - band.tpr_lower[j]))
    w = np.array(widths)
    ratios = w[:-1] / w[1:]  # ×4 runs: half the width
    assert np.all((ratios > 1.9) & (ratios < 2.1)), ratios


def test_band_covers_the_true_roc_of_two_gaussians() -> None:
    """200 repetitions of N(0, 1) against N(1, 1): at every threshold of the band the true (FPR, TPR) =
    (1 − Φ(t), 1 − Φ(t − 1)) lies in its intervals, simultaneously, in at least the claimed share of them
    (loosely: Bonferroni is conservative, the measured share is ~1)."""
    rng = np.random.default_rng(20)
    reps, n, covered = 200, 400, 0
    for _ in range(reps):
        s0, s1 = rng.standard_normal(n), 1.0 + rng.standard_normal(n)
        band = roc_band(s0, s1, points=101, level=LEVEL)
        cuts = np.quantile(np.concatenate([s0, s1]), np.linspace(0.0, 1.0, 101))
        f, t = np.r_[1.0, special.ndtr(-cuts)], np.r_[1.0, special.ndtr(1.0 - cuts)]
        inside = (
            (np.array(band.fpr_lower) <= f)
            & (f <= np.array(band.fpr_upper))
            & (np.array(band.tpr_lower) <= t)
            & (t <= np.array(band.tpr_upper))
        )
        covered += bool(inside.all())
    assert covered / reps >= LEVEL - 0.03, covered


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"points": 1}, "points"), ({"points": 2.5}, "points"), ({"level": 1.0}, "level"), ({"level": 0.0}, "level")],
)
def test_roc_band_rejects_bad_options(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        roc_band([0.0, 1.0], [1.0, 2.0], **kwargs)
    with pytest.raises(ValueError, match="scores0"):
        roc_band([], [1.0])


def test_rl_audit_reports_the_band_at_its_confidence() -> None:
    from dpkit.audits.rl.fixed import ROC_POINTS, audit_setting
    from dpkit.audits.rl.setting import default_setting

    result = audit_setting(default_setting("ldp-ucrl-vtr"), runs=60, seed=3, alpha=0.1)
    assert isinstance(result.roc, RocBand)
    roc = result.to_dict()["roc"]
    assert roc["level"] == pytest.approx(0.9) and roc["kind"] == "simultaneous"
    assert roc["negatives"] == roc["positives"] == 30  # the evaluation half of each side
    assert len(roc["fpr"]) == len(roc["tpr_upper"]) == ROC_POINTS + 1
    assert all(lo <= x <= up for lo, x, up in zip(roc["tpr_lower"], roc["tpr"], roc["tpr_upper"]))
