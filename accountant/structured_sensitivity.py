"""Sensitivities that use the structure of a statistic, where the norm-ball bounds of
:mod:`dpkit.accountant.sensitivity` are loose: one-hot block features and jointly released sums.

**One-hot block features** (seeds 000 and 004): a value vector v ∈ [0, c]^S in the block of (s, a) spreads its
mass, so the upper triangle of φφᵀ holds less than the norm ball allows (:func:`block_outer_product_sensitivity`).
**A Gram sum and a cross sum released together** (seed 003): each sensitivity alone is attained, not both at once
(:func:`gram_cross_joint_sensitivity` bounds the whitened joint difference). The derivations:
docs/explanation/neighbours.md (Structured sensitivities).
"""

from __future__ import annotations

import math

import numpy as np

from .numerics import round_up
from .sensitivity import Relation, check_relation
from .validation import check_count, check_nonnegative, check_positive

__all__ = ["block_norm_bound", "block_outer_product_sensitivity", "gram_cross_joint_mu", "gram_cross_joint_sensitivity"]


def block_norm_bound(entry_bound: float, size: int, norm_bound: float | None = None) -> float:
    """The largest ‖v‖ of a block v ∈ [0, c]^S (``entry_bound`` c, ``size`` S) clipped to ‖v‖ <= B
    (``norm_bound``; no clip when ``None``): min(B, √S·c).

    Args:
        entry_bound: c, the bound on each entry (> 0).
        size: S, the block's entries (an integer >= 1).
        norm_bound: B, the clip (> 0); None: no clip.

    Returns:
        min(B, √S·c).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: c or B not positive and finite, or S below 1.
    """
    c = check_positive("entry_bound", entry_bound)
    s = check_count("size", size)
    whole = math.sqrt(s) * c
    return whole if norm_bound is None else min(check_positive("norm_bound", norm_bound), whole)


def _upper_square(entry_bound: float, size: int, norm_bound: float | None) -> float:
    """U* = max ‖U(vvᵀ)‖² over v ∈ [0, c]^S with ‖v‖ <= B (module docstring)."""
    c2 = entry_bound * entry_bound
    t = block_norm_bound(entry_bound, size, norm_bound) ** 2
    k = min(size, math.floor(t / c2 * (1.0 + 1e-15)))  # entries at c² (rounding: t = S c² exactly)
    r = max(t - k * c2, 0.0)
    return 0.5 * t * t + 0.5 * (k * c2 * c2 + r * r)


def block_outer_product_sensitivity(
    entry_bound: float, size: int, relation: Relation | str, *, norm_bound: float | None = None
) -> float:
    """Sensitivity of Σ_users U(φφᵀ) for one-hot block features φ: v ∈ [0, c]^S in one block, ‖φ‖ <= B.

    * ``add_remove``: ‖U(φφᵀ)‖ <= sqrt(U*), attained by the v of the module docstring: Δ = sqrt(U*).
    * ``replace_one``: for M = φφᵀ − ψψᵀ, ‖U(M)‖² = (‖M‖_F² + ‖diag M‖²)/2 with ‖M‖_F² = ‖φ‖⁴ + ‖ψ‖⁴ − 2(φ·ψ)²
      and ‖diag M‖² = Σ φ_i⁴ + Σ ψ_i⁴ − 2Σ φ_i²ψ_i², so ‖U(M)‖² <= ‖U(φφᵀ)‖² + ‖U(ψψᵀ)‖² <= 2U*, attained by two
      such v in different blocks (disjoint supports): Δ = sqrt(2U*).

    With S entries at the same bound c and no binding clip (B >= √S·c), U* = c⁴ S(S + 1)/2:

    Args:
        entry_bound: c, the bound on each entry of v (> 0).
        size: S, the block's entries (an integer >= 1).
        relation: "add_remove" or "replace_one".
        norm_bound: B, the clip on ‖φ‖ (> 0); None: no clip.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: c or B not positive, S below 1, an unknown relation, or a result that overflows.

    Examples:
        >>> round(block_outer_product_sensitivity(1.0, 2, "replace_one"), 12)  # sqrt(S(S+1)) c², S = 2
        2.449489742783
    """
    c = check_positive("entry_bound", entry_bound)
    s = check_count("size", size)
    relation = check_relation(relation)
    u = _upper_square(c, s, norm_bound)
    value = math.sqrt(u if relation == Relation.ADD_REMOVE else 2.0 * u)
    if not math.isfinite(value):
        raise ValueError(f"block_outer_product_sensitivity overflows for entry_bound={c!r}, size={s!r}")
    return round_up(value)


