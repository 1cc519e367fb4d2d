"""The release declaration of Private-OFU-RL (seed 003): the paper's σ and the two binary-tree counters it declares
(see :mod:`dpkit.algorithms.ofu_rl`)."""

from __future__ import annotations

import functools
import math
from typing import Any

from dpkit.accountant.declarations import (
    DeclaredRelease,
    Flag,
    JointRelease,
    PrivacyDeclaration,
    cached_declaration,
    tree_depth_flag,
)
from dpkit.accountant.sensitivity import episode_product_sensitivity, stacked_outer_product_sensitivity
from dpkit.accountant.structured_sensitivity import gram_cross_joint_mu
from dpkit.accountant.tree import (
    Schedule,
    max_psums_per_item,
    paper_depth,
)
from dpkit.accountant.validation import (
    check_count,
    check_member,
    check_positive,
    check_probability,
)
from dpkit.accountant.zcdp import zcdp_epsilon

__all__ = [
    "ALGORITHM",
    "PAPER",
    "UNACCOUNTED_CODE",
    "paper_sigma",
    "declare_privacy",
]

ALGORITHM = "private-ofu-rl"
PAPER = "Chowdhury, Zhou, Shroff — Adaptive Control of Differentially Private LQ Systems (seed 003)"


#: The flag of a quantity computed from the private data and used without accounting (here: β_k's log-det).
UNACCOUNTED_CODE = "unaccounted-data-dependent-quantity"


def paper_sigma(sensitivity: float, episodes: int, epsilon: float, delta: float) -> float:
    """σ = sqrt(8 m Δ² ln(2/δ))/ε with the paper's m = ⌈log2 K⌉ (Theorem 2's choice).

    Args:
        sensitivity: The paper's Δ of the counter.
        episodes: K.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).

    Returns:
        σ.

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> round(paper_sigma(1.0, episodes=8, epsilon=1.0, delta=1e-5), 4)
        17.1157
    """
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("episodes", episodes)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    return sensitivity * math.sqrt(8.0 * paper_depth(k) * math.log(2.0 / delta)) / epsilon


@cached_declaration
def declare_privacy(
    episodes: int,
    horizon: int,
    epsilon: float,
    delta: float,
    gamma: float,
    *,
    schedule: Schedule | str = "before-episode",
) -> PrivacyDeclaration:
    """What Private-OFU-RL's two counters release about one user, at the paper's σ.

    The implementation clips x to the unit ball and u to γ, which is what the sensitivities (from
    ‖z‖ <= sqrt(1 + γ²)) assume.

    Args:
        episodes: K (at least 2).
        horizon: H.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        gamma: The control bound γ (‖u‖ <= γ).
        schedule: When the counters release (``"before-episode"``).

    Returns:
        The declaration: B1 and B2, with their flags and notes.

    Raises:
        ValueError: If an argument is out of range, or no p-sum is ever released (K too small).
    """
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    gamma = check_positive("gamma", gamma)
    schedule = check_member("schedule", schedule, Schedule)
    m = max_psums_per_item(k, schedule=schedule)
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
        sensitivity_add_remove=episode_product_sensitivity(z, scalar_bound=1.0, steps=h, relation="add_remove"),
        sensitivity_replace_one=episode_product_sensitivity(z, scalar_bound=1.0, steps=h, relation="replace_one"),
        paper_sensitivity=d2,
        sigma_paper=paper_sigma(d2, k, epsilon, delta),
        paper_count=m_paper,
    )
    # The paper's own analysis of one counter: ρ = mΔ²/(2σ²) = ε²/(16 ln(2/δ)), Bun–Steinke at δ/2.
    rho = epsilon * epsilon / (16.0 * math.log(2.0 / delta))  # +inf for a huge ε (``**`` would raise)
    per_counter = zcdp_epsilon(rho, delta / 2.0, conversion="bun-steinke") if 0 < rho < math.inf else rho
    flags = (
        []
        if rho == 0
        else [
            Flag(
                "paper-claim-approximate",
                f"σ_i² ≈ 8mΔ_i² ln(2/δ)/ε² gives each counter ε = {per_counter:.6g} at δ/2 by the paper's own "
                f"Bun–Steinke conversion, above ε/2 = {epsilon / 2:.6g}: the two counters compose to "
                f"{2 * per_counter:.6g} > ε.",
                "warning",
            )
        ]
    )
    flags.append(
        Flag(
            UNACCOUNTED_CODE,
            "the paper's confidence radius β_k(α) = C_w sqrt(2 ln(2/α) + n ln det(I + λ_min⁻¹ Z_kᵀZ_k)) "
            "+ sqrt(λ_max) + ν (Lemma 1) is computed from the raw Gram Z_kᵀZ_k of the earlier users' states and "
            "controls, which no counter releases, and Algorithm 1 builds the confidence set C_k(α) with it "
            "(from (8)) before choosing the policy; the proof of Thm 2 accounts only for the counters' T_1,k and "
            "T_2,k (the policies as their post-processing), so the (ε, δ)-JDP claim does not cover the algorithm "
            "as written. Not a flaw of dpkit's PrivateOfuRl: it uses ln det V_k − (n+d) ln λ_min, "
            "V_k = T_1,k + ηI, a post-processing of the released T_1,k (an upper bound on the paper's log-det on "
            "the event ‖N_k‖ <= Λ); the data-independent bound (n+d) ln(1 + HK(1+γ)²/((n+d)λ_min)) of the "
            "paper's own regret proof would also do.",
            "error",
        )
    )
    if m_paper != m:
        flags.append(tree_depth_flag(m_paper, exact_depth=m, schedule=schedule, counters="both counters"))
    notes = [
        "JDP through the billboard lemma: the counters' releases are the shared statistics; each user's "
        "controls are a function of them and of her own states.",
        "z = [x; u] with ‖x‖ <= 1 and ‖u‖ <= γ has ‖z‖ <= sqrt(1 + γ²), not only 1 + γ (the paper's bound).",
        "B2's term z x′ᵀ is a rank-one matrix with ‖z x′ᵀ‖_F = ‖z‖‖x′‖ <= sqrt(1 + γ²) per step.",
        "B1 and B2 are composed jointly: their replace-one Δ's are each attained alone (B1 by two orthogonal "
        "trajectories, B2 by one trajectory against itself with alternating signs, which cancels in B1), never "
        "together; the ledger composes the bound on the whitened pair sqrt(‖ΔB1‖²/σ1² + ‖ΔB2‖²/σ2²) of "
        "dpkit.accountant.structured_sensitivity.gram_cross_joint_sensitivity.",
    ]
    params: dict[str, Any] = {
        "episodes": k,
        "horizon": h,
        "gamma": gamma,
        "schedule": schedule,
        "tree_depth_paper": m_paper,
        "tree_depth_exact": m,
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
        joint=(
            JointRelease(
                ("B1", "B2"),
                functools.partial(gram_cross_joint_mu, steps=h, state_bound=1.0, control_bound=gamma),
                "one trajectory cannot attain both counters' Δ: B1's worst pair is orthogonal, B2's the same "
                "trajectory with alternating signs",
            ),
        ),
    )
