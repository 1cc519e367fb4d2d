"""Private-OFU-RL (Chowdhury, Zhou, Shroff: *Adaptive Control of Differentially Private LQ Systems*; seed 003).

Release declaration. Two binary-tree counters (:mod:`accountant.tree`), released at the start of
each episode over episodes 1..k−1 (schedule ``before-episode``): B1 on Σ_h z_h z_hᵀ (symmetric
noise) and B2 on Σ_h z_h x_{h+1}ᵀ, with z = [x; u], ‖x‖ <= 1 and ‖u‖ <= γ under Assumption 1
(C_A + γC_B + C_w <= 1). The paper bounds ‖z‖ <= 1 + γ (triangle inequality) and takes
Δ1 = H(1+γ)², Δ2 = H(1+γ); but z stacks x and u, so ‖z‖² = ‖x‖² + ‖u‖² <= 1 + γ², and the exact
add/remove sensitivity of B2 is H·sqrt(1+γ²); B1 is released with symmetric noise, so its
sensitivity is taken on the upper triangle: H·sqrt(1+γ²+γ⁴)
(:func:`~accountant.sensitivity.stacked_outer_product_sensitivity`). Its Definition 1 compares
user sequences "differing on a single user" (replace-one): √2·H·sqrt(1+γ²+γ⁴) and 2H·sqrt(1+γ²) —
so the paper's Δ1 is loose under both relations while its Δ2 is too small under replace-one.
Each counter is given
(ε/2, δ/2) through zCDP with σ_i² ≈ 8 m Δ_i² ln(2/δ)/ε², m = ⌈log2 K⌉. The algorithm itself
(issue "LQ control and tabular RLSVI") will live in this module.
"""

from __future__ import annotations

import math
from typing import Any

from accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration, tree_depth_flag
from accountant.sensitivity import episode_product_sensitivity, stacked_outer_product_sensitivity
from accountant.tree import SCHEDULES, max_psums_per_item, paper_depth
from accountant.validation import check_choice, check_count, check_positive, check_probability
from accountant.zcdp import zcdp_epsilon

__all__ = ["ALGORITHM", "paper_sigma", "declare_privacy"]

ALGORITHM = "private-ofu-rl"
PAPER = "Chowdhury, Zhou, Shroff — Adaptive Control of Differentially Private LQ Systems (seed 003)"


def paper_sigma(sensitivity: float, episodes: int, epsilon: float, delta: float) -> float:
    """σ = sqrt(8 m Δ² ln(2/δ))/ε with the paper's m = ⌈log2 K⌉ (Theorem 2's choice)."""
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("episodes", episodes)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    return sensitivity * math.sqrt(8.0 * paper_depth(k) * math.log(2.0 / delta)) / epsilon


def declare_privacy(
    episodes: int, horizon: int, epsilon: float, delta: float, gamma: float, *, schedule: str = "before-episode"
) -> PrivacyDeclaration:
    """What Private-OFU-RL's two counters release about one user, at the paper's σ.

    ``gamma`` is the control bound γ (‖u‖ <= γ); the implementation clips x to the unit ball and u to γ,
    which is what the sensitivities (from ‖z‖ <= sqrt(1 + γ²)) assume.
    """
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    gamma = check_positive("gamma", gamma)
    schedule = check_choice("schedule", schedule, SCHEDULES)
    m = max_psums_per_item(k, schedule)
    if m == 0:
        raise ValueError(f"episodes must be >= 2 with the {schedule} schedule: with K = {k} no p-sum is ever released")
    m_paper = paper_depth(k)
    z = math.sqrt(1.0 + gamma * gamma)  # ‖[x; u]‖ with ‖x‖ <= 1, ‖u‖ <= γ
    d1, d2 = h * (1.0 + gamma) ** 2, h * (1.0 + gamma)  # the paper's, from ‖z‖ <= 1 + γ
    b1 = DeclaredRelease(
        name="B1",
        statistic=f"Σ_h z zᵀ (Gram of state-controls); {m} noisy p-sums per user",
        count=m,
        sensitivity_add_remove=stacked_outer_product_sensitivity([1.0, gamma], "add_remove", steps=h),
        sensitivity_replace_one=stacked_outer_product_sensitivity([1.0, gamma], "replace_one", steps=h),
        paper_sensitivity=d1,
        sigma_paper=paper_sigma(d1, k, epsilon, delta),
        noise="symmetric",
        paper_count=m_paper,
    )
    b2 = DeclaredRelease(
        name="B2",
        statistic=f"Σ_h z x_(h+1)ᵀ (state-control × next state); {m} noisy p-sums per user",
        count=m,
        sensitivity_add_remove=episode_product_sensitivity(z, 1.0, h, "add_remove"),
        sensitivity_replace_one=episode_product_sensitivity(z, 1.0, h, "replace_one"),
        paper_sensitivity=d2,
        sigma_paper=paper_sigma(d2, k, epsilon, delta),
        paper_count=m_paper,
    )
    # The paper's own analysis of one counter: ρ = mΔ²/(2σ²) = ε²/(16 ln(2/δ)), Bun–Steinke at δ/2.
    rho = epsilon**2 / (16.0 * math.log(2.0 / delta))
    per_counter = zcdp_epsilon(rho, delta / 2.0, "bun-steinke") if rho > 0 else 0.0
    flags = [] if rho == 0 else [
        Flag(
            "paper-claim-approximate",
            f"σ_i² ≈ 8mΔ_i² ln(2/δ)/ε² gives each counter ε = {per_counter:.6g} at δ/2 by the paper's own "
            f"Bun–Steinke conversion, above ε/2 = {epsilon / 2:.6g}: the two counters compose to "
            f"{2 * per_counter:.6g} > ε.",
            "warning",
        )
    ]
    if m_paper != m:
        flags.append(tree_depth_flag(m_paper, m, schedule, "both counters"))
    notes = [
        "JDP through the billboard lemma: the counters' releases are the shared statistics; each user's "
        "controls are a function of them and of her own states.",
        "z = [x; u] with ‖x‖ <= 1 and ‖u‖ <= γ has ‖z‖ <= sqrt(1 + γ²), not only 1 + γ (the paper's bound).",
        "B2's term z x′ᵀ is a rank-one matrix with ‖z x′ᵀ‖_F = ‖z‖‖x′‖ <= sqrt(1 + γ²) per step.",
    ]
    params: dict[str, Any] = {
        "episodes": k, "horizon": h, "gamma": gamma, "schedule": schedule,
        "tree_depth_paper": m_paper, "tree_depth_exact": m,
    }
    return PrivacyDeclaration(
        algorithm=ALGORITHM,
        privacy_model="JDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(b1, b2),
        parameters=params,
        flags=tuple(flags),
        notes=tuple(notes),
    )