def gram_cross_joint_sensitivity(
    *,
    steps: int,
    state_bound: float,
    control_bound: float,
    sigma_gram: float,
    sigma_cross: float,
    relation: Relation | str,
) -> float:
    """The whitened joint sensitivity of B1 = Σ_h U(z_h z_hᵀ) (noise σ1) and B2 = Σ_h z_h x_{h+1}ᵀ (noise σ2),
    z_h = [x_h; u_h], ‖x_h‖ <= X (``state_bound``), ‖u_h‖ <= γ (``control_bound``), h = 1..H (``steps``):
    sup over neighbouring pairs of sqrt(‖U(ΔB1)‖²/σ1² + ‖ΔB2‖²/σ2²), the μ of one p-sum of each counter.

    With a² = X⁴ + X²γ² + γ⁴ and b² = X² + γ²: under add_remove H²(a²/σ1² + b²X²/σ2²); under replace_one the
    maximum over s ∈ [0, Hb²] of a bound F(s), taken on a grid plus the step times a bound on |F′|, never above the
    separate suprema (the derivation: docs/explanation/neighbours.md).


    Args:
        steps: H (an integer >= 1).
        state_bound: X, the bound on ‖x_h‖ (> 0).
        control_bound: γ, the bound on ‖u_h‖ (>= 0).
        sigma_gram: σ1, the Gram sum's noise (> 0).
        sigma_cross: σ2, the cross sum's noise (> 0).
        relation: "add_remove" or "replace_one".

    Returns:
        The joint μ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: a bound or σ out of range, H below 1, an unknown relation, or a result that overflows.
    """
    h = check_count("steps", steps)
    x = check_positive("state_bound", state_bound)
    g = check_nonnegative("control_bound", control_bound)
    s1 = check_positive("sigma_gram", sigma_gram)
    s2 = check_positive("sigma_cross", sigma_cross)
    relation = check_relation(relation)
    # in units of σ1 (μ is homogeneous of degree −1 in the σ: the weights stay in the doubles' range)
    w1, w2 = 1.0, (s1 / s2) ** 2
    x2, g2 = x * x, g * g
    a2 = x2 * x2 + x2 * g2 + g2 * g2
    b2 = x2 + g2
    if relation == Relation.ADD_REMOVE:
        total = h * h * (w1 * a2 + w2 * b2 * x2)
    else:
        hh, hg2, edge = float(h * h), h * g2, (2 * h - 1) * x2 * x2
        top = h * b2
        grid = np.linspace(0.0, top, _GRID)
        gram = np.minimum(2.0 * hh * b2 * b2 - 2.0 * grid * grid, 2.0 * hh * a2 - grid * grid)
        cross = np.minimum(4.0 * hh * b2 * x2, 2.0 * hh * b2 * x2 + 2.0 * grid * np.sqrt((grid + hg2) ** 2 + edge))
        # |F′| <= w1·4s + w2·(2 sqrt((s + Hγ²)² + e) + 2s) on [0, Hb²]; half a grid step from the nearest point
        slope = w1 * 4.0 * top + w2 * (2.0 * math.sqrt((top + hg2) ** 2 + edge) + 2.0 * top)
        total = float(np.max(w1 * gram + w2 * cross)) + slope * top / (_GRID - 1) / 2.0
        separate = 2.0 * hh * a2 * w1 + 4.0 * hh * b2 * x2 * w2
        total = min(total, separate)
    if not math.isfinite(total):
        raise ValueError(f"gram_cross_joint_sensitivity overflows for sigma_gram={s1!r}, sigma_cross={s2!r}")
    return round_up(math.sqrt(max(total, 0.0)) * (1.0 + 1e-14) / s1)


#: Grid points of the maximisation in :func:`gram_cross_joint_sensitivity`.
_GRID = 4097


def gram_cross_joint_mu(
    relation: Relation | str, sigmas: tuple[float, float], *, steps: int, state_bound: float, control_bound: float
) -> float:
    """:func:`gram_cross_joint_sensitivity` in the form of a :class:`~dpkit.accountant.declarations.JointRelease`
    bound: ``sigmas`` = (σ of the Gram sum, σ of the cross sum).

    Args:
        relation: "add_remove" or "replace_one".
        sigmas: (σ1, σ2).
        steps: H (an integer >= 1).
        state_bound: X (> 0).
        control_bound: γ (>= 0).

    Returns:
        The joint μ, as :func:`gram_cross_joint_sensitivity`.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: as :func:`gram_cross_joint_sensitivity`.
    """
    sigma_gram, sigma_cross = sigmas
    return gram_cross_joint_sensitivity(
        steps=steps,
        state_bound=state_bound,
        control_bound=control_bound,
        sigma_gram=sigma_gram,
        sigma_cross=sigma_cross,
        relation=relation,
    )
