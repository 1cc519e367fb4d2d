"""Sensitivities that use the structure of a statistic, where the norm-ball bounds of
:mod:`dpkit.accountant.sensitivity` are loose: one-hot block features and jointly released sums.

**One-hot block features** (the linear-mixture view of a tabular MDP, seeds 000 and 004): a user's
feature φ = φ_V(s, a) ∈ R^{S²A} is a value vector v ∈ [0, c]^S placed in the block of (s, a), clipped to
‖φ‖ <= B. The norm-ball bound of :func:`~dpkit.accountant.sensitivity.outer_product_sensitivity` takes
‖φ‖ <= B and charges the Gram update φφᵀ (released on its upper triangle) √2·B² under replace-one — attained
only by two features each concentrated on one coordinate of norm B. A block feature of norm B spreads its mass
over the S entries of v (each at most c), and its upper triangle holds less: for x_i = v_i²,

    ‖U(φφᵀ)‖² = (‖φ‖⁴ + Σ v_i⁴)/2 = ((Σ x_i)² + Σ x_i²)/2,

nondecreasing in every x_i ∈ [0, c²] and Schur-convex, so over the box ∩ ball its maximum U* sits at
Σ x_i = t = min(B², S c²) with the mass as unequal as allowed: k = ⌊t/c²⌋ entries at c², one at
r = t − k c². Then (see :func:`block_outer_product_sensitivity`) add/remove Δ = sqrt(U*), replace-one
Δ = sqrt(2U*) — for S = 2 entries at the same bound c (the tabular case, B = √S·c) c²·sqrt(S(S + 1)) instead
of √2·S·c². The products φ·y (y ∈ [0, Y]) keep the nonnegative norm-ball form with the block's norm
min(B, √S·c) (:func:`block_norm_bound`).

**A Gram sum and a cross sum released together** (seed 003's counters, z = [x; u]): B1 = Σ_h z_h z_hᵀ (upper
triangle, noise σ1) and B2 = Σ_h z_h x_{h+1}ᵀ (noise σ2) are two Gaussian mechanisms on the same trajectory. Each
sensitivity alone is attained, but not both at once: B1's worst pair has orthogonal trajectories, B2's worst pair
the same trajectory with alternating signs, which cancels in B1. :func:`gram_cross_joint_sensitivity` bounds the
whitened joint difference sqrt(‖U(ΔB1)‖²/σ1² + ‖ΔB2‖²/σ2²) directly (the μ of the pair of mechanisms per
release), below the sum of the two separate suprema.
"""

from __future__ import annotations

import math

import numpy as np

from .numerics import round_up
from .sensitivity import check_relation
from .validation import check_count, check_nonnegative, check_positive

__all__ = ["block_norm_bound", "block_outer_product_sensitivity", "gram_cross_joint_mu", "gram_cross_joint_sensitivity"]


