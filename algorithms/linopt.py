"""Private-LinOpt-VI and Private-LinOpt-PO (Zhou: *Differentially Private RL with Linear Function Approximation*; seed 004).

Release declaration. Both algorithms share one privatizer: for every step h four binary-tree
counters (Chan–Shi–Song, :mod:`accountant.tree`), released at the start of each episode k over
episodes 1..k−1 (schedule ``before-episode``):

* B_{h,p,1} on φφᵀ (symmetric noise), ‖φ‖ <= sqrt(d1)·H, paper Δ_{p,1} = d1·H²;
* B_{h,p,2} on φ·V_{h+1}(s_{h+1}), V ∈ [0, H], paper Δ_{p,2} = sqrt(d1)·H²;
* B_{h,r,1} on ϕϕᵀ (symmetric noise), ‖ϕ‖ <= 1, paper Δ_{r,1} = 1;
* B_{h,r,2} on ϕ·r, r ∈ [0, 1], paper Δ_{r,2} = 1.

Each counter gets σ = (HΔ/ε) sqrt(32 m ln(4H/δ)), m = ⌈log K⌉: zCDP with Bun–Steinke conversion
to (ε/4, δ/4) per counter, then ε → ε/H, δ → δ/H for the H steps. The proof of Thm 6.4 defines Δ
as the change "if the state-action pair of a single episode is changed" (replace-one) but bounds
it by one user's term (the add/remove value); it also writes Δ_{p,1} = d1·H where Thm 6.5 uses d1·H²
(reading ``proof-6.4`` vs ``theorem-6.5``). The algorithms themselves will live in this module.
"""

from __future__ import annotations

import math
from typing import Any

from accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration, tree_depth_flag
from accountant.sensitivity import outer_product_sensitivity, product_sensitivity
from accountant.tree import SCHEDULES, max_psums_per_item, paper_depth
from accountant.validation import check_choice, check_count, check_positive, check_probability
from accountant.zcdp import zcdp_epsilon

__all__ = ["ALGORITHMS", "READINGS", "paper_sigma", "declare_privacy"]

ALGORITHMS: tuple[str, ...] = ("private-linopt-vi", "private-linopt-po")
READINGS: tuple[str, ...] = ("theorem-6.5", "proof-6.4")
PAPER = "Zhou — Differentially Private RL with Linear Function Approximation (seed 004)"


def paper_sigma(sensitivity: float, episodes: int, horizon: int, epsilon: float, delta: float) -> float:
    """σ = (HΔ/ε) sqrt(32 m ln(4H/δ)) with the paper's m = ⌈log2 K⌉ (Thm 6.5)."""
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    m = paper_depth(k)
    return h * sensitivity / epsilon * math.sqrt(32.0 * m * math.log(4.0 * h / delta))


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
    schedule: str = "before-episode",
) -> PrivacyDeclaration:
    """What the 4H counters of Private-LinOpt-VI/-PO release about one user, at the paper's σ.

    ``d1``/``d2`` are the transition and reward feature dimensions (``d2`` defaults to ``d1``).
    The implementation clips φ to sqrt(d1)·H, V to [0, H], ϕ to 1 and r to [0, 1].
    """
    algorithm = check_choice("algorithm", algorithm, ALGORITHMS)
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    d1 = check_count("d1", d1)
    d2 = d1 if d2 is None else check_count("d2", d2)
    reading = check_choice("reading", reading, READINGS)
    schedule = check_choice("schedule", schedule, SCHEDULES)
    m = max_psums_per_item(k, schedule)
    if m == 0:
        raise ValueError(f"episodes must be >= 2 with the {schedule} schedule: with K = {k} no p-sum is ever released")
    m_paper = paper_depth(k)
    b_phi = math.sqrt(d1) * h
    paper_p1 = d1 * h * h if reading == "theorem-6.5" else d1 * h
    specs = [
        ("B_{h,p,1}", "Gram of transition features φφᵀ", "symmetric", paper_p1,
         outer_product_sensitivity(b_phi, "add_remove"), outer_product_sensitivity(b_phi, "replace_one")),
        ("B_{h,p,2}", "φ·V_{h+1}(s_{h+1})", "iid", math.sqrt(d1) * h * h,
         product_sensitivity(b_phi, h, "add_remove"), product_sensitivity(b_phi, h, "replace_one")),
        ("B_{h,r,1}", "Gram of reward features ϕϕᵀ", "symmetric", 1.0,
         outer_product_sensitivity(1.0, "add_remove"), outer_product_sensitivity(1.0, "replace_one")),
        ("B_{h,r,2}", "ϕ·r", "iid", 1.0,
         product_sensitivity(1.0, 1.0, "add_remove"), product_sensitivity(1.0, 1.0, "replace_one")),
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
        )
        for name, stat, noise, paper, ar, ro in specs
    )
    # The paper's own analysis of each counter: ρ = mΔ²/(2σ²) = ε²/(64 H² ln(4H/δ)), Bun–Steinke at δ/(4H).
    rho = epsilon**2 / (64.0 * h * h * math.log(4.0 * h / delta))
    per_counter = zcdp_epsilon(rho, delta / (4 * h), "bun-steinke") if rho > 0 else 0.0
    flags = [] if rho == 0 else [
        Flag(
            "paper-claim-approximate",
            f"with its own zCDP analysis the paper's σ gives each counter ε = {per_counter:.6g} at δ/(4H), above "
            f"ε/(4H) = {epsilon / (4 * h):.6g}: basic composition over the 4H counters then gives "
            f"{4 * h * per_counter:.6g} > ε (the theorem claims O(ε, δ)-JDP).",
            "warning",
        )
    ]
    if reading == "proof-6.4":
        flags.append(
            Flag(
                "paper-sensitivity-inconsistent",
                f"the proof of Thm 6.4 writes Δ_(p,1) = d1·H = {d1 * h}, but ‖φφᵀ‖_F <= d1·H² = {d1 * h * h} "
                "(Thm 6.5's value).",
                "error",
                "B_{h,p,1}",
            )
        )
    if m_paper != m:
        flags.append(tree_depth_flag(m_paper, m, schedule, "each of the 4H counters"))
    notes = [
        "JDP through the billboard lemma: the counters' releases are the shared statistics; each user's "
        "actions are a function of them and of her own states.",
        f"m = ⌈log2 K⌉ = {m_paper} equals the exact number of released p-sums per user for the before-episode "
        "schedule; with a release after every episode it is one more when K is a power of 2.",
        "Seed 004 writes m = ⌈log K⌉ without a base; with the natural log it would under-count "
        f"(⌈ln K⌉ = {math.ceil(math.log(k)) if k > 1 else 0} for K = {k}).",
    ]
    params: dict[str, Any] = {
        "episodes": k, "horizon": h, "d1": d1, "d2": d2, "reading": reading, "schedule": schedule,
        "tree_depth_paper": m_paper, "tree_depth_exact": m,
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
