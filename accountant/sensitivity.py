"""ℓ2 sensitivity of additively aggregated statistics, with the neighbouring relation explicit.

A private release adds Gaussian noise to a statistic ``f(D) = Σ_{u ∈ D} term(u)`` (or a
function of such sums). Its ℓ2 sensitivity depends on what "neighbouring datasets" means:

* ``"add_remove"`` — D′ is D with one user removed, so Δ = sup_u ‖term(u)‖;
* ``"replace_one"`` — D′ is D with one user's data replaced, so Δ = sup_{u,u′} ‖term(u) − term(u′)‖.

The closed forms below bound Δ for the terms private RL algorithms aggregate, under either relation, rounded
up (never below the exact supremum); :func:`clip_norm` enforces the norm bounds they assume. The derivations and
where each supremum is attained: docs/explanation/neighbours.md (The closed forms, derived).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .numerics import round_up, times_count
from .validation import (
    check_choice,
    check_count,
    check_member,
    check_positive,
    enum_values,
    shown_int,
)

__all__ = [
    "RELATIONS",
    "Relation",
    "ReleaseNoise",
    "SensitivityNoise",
    "check_relation",
    "clip_norm",
    "episode_outer_product_sensitivity",
    "episode_product_sensitivity",
    "episode_sum_sensitivity",
    "outer_product_sensitivity",
    "stacked_outer_product_sensitivity",
    "product_sensitivity",
    "symmetric_matrix_sensitivity",
    "upper_triangle",
    "value_step_fractions",
    "vector_sensitivity",
]


class Relation(enum.StrEnum):
    """The neighbouring relations, in their canonical (underscore) spelling (the CLI's is hyphenated)."""

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"


#: The values of :class:`Relation`.
RELATIONS: tuple[str, ...] = enum_values(Relation)


class SensitivityNoise(enum.StrEnum):
    """How a symmetric matrix is noised, as the sensitivities read it: ``"upper"`` — noise on the entries i <= j only,
    mirrored (the released vector is :func:`upper_triangle`); ``"full"`` — i.i.d. noise on all d² entries."""

    UPPER = "upper"
    FULL = "full"


class ReleaseNoise(enum.StrEnum):
    """How a released array is noised, as a declared release (:mod:`dpkit.accountant.declarations`) and a white-box
    attack (:class:`dpkit.audits.attacks.GaussianLikelihoodRatio`) read it: ``"iid"`` — i.i.d. noise on every entry;
    ``"symmetric"`` — i.i.d. noise on the entries i <= j of a symmetric matrix (its last two axes), mirrored.

    The same two layouts as :class:`SensitivityNoise` (``"iid"`` is ``"full"`` on a matrix, ``"symmetric"`` is
    ``"upper"``), under the names those readers have always taken."""

    IID = "iid"
    SYMMETRIC = "symmetric"


_SPELLINGS = {
    "add_remove": "add_remove",
    "replace_one": "replace_one",
    "add-remove": "add_remove",
    "replace-one": "replace_one",
}

_SQRT2 = math.sqrt(2.0)
_U = 2.0**-53  # unit roundoff of binary64

# --------------------------------------------------------------------------------------------
# validation helpers


def check_relation(relation: object) -> Relation:
    """Return the neighbouring relation a caller names, as the enum's member.

    Accepts ``"add_remove"`` and ``"replace_one"`` and the CLI spellings ``"add-remove"`` and
    ``"replace-one"``; any other string raises :class:`ValueError` naming the value and the choices,
    anything else a :class:`TypeError`.

    Args:
        relation: the relation's name.

    Returns:
        Relation.ADD_REMOVE or Relation.REPLACE_ONE.

    Raises:
        ArgumentTypeError: not a string.
        ValueError: any other string.
    """
    return Relation(_SPELLINGS[check_choice("relation", relation, tuple(_SPELLINGS))])


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")  # noqa: TRY004 (the package contract)
    return bool(value)


def _finish(name: str, value: float, **inputs: float) -> float:
    """Round a closed-form sensitivity up; refuse an overflow."""
    if not math.isfinite(value):
        shown = ", ".join(f"{k}={shown_int(v) if isinstance(v, int) else repr(v)}" for k, v in inputs.items())
        raise ValueError(f"{name} overflows for {shown}")
    return round_up(value)


# --------------------------------------------------------------------------------------------
# closed forms


def value_step_fractions(horizon: int) -> tuple[float, ...]:
    """(H − h)/H for h = 1..H: the share of the value range [0, V_max] that V_{h+1} can reach.

    With per-step rewards in [0, V_max/H] the return-to-go after step h is at most (H − h)·V_max/H, and
    V_{H+1} = 0; an algorithm that caps its optimistic Q_h at the return-to-go (seed 000's Algorithm 1 and
    seed 004's: Q_h <= H − h + 1) has V_{h+1} in [0, (H − h)/H·V_max]. A statistic built from φ_{V_{h+1}} and
    V_{h+1} then has a per-step bound that scales with this fraction: the releases of late steps are cheaper.

    Args:
        horizon: H, the steps per episode (an integer >= 1).

    Returns:
        (H − 1)/H, …, 1/H, 0.

    Raises:
        ArgumentTypeError: H not a number.
        ValueError: H not an integer >= 1.
    """
    h = check_count("horizon", horizon)
    return tuple((h - step) / h for step in range(1, h + 1))


def vector_sensitivity(bound: float, relation: Relation | str, *, nonnegative: bool = False) -> float:
    """Sensitivity of a sum of vectors x(u) ∈ R^d with ‖x(u)‖ ≤ B (``bound``).

    * ``add_remove``: ‖x‖ ≤ B, attained by any x on the sphere: Δ = B.
    * ``replace_one``: ‖x − y‖ ≤ ‖x‖ + ‖y‖ ≤ 2B, attained at y = −x, ‖x‖ = B: Δ = 2B.
    * ``replace_one`` with ``nonnegative=True`` (every admissible vector is entrywise ≥ 0, so
      x·y ≥ 0 for any two): ‖x − y‖² = ‖x‖² + ‖y‖² − 2x·y ≤ 2B², attained at x = B e₁,
      y = B e₂ (d ≥ 2; for d = 1 the supremum is B and √2·B is conservative): Δ = √2·B.
      The add/remove value is B either way.

    Args:
        bound: B, the bound on each user's ‖x(u)‖ (> 0).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        nonnegative: whether every admissible vector is entrywise >= 0; False by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: B not positive and finite, an unknown relation or a non-bool ``nonnegative``,
            or a result that overflows.
    """
    b = check_positive("bound", bound)
    relation = check_relation(relation)
    nonnegative = _check_flag("nonnegative", nonnegative)
    if relation == Relation.ADD_REMOVE:
        value = b
    else:
        value = _SQRT2 * b if nonnegative else 2.0 * b
    return _finish("vector_sensitivity", value, bound=b)


def outer_product_sensitivity(
    bound: float, relation: Relation | str, *, noise: SensitivityNoise | str = "upper"
) -> float:
    """Sensitivity of a sum of outer products x(u)x(u)ᵀ with x ∈ R^d, ‖x‖ ≤ B (``bound``).

    Δ = B² under add_remove and √2·B² under replace_one, for either ``noise`` (the suprema are attained by
    diagonal differences; the derivation: docs/explanation/neighbours.md).

    Args:
        bound: B, the bound on each user's ‖x(u)‖ (> 0).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        noise: "upper" (symmetric noise on the entries i <= j) or "full" (i.i.d. noise on all d² entries).

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: B not positive and finite, an unknown relation or noise, or a result that overflows.
    """
    b = check_positive("bound", bound)
    relation = check_relation(relation)
    noise = check_member("noise", noise, SensitivityNoise)
    b2 = b * b
    value = b2 if relation == Relation.ADD_REMOVE else _SQRT2 * b2
    return _finish("outer_product_sensitivity", value, bound=b)


def stacked_outer_product_sensitivity(
    block_bounds: Sequence[float], relation: Relation | str, *, noise: SensitivityNoise | str = "upper", steps: int = 1
) -> float:
    """Sensitivity of Σ_users Σ_{h=1}^H z_h z_hᵀ where z = [x₁; …; x_k] stacks blocks with ‖x_j‖ ≤ b_j.

    With S2 = Σ b_j², S4 = Σ b_j⁴ and H = ``steps``: ``noise="upper"`` gives H·sqrt((S2² + S4)/2) under
    add_remove and H·sqrt(S2² + S4) under replace_one, ``noise="full"`` H·S2 and √2·H·S2 (the derivation:
    docs/explanation/neighbours.md).

    Args:
        block_bounds: b_j, the bound on each block's norm (> 0 each, at least one).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        noise: "upper" (symmetric noise on the entries i <= j) or "full"; "upper" by default.
        steps: H, the terms per user (an integer >= 1); 1 by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ``block_bounds`` empty or not a sequence, a bound not positive, an unknown relation or noise,
            H below 1, or a result that overflows.

    Examples:
        >>> round(stacked_outer_product_sensitivity([1.0, 0.5], "add_remove", steps=3), 12)
        3.436931771217
    """
    if isinstance(block_bounds, (str, bytes)) or not isinstance(block_bounds, Sequence) or len(block_bounds) == 0:
        raise ValueError(f"block_bounds must be a non-empty sequence of bounds > 0, got {block_bounds!r}")
    bs = [check_positive(f"block_bounds[{i}]", b) for i, b in enumerate(block_bounds)]
    relation = check_relation(relation)
    noise = check_member("noise", noise, SensitivityNoise)
    h = check_count("steps", steps)
    s2 = math.fsum(b * b for b in bs)
    s4 = math.fsum(b**4 for b in bs)
    if noise == SensitivityNoise.FULL:
        per_step = s2 if relation == Relation.ADD_REMOVE else _SQRT2 * s2
    else:
        half = (s2 * s2 + s4) / 2.0
        per_step = math.sqrt(half if relation == Relation.ADD_REMOVE else 2.0 * half)
    return _finish("stacked_outer_product_sensitivity", times_count(h, per_step), steps=h)


def symmetric_matrix_sensitivity(
    frobenius_bound: float, relation: Relation | str, *, psd: bool = False, noise: SensitivityNoise | str = "upper"
) -> float:
    """Sensitivity of a sum of symmetric matrices M(u) with ‖M(u)‖_F ≤ C (``frobenius_bound``).

    ``noise`` as in :func:`outer_product_sensitivity`; the upper-triangle norm of a symmetric
    matrix is at most its Frobenius norm, with equality for diagonal matrices.

    * ``add_remove``: ‖M‖_F ≤ C, attained (for both kinds of noise) at M = C e₁e₁ᵀ: Δ = C.
    * ``replace_one``: ‖M − M′‖_F ≤ 2C, attained at M′ = −M = −C e₁e₁ᵀ: Δ = 2C.
    * ``replace_one`` with ``psd=True`` (every term positive semidefinite): the Frobenius inner
      product of PSD matrices is tr(MM′) ≥ 0, so ‖M − M′‖_F² ≤ ‖M‖_F² + ‖M′‖_F² ≤ 2C²,
      attained at M = C e₁e₁ᵀ, M′ = C e₂e₂ᵀ (d ≥ 2): Δ = √2·C.

    Args:
        frobenius_bound: C, the bound on each user's ‖M(u)‖_F (> 0).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        psd: whether every term is positive semidefinite; False by default.
        noise: "upper" or "full" (as in :func:`outer_product_sensitivity`); "upper" by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: C not positive and finite, an unknown relation, noise or psd, or a result that overflows.
    """
    c = check_positive("frobenius_bound", frobenius_bound)
    relation = check_relation(relation)
    psd = _check_flag("psd", psd)
    noise = check_member("noise", noise, SensitivityNoise)
    if relation == Relation.ADD_REMOVE:
        value = c
    else:
        value = _SQRT2 * c if psd else 2.0 * c
    return _finish("symmetric_matrix_sensitivity", value, frobenius_bound=c)


def product_sensitivity(
    vector_bound: float, *, scalar_bound: float, relation: Relation | str, nonnegative: bool = False
) -> float:
    """Sensitivity of a sum of products x(u)·v(u) with ‖x‖ ≤ B, |v| ≤ V.

    ‖x v‖ = |v|·‖x‖ ≤ B·V. The same holds when v is itself a vector and the term is the
    rank-one matrix x vᵀ (released with i.i.d. noise on all entries): ‖x vᵀ‖_F = ‖x‖·‖v‖, so
    pass V = sup ‖v‖.

    * ``add_remove``: Δ = B·V, attained at ‖x‖ = B, |v| = V.
    * ``replace_one``: ‖xv − yw‖ ≤ 2BV, attained at (x, V) and (x, −V) (or (−x, V)): Δ = 2BV.
    * ``replace_one`` with ``nonnegative=True`` (x ≥ 0 entrywise and v ≥ 0, so every term is
      entrywise ≥ 0 and pairwise inner products are ≥ 0): Δ = √2·BV, attained at (B e₁, V)
      and (B e₂, V).

    Args:
        vector_bound: B, the bound on ‖x(u)‖ (> 0).
        scalar_bound: V, the bound on |v(u)| (or ‖v(u)‖) (> 0).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        nonnegative: whether x and v are entrywise >= 0; False by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: B or V not positive and finite, an unknown relation or a non-bool ``nonnegative``,
            or a result that overflows.
    """
    b = check_positive("vector_bound", vector_bound)
    v = check_positive("scalar_bound", scalar_bound)
    relation = check_relation(relation)
    nonnegative = _check_flag("nonnegative", nonnegative)
    bv = b * v
    if relation == Relation.ADD_REMOVE:
        value = bv
    else:
        value = _SQRT2 * bv if nonnegative else 2.0 * bv
    return _finish("product_sensitivity", value, vector_bound=b, scalar_bound=v)


def episode_sum_sensitivity(
    term_bound: float, *, steps: int, relation: Relation | str, nonnegative: bool = False
) -> float:
    """Sensitivity when a user's term is an episode sum S(u) = Σ_{h=1}^H f_h with ‖f_h‖ ≤ b.

    ``steps`` is H and ``term_bound`` is b (the norm that the aggregate's noise sees: ℓ2 of a
    vector, Frobenius or upper-triangle norm of a matrix).

    * ``add_remove``: ‖S‖ ≤ Σ‖f_h‖ ≤ H·b, attained when all f_h are the same vector of norm b:
      Δ = H·b.
    * ``replace_one``: ‖S − S′‖ ≤ 2H·b, attained at f′_h = −f_h = −w with ‖w‖ = b: Δ = 2H·b.
    * ``replace_one`` with ``nonnegative=True``: every admissible f_h lies in a cone whose
      elements have pairwise non-negative inner products (entrywise non-negative vectors; PSD
      matrices under the Frobenius inner product). Then ⟨S, S′⟩ = Σ_h Σ_k ⟨f_h, f′_k⟩ ≥ 0, so
      ‖S − S′‖² ≤ ‖S‖² + ‖S′‖² ≤ 2H²b², attained at f_h = b e₁, f′_h = b e₂: Δ = √2·H·b.

    Args:
        term_bound: b, the bound on each step's ‖f_h‖ (> 0).
        steps: H, the steps of the episode (an integer >= 1).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        nonnegative: whether the terms lie in a cone of pairwise non-negative inner products; False by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: b not positive and finite, H below 1, an unknown relation or a non-bool ``nonnegative``,
            or a result that overflows.
    """
    b = check_positive("term_bound", term_bound)
    h = check_count("steps", steps)
    relation = check_relation(relation)
    nonnegative = _check_flag("nonnegative", nonnegative)
    hb = times_count(h, b)  # any count: +inf (refused, naming it) beyond the doubles
    if relation == Relation.ADD_REMOVE:
        value = hb
    else:
        value = _SQRT2 * hb if nonnegative else 2.0 * hb
    return _finish("episode_sum_sensitivity", value, term_bound=b, steps=h)


def episode_outer_product_sensitivity(
    bound: float, *, steps: int, relation: Relation | str, noise: SensitivityNoise | str = "upper"
) -> float:
    """Sensitivity of Σ_users Σ_{h=1}^H z_h z_hᵀ with ‖z_h‖ ≤ B (``bound``), H = ``steps``.

    Each z_h z_hᵀ is PSD with ‖z_h z_hᵀ‖_F = ‖z_h‖² ≤ B², so this is
    :func:`episode_sum_sensitivity` with b = B² and the PSD cone. With ``noise="upper"`` the
    upper-triangle norm is at most the Frobenius norm and the suprema are attained by diagonal
    sums (z_h = B e₁, z′_h = B e₂), so both kinds of noise give

    * ``add_remove``: Δ = H·B² (all z_h = B e₁);
    * ``replace_one``: Δ = √2·H·B² (z_h = B e₁, z′_h = B e₂).

    Example — linear-quadratic control (seed 003, Private-OFU-RL): z = [x; u] with ‖x‖ ≤ 1 and
    ‖u‖ ≤ γ, so ‖z‖ ≤ 1 + γ, and next states ‖x′‖ ≤ 1: the Gram matrix
    Σ z zᵀ has Δ₁ = H(1+γ)² and the cross term Σ z x′ᵀ has Δ₂ = H(1+γ) under add/remove
    (:func:`episode_product_sensitivity` with V = 1); under replace-one they are √2·H(1+γ)²
    and 2H(1+γ):

    Args:
        bound: B, the bound on each ‖z_h‖ (> 0).
        steps: H, the steps of the episode (an integer >= 1).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        noise: "upper" or "full"; "upper" by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: B not positive and finite, H below 1, an unknown relation or noise, or a result that overflows.

    Examples:
        >>> gamma, H = 0.5, 4
        >>> round(episode_outer_product_sensitivity(1 + gamma, steps=H, relation="add_remove"), 12)  # H (1+γ)²
        9.0
        >>> product = episode_product_sensitivity
        >>> round(product(1 + gamma, scalar_bound=1.0, steps=H, relation="add_remove"), 12)  # H (1+γ)
        6.0
        >>> round(episode_outer_product_sensitivity(1 + gamma, steps=H, relation="replace_one") / math.sqrt(2), 12)
        9.0
        >>> round(product(1 + gamma, scalar_bound=1.0, steps=H, relation="replace_one"), 12)  # 2H(1+γ)
        12.0
    """
    b = check_positive("bound", bound)
    h = check_count("steps", steps)
    relation = check_relation(relation)
    noise = check_member("noise", noise, SensitivityNoise)
    hb2 = times_count(h, b * b)
    value = hb2 if relation == Relation.ADD_REMOVE else _SQRT2 * hb2
    return _finish("episode_outer_product_sensitivity", value, bound=b, steps=h)


def episode_product_sensitivity(
    vector_bound: float, *, scalar_bound: float, steps: int, relation: Relation | str, nonnegative: bool = False
) -> float:
    """Sensitivity of Σ_users Σ_{h=1}^H x_h v_h with ‖x_h‖ ≤ B, |v_h| ≤ V, H = ``steps``.

    :func:`episode_sum_sensitivity` with b = B·V (see :func:`product_sensitivity`; v_h may be
    a vector and the term x_h v_hᵀ, with V = sup ‖v_h‖):

    * ``add_remove``: Δ = H·B·V (all (x_h, v_h) = (B e₁, V));
    * ``replace_one``: Δ = 2H·B·V ((B e₁, V) against (B e₁, −V));
    * ``replace_one`` with ``nonnegative=True`` (x_h ≥ 0, v_h ≥ 0): Δ = √2·H·B·V
      ((B e₁, V) against (B e₂, V)).

    See :func:`episode_outer_product_sensitivity` for a worked example.

    Args:
        vector_bound: B, the bound on each ‖x_h‖ (> 0).
        scalar_bound: V, the bound on each |v_h| (or ‖v_h‖) (> 0).
        steps: H, the steps of the episode (an integer >= 1).
        relation: "add_remove" or "replace_one" (the CLI spellings with "-" too).
        nonnegative: whether x_h and v_h are entrywise >= 0; False by default.

    Returns:
        Δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: B or V not positive and finite, H below 1, an unknown relation or a non-bool ``nonnegative``,
            or a result that overflows.
    """
    b = check_positive("vector_bound", vector_bound)
    v = check_positive("scalar_bound", scalar_bound)
    h = check_count("steps", steps)
    relation = check_relation(relation)
    nonnegative = _check_flag("nonnegative", nonnegative)
    hbv = times_count(h, b * v)
    if relation == Relation.ADD_REMOVE:
        value = hbv
    else:
        value = _SQRT2 * hbv if nonnegative else 2.0 * hbv
    return _finish("episode_product_sensitivity", value, vector_bound=b, scalar_bound=v, steps=h)


# --------------------------------------------------------------------------------------------
# helpers


def upper_triangle(m: Any) -> np.ndarray:
    """The entries i ≤ j (diagonal included) of the last two axes, flattened row by row.

    ``m`` has shape (..., d, d); the result has shape (..., d(d+1)/2). This is the vector that
    a symmetric matrix released with mirrored noise actually releases.

    Args:
        m: an array of shape (..., d, d).

    Returns:
        The array of shape (..., d(d+1)/2).

    Raises:
        ValueError: ``m`` without two square trailing axes.
    """
    a = np.asarray(m)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"m must have two square trailing axes (..., d, d), got shape {a.shape}")
    i, j = _triu_indices(a.shape[-1])
    return a[..., i, j]