def block_norm_bound(entry_bound: float, size: int, norm_bound: float | None = None) -> float:
    """The largest ‖v‖ of a block v ∈ [0, c]^S (``entry_bound`` c, ``size`` S) clipped to ‖v‖ <= B
    (``norm_bound``; no clip when ``None``): min(B, √S·c)."""
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
    entry_bound: float, size: int, relation: str, *, norm_bound: float | None = None
) -> float:
    """Sensitivity of Σ_users U(φφᵀ) for one-hot block features φ: v ∈ [0, c]^S in one block, ‖φ‖ <= B.

    * ``add_remove``: ‖U(φφᵀ)‖ <= sqrt(U*), attained by the v of the module docstring: Δ = sqrt(U*).
    * ``replace_one``: for M = φφᵀ − ψψᵀ, ‖U(M)‖² = (‖M‖_F² + ‖diag M‖²)/2 with ‖M‖_F² = ‖φ‖⁴ + ‖ψ‖⁴ − 2(φ·ψ)²
      and ‖diag M‖² = Σ φ_i⁴ + Σ ψ_i⁴ − 2Σ φ_i²ψ_i², so ‖U(M)‖² <= ‖U(φφᵀ)‖² + ‖U(ψψᵀ)‖² <= 2U*, attained by two
      such v in different blocks (disjoint supports): Δ = sqrt(2U*).

    With S entries at the same bound c and no binding clip (B >= √S·c), U* = c⁴ S(S + 1)/2:

    Examples:
        >>> round(block_outer_product_sensitivity(1.0, 2, "replace_one"), 12)  # sqrt(S(S+1)) c², S = 2
        2.449489742783
    """
    c = check_positive("entry_bound", entry_bound)
    s = check_count("size", size)
    relation = check_relation(relation)
    u = _upper_square(c, s, norm_bound)
    value = math.sqrt(u if relation == "add_remove" else 2.0 * u)
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
    relation: str,
) -> float:
    """The whitened joint sensitivity of B1 = Σ_h U(z_h z_hᵀ) (noise σ1) and B2 = Σ_h z_h x_{h+1}ᵀ (noise σ2),
    z_h = [x_h; u_h], ‖x_h‖ <= X (``state_bound``), ‖u_h‖ <= γ (``control_bound``), h = 1..H (``steps``):
    sup over neighbouring pairs of sqrt(‖U(ΔB1)‖²/σ1² + ‖ΔB2‖²/σ2²), the μ of one p-sum of each counter.

    With w_i = 1/σ_i², a² = X⁴ + X²γ² + γ⁴ (the largest ‖U(zzᵀ)‖²), b² = X² + γ² (the largest ‖z‖²):

    * ``add_remove``: the two separate suprema, H²(w1 a² + w2 b² X²) (attained together by one trajectory).
    * ``replace_one``: for trajectories z, z′ write A = Σ z_h z_hᵀ, C = Σ z_h x_{h+1}ᵀ (primes for z′),
      G_hg = z_h·z′_g, P = ‖G‖_F² = ⟨A, A′⟩_F and S_hg = x_{h+1}·x′_{g+1}. Then

        ‖U(ΔB1)‖² <= ‖A − A′‖_F² = ‖A‖² + ‖A′‖² − 2P <= 2H²b⁴ − 2P,
        ‖U(ΔB1)‖² = ‖UA‖² + ‖UA′‖² − P − Σ_i A_ii A′_ii <= 2H²a² − P,
        ‖ΔB2‖² = ‖C‖² + ‖C′‖² − 2⟨G, S⟩_F <= 2H²b²X² + 2 sqrt(P) ‖S‖_F  (Cauchy–Schwarz on the whole sum),
        ‖S‖_F² <= (sqrt(P) + Hγ²)² + (2H − 1)X⁴,

      the last because the H×H matrix [x_h·x′_g] (h, g <= H) is G minus [u_h·u′_g] (Frobenius norm <= Hγ²) and
      S drops its first row and column and adds the 2H − 1 pairs that hold x_{H+1}; also ‖ΔB2‖ <= 2HbX. So the
      whitened square is at most the maximum over s = sqrt(P) ∈ [0, Hb²] of

        F(s) = w1 min(2H²b⁴ − 2s², 2H²a² − s²) + w2 min(4H²b²X², 2H²b²X² + 2s sqrt((s + Hγ²)² + (2H − 1)X⁴)),

      taken here on a grid of 4,097 points plus the grid step times a bound on |F′| (so never below the
      maximum). Two trajectories nearly attain it: orthogonal ones (F ≈ 2H²(w1a² + w2b²X²), s = 0) when w2 <~ w1,
      one trajectory against itself with alternating signs (≈ 4H²b²X²w2, s = Hb²) when w2 >~ w1; the gap is the
      (2H − 1)X⁴ of the last state, a few per cent at H = 4. It never exceeds the separate suprema
      2H²a²w1 + 4H²b²X²w2.
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
    if relation == "add_remove":
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
    relation: str, sigmas: tuple[float, float], *, steps: int, state_bound: float, control_bound: float
) -> float:
    """:func:`gram_cross_joint_sensitivity` in the form of a :class:`~dpkit.accountant.declarations.JointRelease`
    bound: ``sigmas`` = (σ of the Gram sum, σ of the cross sum)."""
    sigma_gram, sigma_cross = sigmas
    return gram_cross_joint_sensitivity(
        steps=steps,
        state_bound=state_bound,
        control_bound=control_bound,
        sigma_gram=sigma_gram,
        sigma_cross=sigma_cross,
        relation=relation,
    )
