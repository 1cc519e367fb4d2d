"""The release declaration of Private-LinOpt-VI and Private-LinOpt-PO (seed 004): the paper's σ and the four
counters per step it declares (see :mod:`dpkit.algorithms.linopt`)."""

from __future__ import annotations

import math
from typing import Any

from dpkit.accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration, cached_declaration, tree_depth_flag
from dpkit.accountant.sensitivity import outer_product_sensitivity, product_sensitivity
from dpkit.accountant.structured_sensitivity import block_norm_bound, block_outer_product_sensitivity
from dpkit.accountant.tree import (
    Schedule,
    max_psums_per_item,
    paper_depth,
)
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_member,
    check_positive,
    check_probability,
)
from dpkit.accountant.zcdp import zcdp_epsilon

__all__ = [
    "ALGORITHMS",
    "LINOPT_READINGS",
    "paper_sigma",
    "declare_privacy",
]

ALGORITHMS: tuple[str, ...] = ("private-linopt-vi", "private-linopt-po")
#: The paper's formulas. There was a ``proof-6.4`` reading with Δ_{p,1} = d1·H: an artefact of the seed's text
#: extraction (see docs/explanation/seed-algorithms.md), not of the paper, and removed.
LINOPT_READINGS: tuple[str, ...] = ("theorem-6.5",)


PAPER = "Zhou — Differentially Private RL with Linear Function Approximation (seed 004)"


def paper_sigma(sensitivity: float, episodes: int, horizon: int, epsilon: float, delta: float) -> float:
    """σ = (HΔ/ε) sqrt(32 m ln(4H/δ)) with the paper's m = ⌈log2 K⌉ (Thm 6.5).

    Args:
        sensitivity: The paper's Δ of the counter.
        episodes: K.
        horizon: H.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).

    Returns:
        σ.

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> round(paper_sigma(1.0, episodes=8, horizon=2, epsilon=1.0, delta=1e-5), 4)
        72.2459
    """
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    m = paper_depth(k)
    return h * sensitivity / epsilon * math.sqrt(32.0 * m * math.log(4.0 * h / delta))