@functools.lru_cache(maxsize=64)
def _triu_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(d)
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def _scaled_norms(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overflow- and underflow-free norms: ``norm = ldexp(root, e)`` with ``scaled = ldexp(x, -e)``.

    The scaling by a power of two is exact, so the only rounding is in the sum of squares and
    the square root: a relative error of at most (n/2 + 1)·u for n entries.
    """
    m = np.abs(x).max(axis=axes, keepdims=True, initial=0.0)
    _, e = np.frexp(m)
    scaled = np.ldexp(x, -e)
    root = np.sqrt((scaled * scaled).sum(axis=axes, keepdims=True))
    return root, e, scaled


def clip_norm(x: Any, bound: float, *, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """Scale each vector along ``axis`` down to ℓ2 norm ≤ ``bound`` (never up), vectorised.

    With ``axis=(-2, -1)`` each matrix is clipped in Frobenius norm. Returns a new float array.
    The guarantee is on the *exact* norm of the returned floats (≤ ``bound``); a vector within ~1e-15 relative
    of ``bound`` may be shrunk by that much (how: docs/explanation/neighbours.md).

    Args:
        x: an array of real numbers.
        bound: the largest norm (> 0).
        axis: the axis (or axes) of each vector; -1 by default.

    Returns:
        A new float array of the same shape.

    Raises:
        ArgumentTypeError: ``bound`` not a real number.
        ValueError: ``bound`` not positive and finite, ``x`` not finite real numbers, an invalid axis, or too many
            entries per vector.
    """
    b = check_positive("bound", bound)
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x must be an array of real numbers, got {x!r}") from exc
    if not np.isfinite(arr).all():
        raise ValueError("x must be finite, got non-finite entries")
    try:
        axes = normalize_axis_tuple(axis, arr.ndim)
    except (TypeError, ValueError, np.exceptions.AxisError) as exc:
        raise ValueError(f"axis {axis!r} is not valid for x of shape {arr.shape}") from exc
    n = math.prod(arr.shape[a] for a in axes)
    if not 2.0 * (n + 4) * _U < 0.5:
        raise ValueError(f"x has too many entries per vector to clip reliably, got {n}")
    with np.errstate(over="ignore", under="ignore"):  # bound·2^-e may overflow (to inf: not over)
        return _clip(arr, axes, b, n)


def _clip(arr: np.ndarray, axes: tuple[int, ...], b: float, n: int) -> np.ndarray:
    margin = 1.0 - 2.0 * (n + 4) * _U
    root, e, scaled = _scaled_norms(arr, axes)
    # Compare in the scaled domain, where the computed norm is accurate whatever the magnitude:
    # bound·2^-e is exact unless it is subnormal, i.e. far below root (clearly over).
    over = root > np.ldexp(b, -e) * margin
    if not over.any():
        return arr
    target = b * margin * (1.0 - (n + 4) * _U)
    safe_root = np.where(over, root, 1.0)  # a clipped vector has root >= 1/2
    # The factor target/‖x‖ < 1, one rounding per entry; only when it underflows (a bound below
    # ~1e-308 of the norm) do we rescale the unit vector instead.
    factor = np.ldexp(target, -e) / safe_root
    direct = over & (factor >= np.finfo(float).tiny)
    out = np.where(direct, arr * np.where(direct, factor, 0.0), (scaled / safe_root) * target)
    out = np.where(over & (np.abs(out) <= np.abs(arr)), out, arr)  # clipped entries never grow
    shrink = 8.0 * (n + 4) * _U
    for _ in range(64):  # rounding (e.g. subnormal outputs) may leave a norm above t
        r2, e2, _ = _scaled_norms(out, axes)
        still = r2 > np.ldexp(b, -e2) * margin
        if not still.any():
            return out
        out = np.where(still, out * max(0.0, 1.0 - shrink), out)
        shrink *= 2.0
    raise ArithmeticError("clip_norm failed to bring the norm below the bound")  # pragma: no cover
