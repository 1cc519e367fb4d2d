"""The confidence radii of LinOpt's optimistic bonuses (Lemma 3.1 of seed 004) and the noise bounds of Thm 6.5
that shift them, with the PO step size of Thm 5.1 (see :mod:`dpkit.algorithms.linopt`)."""

from __future__ import annotations

import math

from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.accountant.validation import (
    check_count,
    check_index,
    check_nonnegative,
    check_probability,
)

__all__ = [
    "DEFAULT_REGULARIZATION",
    "DEFAULT_ALPHA",
    "paper_eta",
    "noise_shift",
    "target_noise_bound",
    "confidence_radii",
]

#: λ of the non-private ridge regulariser λI. The paper states none ("choosing Z = λI and z = 0 … reduces to
#: the standard non-private … algorithms", §3); λ > 0 is needed and 1 is the unit ridge.
DEFAULT_REGULARIZATION: float = 1.0
#: The confidence level α of Lemma 3.1 and of the noise bounds of Thm 6.5.
DEFAULT_ALPHA: float = 0.05


def paper_eta(actions: int, horizon: int, episodes: int) -> float:
    """η = sqrt(2 ln|A| / (H T)) = sqrt(2 ln|A| / (H² K)), the mirror-descent step of Thm 5.1.

    From Cai et al. 2020, Eq. C.2 (the seed's text lost the square root).

    Args:
        actions: |A|.
        horizon: H.
        episodes: K.

    Returns:
        η (0 when |A| = 1).

    Raises:
        ValueError: If a size is not a positive integer.

    Examples:
        >>> round(paper_eta(2, 3, 300), 6)
        0.022659
        >>> paper_eta(1, 3, 300)
        0.0
    """
    a = check_count("actions", actions)
    h = check_count("horizon", horizon)
    k = check_count("episodes", episodes)
    return math.sqrt(2.0 * math.log(a) / (h * h * k))


def noise_shift(sigma: float, psums: int, dim: int, episodes: int, horizon: int, alpha: float) -> float:
    """Σ = σ sqrt(m)(4 sqrt(d) + sqrt(8 ln(8KH/α))), a bound on the operator norm of a prefix's Gram noise.

    With probability >= 1 − α/(4KH) it bounds the symmetric Gram noise of one prefix of at most m p-sums
    (Thm 6.5). This is :func:`~dpkit.accountant.tree.symmetric_noise_norm_bound` at failure probability α/(4KH)
    (the union bound over the K episodes and H steps).

    Args:
        sigma: σ of the Gram counter.
        psums: m, the most p-sums in a released prefix.
        dim: d, the side of the Gram matrix.
        episodes: K.
        horizon: H.
        alpha: α.

    Returns:
        Σ (0 when σ = 0 or m = 0).

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> noise_shift(0.0, psums=3, dim=5, episodes=100, horizon=4, alpha=0.1)
        0.0
    """
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    alpha = check_probability("alpha", alpha)
    return symmetric_noise_norm_bound(sigma, psums=psums, dim=dim, failure_probability=alpha / (4.0 * k * h))


def target_noise_bound(sigma: float, psums: int, dim: int, episodes: int, horizon: int, alpha: float) -> float:
    """σ sqrt(m)(sqrt(d) + sqrt(2 ln(4KH/α))), a bound on the ℓ2 norm of a target prefix's noise.

    It holds with probability >= 1 − α/(4KH) (χ² tail, Lemma B.5; Thm 6.5).

    Args:
        sigma: σ of the target counter.
        psums: m, the most p-sums in a released prefix.
        dim: d, the length of the target.
        episodes: K.
        horizon: H.
        alpha: α.

    Returns:
        The bound ν₀ (0 when σ = 0 or m = 0).

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> round(target_noise_bound(2.0, psums=4, dim=9, episodes=100, horizon=4, alpha=0.05), 4)
        30.2195
    """
    sigma = check_nonnegative("sigma", sigma)
    psums = check_index("psums", psums)
    dim = check_count("dim", dim)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    alpha = check_probability("alpha", alpha)
    if sigma == 0.0 or psums == 0:
        return 0.0
    return sigma * math.sqrt(psums) * (math.sqrt(dim) + math.sqrt(2.0 * math.log(4.0 * k * h / alpha)))


def confidence_radii(
    d1: int,
    d2: int,
    episodes: int,
    horizon: int,
    *,
    regularization: float = DEFAULT_REGULARIZATION,
    shift_p: float = 0.0,
    shift_r: float = 0.0,
    target_noise_p: float = 0.0,
    target_noise_r: float = 0.0,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[float, float]:
    """(β_p, β_r) of Lemma 3.1 for the regulariser Z = N + (λ + 2Σ)I, ‖N‖ <= Σ, ‖z‖ <= ν₀.

    With λ_min = Σ + λ, λ_max = 3Σ + λ and ν = ν₀/sqrt(λ_min),
    β_p = (H/2) sqrt(2 ln(H/α) + d1 ln(1 + KH²/λ_min,p)) + sqrt(d1 λ_max,p) + ν_p and
    β_r = (1/2) sqrt(2 ln(H/α) + d2 ln(1 + K/(d2 λ_min,r))) + sqrt(d2 λ_max,r) + ν_r.
    Without noise (Σ = ν₀ = 0) these are the radii of the fixed regulariser λI.

    Args:
        d1: The dimension of the transition features φ.
        d2: The dimension of the reward features ϕ.
        episodes: K.
        horizon: H.
        regularization: λ >= 0.
        shift_p: Σ_p (:func:`noise_shift` of the transition Gram counter).
        shift_r: Σ_r (of the reward Gram counter).
        target_noise_p: ν₀ of the transition target counter (:func:`target_noise_bound`).
        target_noise_r: ν₀ of the reward target counter.
        alpha: α.

    Returns:
        (β_p, β_r).

    Raises:
        ValueError: If an argument is out of range, or a regulariser is singular (λ = 0 without a shift).

    Examples:
        >>> [round(beta, 4) for beta in confidence_radii(8, 4, episodes=100, horizon=3)]
        [14.698, 4.3033]
    """
    d1 = check_count("d1", d1)
    d2 = check_count("d2", d2)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    lam = check_nonnegative("regularization", regularization)
    sp = check_nonnegative("shift_p", shift_p)
    sr = check_nonnegative("shift_r", shift_r)
    np_ = check_nonnegative("target_noise_p", target_noise_p)
    nr = check_nonnegative("target_noise_r", target_noise_r)
    alpha = check_probability("alpha", alpha)
    lmin_p, lmin_r = sp + lam, sr + lam
    for name, value in (("transition", lmin_p), ("reward", lmin_r)):
        if value <= 0.0:
            raise ValueError(
                f"the {name} regulariser is singular: regularization = {lam!r} and no noise shift; give "
                f"regularization > 0"
            )
    log_h = 2.0 * math.log(h / alpha)
    beta_p = 0.5 * h * math.sqrt(log_h + d1 * math.log1p(k * h * h / lmin_p)) + math.sqrt(d1 * (3.0 * sp + lam))
    beta_r = 0.5 * math.sqrt(log_h + d2 * math.log1p(k / (d2 * lmin_r))) + math.sqrt(d2 * (3.0 * sr + lam))
    return beta_p + np_ / math.sqrt(lmin_p), beta_r + nr / math.sqrt(lmin_r)
