"""The classic Gaussian mechanism bound (Dwork and Roth 2014, Thm A.1) with basic composition.

For ε ∈ (0, 1), σ >= Δ sqrt(2 ln(1.25/δ))/ε gives (ε, δ)-DP. The theorem says nothing for
ε >= 1, so every function here refuses a release whose ε would be >= 1 — a common pitfall in
the literature (docs/FORMULAS.md §6).

Composition of N releases is the basic theorem: ε and δ add. For a composition the δ budget
is split evenly over the N releases (δᵢ = δ/N — the split the seeds use), and so the ε of
release i is εᵢ = (Δᵢ/σᵢ) sqrt(2 ln(1.25 N/δ)); the inverse δ(ε) gives each release the
share εᵢ ∝ Δᵢ/σᵢ, which makes every δᵢ equal, so the two directions describe one curve.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from .numerics import conservative_delta, round_up, times_count
from .validation import check_count, check_positive, check_probability, shown_int

__all__ = ["CLASSIC_MAX_EPSILON", "classic_sigma", "classic_composed_epsilon", "classic_composed_delta"]

#: The classic bound holds only for per-release ε strictly below this.
CLASSIC_MAX_EPSILON = 1.0


def _refuse(per_release_epsilon: float, where: str) -> ValueError:
    return ValueError(
        f"the classic Gaussian bound (Dwork–Roth Thm A.1) holds only for epsilon < 1 per release, "
        f"but {where} needs epsilon = {per_release_epsilon:.6g} per release; "
        f"use method 'exact' (or 'pld', 'rdp', 'zcdp') instead"
    )


def classic_sigma(epsilon: float, delta: float, *, sensitivity: float = 1.0, compositions: int = 1) -> float:
    """σ from the classic bound for ``compositions`` releases sharing (ε, δ) by basic composition.

    Each release gets (ε/K, δ/K); raises ``ValueError`` when ε/K >= 1.

    Args:
        epsilon: the total target ε (> 0), shared by the releases.
        delta: the total target δ, in (0, 1), shared by the releases.
        sensitivity: the ℓ2 sensitivity Δ of each release (> 0); 1 by default.
        compositions: how many releases compose (an integer >= 1); 1 by default.

    Returns:
        σ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε not positive, δ outside (0, 1), Δ not positive, compositions not an integer >= 1, ε/K >= 1
            (outside the theorem), or a σ beyond the doubles.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("compositions", compositions)
    per_eps = epsilon / times_count(k, 1.0)  # a count beyond the doubles: ε/K below them, 0
    if per_eps >= CLASSIC_MAX_EPSILON:
        raise _refuse(per_eps, f"epsilon = {epsilon:g} over {shown_int(k)} release(s)")
    # in logs and as k/ε: δ/K or ε/K may underflow to 0 for tiny inputs
    z = math.sqrt(2.0 * (math.log(1.25) - math.log(delta) + math.log(k)))
    sigma = sensitivity * z * (times_count(k, 1.0) / epsilon)
    if not math.isfinite(sigma):
        over = "" if k == 1 else f" over compositions = {shown_int(k)}"
        raise ValueError(f"epsilon = {epsilon!r} and delta = {delta!r}{over} need a sigma beyond the range of doubles")
    return round_up(sigma)


def classic_composed_epsilon(ratios: Sequence[tuple[str, float, int]], delta: float) -> float:
    """ε of a basic composition of Gaussian releases under the classic bound, rounded up.

    ``ratios`` lists (name, Δ/σ, count) per release kind; δ is split evenly over all releases.

    Args:
        ratios: (name, Δ/σ, count) of each release kind (trusted: not validated).
        delta: the total δ, in (0, 1), split evenly over every release.

    Returns:
        ε, rounded up.

    Raises:
        ValueError: a release whose ε would be >= 1 (outside the theorem).
    """
    n = sum(count for _, _, count in ratios)
    z = math.sqrt(2.0 * (math.log(1.25) + math.log(n) - math.log(delta)))  # in logs: any count
    for name, ratio, _ in ratios:
        if ratio * z >= CLASSIC_MAX_EPSILON:
            raise _refuse(ratio * z, f"release {name!r} at delta = {delta:g}/{shown_int(n)}")
    return round_up(z * math.fsum(times_count(count, ratio) for _, ratio, count in ratios))


def classic_composed_delta(ratios: Sequence[tuple[str, float, int]], epsilon: float) -> float:
    """δ(ε) of a basic composition under the classic bound (εᵢ ∝ Δᵢ/σᵢ), rounded up, at most 1.

    Args:
        ratios: (name, Δ/σ, count) of each release kind (trusted: not validated).
        epsilon: the total ε (> 0), shared in proportion to Δᵢ/σᵢ.

    Returns:
        δ, rounded up, at most 1.

    Raises:
        ValueError: a release whose share of ε would be >= 1 (outside the theorem).
    """
    n = sum(count for _, _, count in ratios)
    t = epsilon / math.fsum(times_count(count, ratio) for _, ratio, count in ratios)
    for name, ratio, _ in ratios:
        if ratio * t >= CLASSIC_MAX_EPSILON:
            raise _refuse(ratio * t, f"release {name!r} at its share of epsilon = {epsilon:g}")
    tail = math.exp(-t * t / 2.0)
    if tail >= sys.float_info.min and n <= sys.float_info.max:
        return min(1.0, round_up(1.25 * n * tail))
    # the tail below the normal doubles, or a count beyond them: in logs (their error absorbed by the margin)
    return conservative_delta(math.log(1.25) + math.log(n) - t * t / 2.0)