@cached_declaration
def declare_privacy(
    algorithm: str,
    episodes: int,
    horizon: int,
    epsilon: float,
    delta: float,
    d1: int,
    d2: int | None = None,
    *,
    reading: str = "theorem-6.5",
    schedule: Schedule | str = "before-episode",
    states: int | None = None,
) -> PrivacyDeclaration:
    """What the 4H counters of Private-LinOpt-VI/-PO release about one user, at the paper's σ.

    ``d1``/``d2`` are the transition and reward feature dimensions (``d2`` defaults to ``d1``).
    The implementation clips φ to sqrt(d1)·H, V to [0, H], ϕ to 1 and r to [0, 1]. With ``states`` S the features
    are one-hot (the tabular linear-mixture view :class:`LinOpt` uses: φ_V(s, a) is V in the block of (s, a) and
    ϕ(s, a) = e_(s,a)), whose exact sensitivities are smaller: ‖φ‖ <= sqrt(S)·(H − h), the Gram update's upper
    triangle b_V²·sqrt(S(S + 1)) under replace-one, every product entrywise >= 0
    (:mod:`dpkit.accountant.structured_sensitivity`); without it, the norm-ball bounds of any features.

    Args:
        algorithm: ``"private-linopt-vi"`` or ``"private-linopt-po"``.
        episodes: K (at least 2).
        horizon: H.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        d1: The transition feature dimension.
        d2: The reward feature dimension (default ``d1``).
        reading: The paper's formulas (:data:`LINOPT_READINGS`).
        schedule: When the counters release (``"before-episode"``).
        states: S, for one-hot features.

    Returns:
        The declaration: the four counters per step, with their flags and notes.

    Raises:
        ValueError: If an argument is out of range, or no p-sum is ever released (K too small).
    """
    algorithm = check_choice("algorithm", algorithm, ALGORITHMS)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    d1 = check_count("d1", d1)
    d2 = d1 if d2 is None else check_count("d2", d2)
    reading = check_choice("reading", reading, LINOPT_READINGS)
    schedule = check_member("schedule", schedule, Schedule)
    m = max_psums_per_item(k, schedule=schedule)
    if m == 0:
        raise ValueError(f"episodes must be >= 2 with the {schedule} schedule: with K = {k} no p-sum is ever released")
    m_paper = paper_depth(k)
    paper_p1 = d1 * h * h  # ‖φφᵀ‖_F = ‖φ‖² <= d1·H² (both proofs of seed 004)
    # Per step: Q_h is capped at H − h + 1 (Algorithms 1 and 2), so V_{h+1} ∈ [0, H − h] and ‖φ_{V_{h+1}}‖ <=
    # sqrt(d1)·(H − h): the transition counters carry step 1's bounds and the later steps' factors
    # ((H − h)/(H − 1))² (step H's statistics are 0). The reward counters do not depend on V: one bound.
    # With H = 1 every transition item is 0; the whole-range bounds then stay (sound).
    first = (h - 1) if h > 1 else h
    b_phi, b_v = math.sqrt(d1) * first, float(first)
    p_factors = tuple(((h - step) / first) ** 2 for step in range(1, h + 1)) if h > 1 else ()
    one_hot = states is not None
    gram: tuple[float, float]
    if one_hot:
        s_ = check_count("states", states)
        gram = (
            block_outer_product_sensitivity(b_v, s_, "add_remove", norm_bound=b_phi),
            block_outer_product_sensitivity(b_v, s_, "replace_one", norm_bound=b_phi),
        )
        b_phi = block_norm_bound(b_v, s_, b_phi)
    else:
        gram = (outer_product_sensitivity(b_phi, "add_remove"), outer_product_sensitivity(b_phi, "replace_one"))
    specs: list[tuple[str, str, str, float, float, float]] = [
        ("B_{h,p,1}", "Gram of transition features φφᵀ", "symmetric", paper_p1, gram[0], gram[1]),
        (
            "B_{h,p,2}",
            "φ·V_{h+1}(s_{h+1})",
            "iid",
            math.sqrt(d1) * h * h,
            product_sensitivity(b_phi, scalar_bound=b_v, relation="add_remove"),
            product_sensitivity(b_phi, scalar_bound=b_v, relation="replace_one", nonnegative=one_hot),
        ),
        (
            "B_{h,r,1}",
            "Gram of reward features ϕϕᵀ",
            "symmetric",
            1.0,
            outer_product_sensitivity(1.0, "add_remove"),
            outer_product_sensitivity(1.0, "replace_one"),
        ),
        (
            "B_{h,r,2}",
            "ϕ·r",
            "iid",
            1.0,
            product_sensitivity(1.0, scalar_bound=1.0, relation="add_remove"),
            product_sensitivity(1.0, scalar_bound=1.0, relation="replace_one", nonnegative=one_hot),
        ),
    ]
    releases = tuple(
        DeclaredRelease(
            name=name,
            statistic=f"{stat}; {h} counters (one per step), {m} noisy p-sums per user each",
            count=h * m,
            sensitivity_add_remove=ar,
            sensitivity_replace_one=ro,
            paper_sensitivity=paper,
            sigma_paper=paper_sigma(paper, k, h, epsilon, delta),
            noise=noise,
            paper_count=h * m_paper,
            step_factors=p_factors if name.startswith("B_{h,p") else (),
        )
        for name, stat, noise, paper, ar, ro in specs
    )
    # The paper's own analysis of each counter: ρ = mΔ²/(2σ²) = ε²/(64 H² ln(4H/δ)), Bun–Steinke at δ/(4H).
    rho = epsilon**2 / (64.0 * h * h * math.log(4.0 * h / delta))
    per_counter = zcdp_epsilon(rho, delta / (4 * h), conversion="bun-steinke") if rho > 0 else 0.0
    flags = (
        []
        if rho == 0
        else [
            Flag(
                "paper-claim-approximate",
                f"with its own zCDP analysis the paper's σ gives each counter ε = {per_counter:.6g} at δ/(4H), above "
                f"ε/(4H) = {epsilon / (4 * h):.6g}: basic composition over the 4H counters then gives "
                f"{4 * h * per_counter:.6g} > ε (the theorem claims O(ε, δ)-JDP).",
                "warning",
            )
        ]
    )
    if m_paper != m:
        flags.append(tree_depth_flag(m_paper, exact_depth=m, schedule=schedule, counters="each of the 4H counters"))
    notes = [
        "JDP through the billboard lemma: the counters' releases are the shared statistics; each user's "
        "actions are a function of them and of her own states.",
        f"m = ⌈log2 K⌉ = {m_paper} equals the exact number of released p-sums per user for the before-episode "
        "schedule; with a release after every episode it is one more when K is a power of 2.",
        f"Δ_(p,1) = d1·H² = {d1 * h * h} and Δ_(p,2) = sqrt(d1)·H² = {math.sqrt(d1) * h * h:.6g} in both proofs "
        "(Thms 6.4 and 6.5): ‖φ‖ <= sqrt(d1)·H, so ‖φφᵀ‖_F <= d1·H². The seed's text of the proof of Thm 6.4 shows "
        "'∆p,1 = d1 H ≤ dH' only because its superscripts were set on lines of their own.",
        *(
            [
                f"One-hot features (S = {states}): φ_V(s, a) is V (S entries in [0, H − h]) in the block of (s, a), "
                "so ‖φ‖ <= "
                "sqrt(S)·(H − h) (not sqrt(d1)·(H − h)), the Gram update's upper triangle changes by at most "
                "(H − h)²·sqrt(S(S + 1)) under replace-one, and φ·V and ϕ·r are entrywise >= 0 (replace-one √2·, not "
                "2·, the add/remove value)."
            ]
            if one_hot
            else []
        ),
        "Per-step sensitivities: Q_h <= H − h + 1 makes V_{h+1} <= H − h, so step h's transition counters have "
        "(H − h)²/(H − 1)² of step 1's sensitivity (step H's items are 0); the implementation clips to these "
        "per-step bounds. The reward counters have one bound for every step.",
        "Seed 004 writes m = ⌈log K⌉ without a base; with the natural log it would under-count "
        f"(⌈ln K⌉ = {math.ceil(math.log(k)) if k > 1 else 0} for K = {k}).",
    ]
    params: dict[str, Any] = {
        "episodes": k,
        "horizon": h,
        "d1": d1,
        "d2": d2,
        "reading": reading,
        "schedule": schedule,
        "states": states,
        "tree_depth_paper": m_paper,
        "tree_depth_exact": m,
    }
    return PrivacyDeclaration(
        algorithm=algorithm,
        privacy_model="JDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=releases,
        parameters=params,
        flags=tuple(flags),
        notes=tuple(notes),
    )
