"""Private-LinOpt-VI and Private-LinOpt-PO (Zhou: *Differentially Private RL with Linear Function Approximation*;
seed 004).

Release declaration. Both algorithms share one privatizer: for every step h four binary-tree
counters (Chan–Shi–Song, :mod:`dpkit.accountant.tree`), released at the start of each episode k over
episodes 1..k−1 (schedule ``before-episode``):

* B_{h,p,1} on φφᵀ (symmetric noise), ‖φ‖ <= sqrt(d1)·H, paper Δ_{p,1} = d1·H²;
* B_{h,p,2} on φ·V_{h+1}(s_{h+1}), V ∈ [0, H], paper Δ_{p,2} = sqrt(d1)·H²;
* B_{h,r,1} on ϕϕᵀ (symmetric noise), ‖ϕ‖ <= 1, paper Δ_{r,1} = 1;
* B_{h,r,2} on ϕ·r, r ∈ [0, 1], paper Δ_{r,2} = 1.

Each counter gets σ = (HΔ/ε) sqrt(32 m ln(4H/δ)), m = ⌈log K⌉: zCDP with Bun–Steinke conversion
to (ε/4, δ/4) per counter, then ε → ε/H, δ → δ/H for the H steps. The proof of Thm 6.4 defines Δ
as the change "if the state-action pair of a single episode is changed" (replace-one) but bounds
it by one user's term (the add/remove value). Both proofs state Δ_{p,1} = d1·H² and Δ_{p,2} = sqrt(d1)·H²:
the seed's text of the proof of Thm 6.4 reads "∆p,1 = d1 H ≤ dH" only because its extraction floated the
superscripts ("2", "2") onto lines of their own, as it floated the "√ 2 √ 2" of "∆p,2 = d1 H ≤ dH"
(reading ``theorem-6.5``, the only one; the proof of Thm 6.5 keeps them inline: "∆p,1 = d1 H 2").

The algorithms. :class:`LinOpt` is LinOpt-VI-Reg / LinOpt-PO-Reg (Algorithms 1 and 2) with the
fixed regulariser Z = λI, z = 0 (UCRL-VTR, resp. OPPO with bandit feedback); :class:`PrivateLinOpt`
is Private-LinOpt-VI / -PO (Definitions 6.2, 6.3): the same algorithm with the PRIVATIZER. Both
keep the four statistics of every step h in :class:`Privatizer` — binary-tree counters
(:class:`~dpkit.accountant.tree.BinaryCounter`, one per statistic with the H steps as a batch axis, i.e.
H independent counters), with σ = 0 for :class:`LinOpt`, so that a private agent at σ = 0 *is*
the non-private one (same sums in the same order: the same actions, bit for bit).

Episode k (schedule ``before-episode``): release the noisy prefixes over episodes 1..k−1,
Λ_{h,p} = B_{h,p,1} + γ_p I, u_{h,p} = B_{h,p,2}, Λ_{h,r} = B_{h,r,1} + γ_r I, u_{h,r} = B_{h,r,2},
θ̂ = Λ⁻¹u; for h = H..1 (optimistic Bellman recursion)

    Q_h(s, a) = clip( ϕ(s,a)ᵀθ̂_{h,r} + φ_{V_{h+1}}(s,a)ᵀθ̂_{h,p}
                      + β_p ‖φ_{V_{h+1}}(s,a)‖_{Λ_{h,p}⁻¹} + β_r ‖ϕ(s,a)‖_{Λ_{h,r}⁻¹},  0,  H − h + 1 )

(h 1-based as in the paper), then VI: V_h = max_a Q_h, π_h greedy (ties to the lowest action);
PO: V_h = ⟨π_h(·|s), Q_h(s, ·)⟩ and, after the episode, π_h^{k+1}(·|s) ∝ π_h^k(·|s) exp(η Q_h(s, ·)),
π¹ uniform. The trajectory then adds φ_h φ_hᵀ, φ_h V_{h+1}(s_{h+1}), ϕ_h ϕ_hᵀ and ϕ_h r_h to the
counters, φ_h = φ_{V_{h+1}}(s_h, a_h) with the V of *this* episode (value-targeted regression).

The shift γ = λ + 2Σ: Σ is the paper's bound on the operator norm of a prefix's Gram noise,
Σ = σ sqrt(m)(4 sqrt(d) + sqrt(8 ln(8KH/α))) (Thm 6.5; :func:`~dpkit.accountant.tree.symmetric_noise_norm_bound`
at failure probability α/(4KH), m = the most p-sums in a released prefix), so Z = N + 2Σ I has
λ_min = Σ + λ, λ_max = 3Σ + λ (the private agents' default is the paper's λ = 0; λ > 0 keeps Λ
invertible at σ = 0 and is the non-private ridge). The radii of Lemma 3.1 with these constants,

    β_p = (H/2) sqrt(2 ln(H/α) + d1 ln(1 + KH²/λ_min,p)) + sqrt(d1 λ_max,p) + ν_p,
    β_r = (1/2) sqrt(2 ln(H/α) + d2 ln(1 + K/(d2 λ_min,r))) + sqrt(d2 λ_max,r) + ν_r,
    ν = σ₂ sqrt(m)(sqrt(d) + sqrt(2 ln(4KH/α))) / sqrt(λ_min)   (0 without noise),

are multiplied by ``bonus_scale`` (:func:`confidence_radii`; the paper's is 1).

Constants (the agent factory's keyword options; the defaults are the paper's, and
``make_agent(..., preset="tuned")`` applies :data:`TUNED`, what dpkit ran before the defaults were made the
paper's — explicit options override a preset):

* ``regularization`` λ. Private agents: the paper's Z_{h,p}^k = N_{h,p}^k + 2Σ_{p,1} I ("In particular, we
  choose Z_{h,p}^k = N_{h,p}^k + 2Σ_{p,1} I, which leads to λ_max,p = 3Σ_{p,1} and λ_min,p = Σ_{p,1}", proof
  of Thm 6.5; likewise for r): no ridge, λ = 0 (:data:`PRIVATE_REGULARIZATION`). Non-private agents: "choosing
  Z_{h,p}^k = λI and z_{h,p}^k = 0 for all h, k reduces to the standard non-private value-based algorithms"
  (§3) — the paper states no value of λ; the algorithm needs λ > 0 (Λ = λI at k = 1 must be invertible),
  and the default is the unit ridge λ = 1 (:data:`DEFAULT_REGULARIZATION`). Tuned: λ = 1 for all four.
* ``bonus_scale``: the paper's Γ_{h,p}^k = β_p(α)[φᵀ(Λ_{h,p}^k)⁻¹φ]^{1/2} and Γ_{h,r}^k = β_r(α)[ϕᵀ(Λ_{h,r}^k)⁻¹ϕ]^{1/2}
  (Algorithm 1) use the radii of Lemma 3.1 as they are: the paper states no multiplier, i.e. 1
  (:data:`DEFAULT_BONUS_SCALE`). Tuned: 0.05 (:data:`TUNED`; see its comment).
* ``alpha`` α = 0.05: an input ("for any α ∈ (0, 1]", Thm 6.5) the paper leaves to the user.
* ``eta`` (PO): the paper's step of Thm 5.1 (:func:`paper_eta`), in both presets.

Features: the one-hot linear-mixture view of a tabular MDP (:class:`~dpkit.algorithms.envs.features.LinearMixture`):
φ_V(s, a) ∈ R^{S²A} is V placed in the block of (s, a), so φ_V(s,a)ᵀθ = θ[block]ᵀV and
‖φ_V(s,a)‖²_{Λ⁻¹} = Vᵀ Λ⁻¹[block, block] V: only the SA diagonal S×S blocks of Λ⁻¹ are used.
ϕ(s, a) = e_(s,a) ∈ R^{SA}. What the declaration assumes is enforced before anything is counted:
V clipped to [0, H], φ to ‖φ‖ <= sqrt(d1)·H, ϕ to ‖ϕ‖ <= 1, r to [0, 1].
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkit.accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration, cached_declaration, tree_depth_flag
from dpkit.accountant.sensitivity import clip_norm, outer_product_sensitivity, product_sensitivity
from dpkit.accountant.structured_sensitivity import block_norm_bound, block_outer_product_sensitivity
from dpkit.accountant.tree import (
    SCHEDULES,
    BinaryCounter,
    max_psums_per_item,
    max_psums_per_prefix,
    paper_depth,
    symmetric_noise_norm_bound,
)
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_index,
    check_nonnegative,
    check_positive,
    check_probability,
    check_rng,
)
from dpkit.accountant.zcdp import zcdp_epsilon

from .envs.features import LinearMixture
from .envs.tabular import TabularMDP
from .episodes import Plan, per_step, resolve_sigmas, step_column
from .observers import ObservedRun, OneRun, OneRunView
from .spec import AlgorithmSpec, AuditSpec, ReportSpec

__all__ = [
    "ALGORITHMS",
    "READINGS",
    "RELEASES",
    "VARIANTS",
    "AGENT_NAMES",
    "DEFAULT_BONUS_SCALE",
    "DEFAULT_REGULARIZATION",
    "PRIVATE_REGULARIZATION",
    "DEFAULT_ALPHA",
    "TUNED",
    "PRESETS",
    "paper_sigma",
    "declare_privacy",
    "paper_eta",
    "noise_shift",
    "target_noise_bound",
    "confidence_radii",
    "Privatizer",
    "LinOpt",
    "PrivateLinOpt",
    "make_agent",
]

ALGORITHMS: tuple[str, ...] = ("private-linopt-vi", "private-linopt-po")
#: The paper's formulas. There was a ``proof-6.4`` reading with Δ_{p,1} = d1·H: an artefact of the seed's text
#: extraction (see the module docstring), not of the paper, and removed.
READINGS: tuple[str, ...] = ("theorem-6.5",)
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
    schedule: str = "before-episode",
    states: int | None = None,
) -> PrivacyDeclaration:
    """What the 4H counters of Private-LinOpt-VI/-PO release about one user, at the paper's σ.

    ``d1``/``d2`` are the transition and reward feature dimensions (``d2`` defaults to ``d1``).
    The implementation clips φ to sqrt(d1)·H, V to [0, H], ϕ to 1 and r to [0, 1]. With ``states`` S the features
    are one-hot (the tabular linear-mixture view :class:`LinOpt` uses: φ_V(s, a) is V in the block of (s, a) and
    ϕ(s, a) = e_(s,a)), whose exact sensitivities are smaller: ‖φ‖ <= sqrt(S)·(H − h), the Gram update's upper
    triangle b_V²·sqrt(S(S + 1)) under replace-one, every product entrywise >= 0
    (:mod:`dpkit.accountant.structured_sensitivity`); without it, the norm-ball bounds of any features.
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


# ------------------------------------------------------------------------------------------
# The algorithms
# ------------------------------------------------------------------------------------------

#: The names of the four statistics' counters, as in the declaration.
RELEASES: tuple[str, ...] = ("B_{h,p,1}", "B_{h,p,2}", "B_{h,r,1}", "B_{h,r,2}")
#: ``vi``: optimistic value iteration (Algorithm 1); ``po``: optimistic policy optimisation (Algorithm 2).
VARIANTS: tuple[str, ...] = ("vi", "po")
AGENT_NAMES: tuple[str, ...] = ("linopt-vi", "linopt-po", "private-linopt-vi", "private-linopt-po")
#: Multiplier on the radii of Lemma 3.1: the paper's 1 (Algorithm 1's bonuses are β_p(α)‖φ‖ and β_r(α)‖ϕ‖).
DEFAULT_BONUS_SCALE: float = 1.0
#: λ of the non-private ridge regulariser λI. The paper states none ("choosing Z = λI and z = 0 … reduces to
#: the standard non-private … algorithms", §3); λ > 0 is needed and 1 is the unit ridge.
DEFAULT_REGULARIZATION: float = 1.0
#: λ added to the private shift 2Σ: the paper's 0 (Z = N + 2ΣI, proof of Thm 6.5).
PRIVATE_REGULARIZATION: float = 0.0
#: dpkit's tuned constants (``preset="tuned"``), bit for bit what dpkit's agents did before the defaults became
#: the paper's. ``bonus_scale``: the theory's β's are conservative by one to two orders of magnitude on small
#: MDPs: β_p ≈ 15 for S = 2, A = 2, H = 3, K = 300 without noise and ≈ 1000 with the noise of ε = 10 (σ tight),
#: where β_p‖φ‖ saturates every Q at H − h + 1, so VI plays action 0 forever and PO never leaves uniform. Over
#: scales 0.01 … 1 on small random MDPs and RiverSwim (K = 300), 0.05 gave the lowest regret for LinOpt-VI and
#: about the best for the private agents. ``regularization``: a unit ridge under the private shift too
#: (λ_min = 1 + Σ), which keeps Λ invertible at σ = 0 and makes a private agent at σ = 0 the non-private one.
TUNED: Mapping[str, Any] = MappingProxyType({"regularization": 1.0, "bonus_scale": 0.05})
#: The presets :func:`make_agent` knows: ``"paper"`` (the defaults) and ``"tuned"`` (:data:`TUNED`).
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType({"paper": MappingProxyType({}), "tuned": TUNED})
#: The confidence level α of Lemma 3.1 and of the noise bounds of Thm 6.5.
DEFAULT_ALPHA: float = 0.05


def paper_eta(actions: int, horizon: int, episodes: int) -> float:
    """η = sqrt(2 ln|A| / (H T)) = sqrt(2 ln|A| / (H² K)), the mirror-descent step of Thm 5.1
    (Cai et al. 2020, Eq. C.2; the seed's text lost the square root). 0 when |A| = 1."""
    a = check_count("actions", actions)
    h = check_count("horizon", horizon)
    k = check_count("episodes", episodes)
    return math.sqrt(2.0 * math.log(a) / (h * h * k))


def noise_shift(sigma: float, psums: int, dim: int, episodes: int, horizon: int, alpha: float) -> float:
    """Σ = σ sqrt(m)(4 sqrt(d) + sqrt(8 ln(8KH/α))): with probability >= 1 − α/(4KH) a bound on the
    operator norm of the symmetric Gram noise of one prefix of at most m = ``psums`` p-sums (Thm 6.5).

    This is :func:`~dpkit.accountant.tree.symmetric_noise_norm_bound` at failure probability α/(4KH)
    (the union bound over the K episodes and H steps); 0 when σ = 0 or m = 0.
    """
    k = check_count("episodes", episodes)
    h = check_count("horizon", horizon)
    alpha = check_probability("alpha", alpha)
    return symmetric_noise_norm_bound(sigma, psums=psums, dim=dim, failure_probability=alpha / (4.0 * k * h))


def target_noise_bound(sigma: float, psums: int, dim: int, episodes: int, horizon: int, alpha: float) -> float:
    """σ sqrt(m)(sqrt(d) + sqrt(2 ln(4KH/α))): with probability >= 1 − α/(4KH) a bound on the ℓ2 norm
    of the noise of one target prefix (χ² tail, Lemma B.5; Thm 6.5). 0 when σ = 0 or m = 0."""
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

    ``shift_p``/``shift_r`` are Σ_p, Σ_r (:func:`noise_shift`), ``target_noise_*`` the ν₀'s
    (:func:`target_noise_bound`). Then λ_min = Σ + λ, λ_max = 3Σ + λ, ν = ν₀/sqrt(λ_min) and

        β_p = (H/2) sqrt(2 ln(H/α) + d1 ln(1 + KH²/λ_min,p)) + sqrt(d1 λ_max,p) + ν_p,
        β_r = (1/2) sqrt(2 ln(H/α) + d2 ln(1 + K/(d2 λ_min,r))) + sqrt(d2 λ_max,r) + ν_r.

    Without noise (Σ = ν₀ = 0) these are the radii of the fixed regulariser λI.
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


def _counter_sigma(name: str, value: Any, horizon: int) -> float | np.ndarray:
    """A counter's σ: one number >= 0, or one per step (H of them; one number when they are equal)."""
    if np.ndim(value) == 0:
        return check_nonnegative(f"sigmas[{name!r}]", value)
    values = np.array([check_nonnegative(f"sigmas[{name!r}][{i}]", v) for i, v in enumerate(np.ravel(value))])
    if np.ndim(value) != 1 or values.shape[0] != horizon:
        raise ValueError(f"sigmas[{name!r}] must be one σ or one per step ({horizon}), got {value!r}")
    return float(values[0]) if np.all(values == values[0]) else values


def _at(x: float | np.ndarray, h: int | None) -> float:
    """Step ``h``'s value of a number (the same at every step) or of a per-step array."""
    return float(x) if np.ndim(x) == 0 or h is None else float(np.asarray(x)[h])


class Privatizer:
    """The PRIVATIZER of seed 004: four binary-tree counters, each with the H steps as a batch axis.

    ``B_{h,p,1}`` sums φφᵀ (H, d1, d1) and ``B_{h,r,1}`` sums ϕϕᵀ (H, d2, d2), both with symmetric
    noise (i.i.d. N(0, σ²) on i <= j, mirrored); ``B_{h,p,2}`` sums φ·V (H, d1) and ``B_{h,r,2}``
    sums ϕ·r (H, d2), with i.i.d. noise. Noise is i.i.d. across the H steps (H independent counters
    per statistic) and every p-sum is noised once, with σ = ``sigmas[name]`` (0: exact sums).
    Each counter draws from its own child of ``rng``.

    Schedule ``before-episode``: :meth:`release` at the start of episode k returns the noisy sums
    over episodes 1..k−1 (zeros at k = 1, when nothing has been added), then :meth:`add` inserts
    episode k's items.
    """

    def __init__(
        self,
        horizon: int,
        d1: int,
        d2: int,
        episodes: int,
        sigmas: Mapping[str, float],
        rng: np.random.Generator | int,
    ) -> None:
        self.horizon = check_count("horizon", horizon)
        self.d1 = check_count("d1", d1)
        self.d2 = check_count("d2", d2)
        self.episodes = check_count("episodes", episodes)
        if not isinstance(sigmas, Mapping) or sorted(sigmas) != sorted(RELEASES):
            got = sorted(sigmas) if isinstance(sigmas, Mapping) else sigmas
            raise ValueError(f"sigmas must map exactly the releases {list(RELEASES)} to σ >= 0, got {got!r}")
        self.sigmas: dict[str, float | np.ndarray] = {n: _counter_sigma(n, sigmas[n], horizon) for n in RELEASES}
        children = check_rng("rng", rng).spawn(len(RELEASES))
        h = self.horizon
        shapes = {
            "B_{h,p,1}": ((h, self.d1, self.d1), True),
            "B_{h,p,2}": ((h, self.d1), False),
            "B_{h,r,1}": ((h, self.d2, self.d2), True),
            "B_{h,r,2}": ((h, self.d2), False),
        }
        self.counters: dict[str, BinaryCounter] = {
            n: BinaryCounter(shapes[n][0], self.sigmas[n], child, symmetric=shapes[n][1], steps=self.episodes)
            for n, child in zip(RELEASES, children)
        }

    @property
    def t(self) -> int:
        """The number of episodes added so far."""
        return self.counters[RELEASES[0]].t

    def release(self) -> dict[str, np.ndarray]:
        """The noisy prefix sums over the episodes added so far, by release name (fresh copies)."""
        return {n: c.prefix() for n, c in self.counters.items()}

    def add(self, gram_p: np.ndarray, target_p: np.ndarray, gram_r: np.ndarray, target_r: np.ndarray) -> None:
        """Insert one episode's items (shapes (H,d1,d1), (H,d1), (H,d2,d2), (H,d2))."""
        for name, item in zip(RELEASES, (gram_p, target_p, gram_r, target_r)):
            self.counters[name].add(item)

    def __repr__(self) -> str:
        return f"Privatizer(horizon={self.horizon}, d1={self.d1}, d2={self.d2}, sigmas={self.sigmas}, t={self.t})"


def _clip_rows_exactly(x: np.ndarray, bound: float) -> np.ndarray:
    """:func:`~dpkit.accountant.sensitivity.clip_norm` along the last axis, except that rows whose *exact*
    norm (rational arithmetic) is at most ``bound`` are kept bit for bit (clip_norm shrinks rows
    within rounding of the bound, e.g. one-hot ϕ at bound 1, by ~1e-15). For fixed feature tables."""
    rows = x.reshape(-1, x.shape[-1])
    if np.all((np.count_nonzero(rows, axis=1) <= 1) & (np.abs(rows).max(axis=1, initial=0.0) <= bound)):
        return x.copy()  # one non-zero per row (one-hot features) within the bound: exactly inside
    clipped = clip_norm(x, bound, axis=-1)
    out = clipped.reshape(-1, x.shape[-1])
    limit = Fraction(bound) ** 2
    for i, row in enumerate(rows):
        if sum(Fraction(float(v)) ** 2 for v in row[row != 0]) <= limit:
            out[i] = row
    return clipped


def _check_env(env: object) -> TabularMDP:
    if not isinstance(env, TabularMDP):
        raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
    return env


class LinOpt:
    """LinOpt-VI (``variant="vi"``) or LinOpt-PO (``"po"``): the non-private algorithms (Z = λI, z = 0).

    Parameters
    ----------
    env:
        The tabular MDP, seen through its one-hot linear-mixture features (d1 = S²A, d2 = SA);
        only its sizes are read.
    episodes:
        K, the number of episodes (it enters the radii, η and the counters' capacity).
    rng:
        A numpy ``Generator`` or an integer seed (the privatizer's noise; unused without noise).
    variant:
        ``"vi"`` (greedy policies (H, S) of ints) or ``"po"`` (stochastic policies (H, S, A)).
    regularization:
        λ > 0 of the ridge regulariser λI (default :data:`DEFAULT_REGULARIZATION` = 1; the paper states none).
        :class:`PrivateLinOpt` adds it to the shift 2Σ and defaults to the paper's 0
        (:data:`PRIVATE_REGULARIZATION`).
    bonus_scale:
        Multiplier >= 0 on the radii β_p, β_r of Lemma 3.1 (default :data:`DEFAULT_BONUS_SCALE`, the paper's 1;
        tuned 0.05, :data:`TUNED`).
    alpha:
        Confidence level α ∈ (0, 1) of the radii (default :data:`DEFAULT_ALPHA`).
    eta:
        PO step size > 0; ``None`` is the paper's :func:`paper_eta`. Only for ``variant="po"``.
        The paper's η moves the logits by at most sqrt(2K ln|A|)·ΔQ/H in K episodes: tuned for the
        worst-case bound, slow on small problems (and with the private shift's shrunken ΔQ the
        policy stays near uniform for hundreds of episodes); η ≈ 1 learns much faster there.

    The agent follows :class:`~dpkit.algorithms.episodes.EpisodicAgent`: ``plan(k)`` then ``update(k, …)``
    for k = 0, 1, … in order.
    """

    private: bool = False

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        rng: np.random.Generator | int = 0,
        *,
        variant: str = "vi",
        regularization: float = DEFAULT_REGULARIZATION,
        bonus_scale: float = DEFAULT_BONUS_SCALE,
        alpha: float = DEFAULT_ALPHA,
        eta: float | None = None,
    ) -> None:
        self.env = _check_env(env)
        self.features = LinearMixture(self.env)
        self.episodes = check_count("episodes", episodes)
        self.variant = check_choice("variant", variant, VARIANTS)
        self.regularization = check_nonnegative("regularization", regularization)
        if not self.private and self.regularization == 0.0:
            raise ValueError(
                f"regularization must be > 0 without noise (λI is the only regulariser), got {regularization!r}"
            )
        self.bonus_scale = check_nonnegative("bonus_scale", bonus_scale)
        self.alpha = check_probability("alpha", alpha)
        if eta is not None and self.variant != "po":
            raise ValueError(f"eta is the PO step size; variant {self.variant!r} takes none, got eta = {eta!r}")
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        self.eta: float | None = None
        if self.variant == "po":
            self.eta = paper_eta(a_, h_, self.episodes) if eta is None else check_positive("eta", eta)
        self.name: str = ("private-" if self.private else "") + f"linopt-{self.variant}"
        self.d1, self.d2 = self.features.dim, self.features.reward_dim
        self._rng = check_rng("rng", rng)
        self.sigmas: dict[str, float] = self._resolve_sigmas()
        self.privatizer = Privatizer(h_, self.d1, self.d2, self.episodes, self._counter_sigmas(), self._rng)
        # Regulariser shifts and confidence radii (fixed over the episodes).
        m = max_psums_per_prefix(self.episodes, schedule="before-episode")
        sig = self.privatizer.sigmas
        args = (self.episodes, h_, self.alpha)
        # A counter's σ is one number, or one per step (an allocation with per-step σ): so are its shift and radius.
        self.noise_shift_p = per_step(lambda s: noise_shift(s, m, self.d1, *args), sig["B_{h,p,1}"])
        if np.ndim(self.noise_shift_p) and self.regularization == 0.0:
            # a step without Gram noise in a per-step allocation is step H, whose items are 0 (V_{H+1} = 0) and whose
            # model is never used: a unit shift keeps its Λ invertible
            zero = np.asarray(sig["B_{h,p,1}"]) == 0.0
            if np.any(zero[:-1]):
                raise ValueError(
                    "regularization = 0 needs Gram noise (its shift) at steps 1..H−1, got σ of B_{h,p,1} = "
                    f"{sig['B_{h,p,1}']!r}; give regularization > 0"
                )
            self.noise_shift_p = np.where(zero, 0.5, self.noise_shift_p)
        self.noise_shift_r = per_step(lambda s: noise_shift(s, m, self.d2, *args), sig["B_{h,r,1}"])
        self.shift_p = self.regularization + 2.0 * self.noise_shift_p
        self.shift_r = self.regularization + 2.0 * self.noise_shift_r
        nu_p = per_step(lambda s: target_noise_bound(s, m, self.d1, *args), sig["B_{h,p,2}"])
        nu_r = per_step(lambda s: target_noise_bound(s, m, self.d2, *args), sig["B_{h,r,2}"])
        varies = [np.ndim(x) > 0 for x in (self.noise_shift_p, self.noise_shift_r, nu_p, nu_r)]
        steps = range(h_) if any(varies) else [None]
        radii = [
            confidence_radii(
                self.d1,
                self.d2,
                self.episodes,
                h_,
                regularization=self.regularization,
                shift_p=_at(self.noise_shift_p, h),
                shift_r=_at(self.noise_shift_r, h),
                target_noise_p=_at(nu_p, h),
                target_noise_r=_at(nu_r, h),
                alpha=self.alpha,
            )
            for h in steps
        ]
        beta_p: float | np.ndarray = radii[0][0] if len(radii) == 1 else np.array([b for b, _ in radii])
        beta_r: float | np.ndarray = radii[0][1] if len(radii) == 1 else np.array([b for _, b in radii])
        self.beta_p, self.beta_r = self.bonus_scale * beta_p, self.bonus_scale * beta_r
        # Feature bounds the declaration assumes.
        self.value_bound = float(h_)
        self.feature_bound = math.sqrt(self.d1) * h_
        # step h's bounds (1-based): V_{h+1} <= H − h, ‖φ‖ <= sqrt(d1)·(H − h) (the declaration's per-step Δ)
        self.step_value_bounds: np.ndarray = np.arange(h_ - 1, -1, -1, dtype=float) if h_ > 1 else np.ones(1)
        self.step_feature_bounds: np.ndarray = math.sqrt(self.d1) * self.step_value_bounds
        #: Invert Λ_p densely (noisy Gram); without Gram noise it is block diagonal and its SA
        #: S×S blocks are inverted instead (the same for private agents at σ = 0).
        self.dense: bool = bool(np.any(self.privatizer.sigmas["B_{h,p,1}"]))
        self._psi = _clip_rows_exactly(self.features.reward_features(), 1.0)  # ϕ(s, a): (S, A, d2)
        # PO: unnormalised log-policy, π¹ uniform.
        self._logits = np.zeros((h_, s_, a_)) if self.variant == "po" else None
        self._next = 0  # the episode to be planned/updated next
        self._planned: tuple[int, np.ndarray, np.ndarray] | None = None  # (k, V (H+1, S), Q (H, S, A))
        #: The optimistic Q_h(s, a) (H, S, A) and V_h(s) (H+1, S) of the last plan (``None`` before).
        self.last_q: np.ndarray | None = None
        self.last_v: np.ndarray | None = None

    # -- hooks for the private subclass -------------------------------------------------------
    def _resolve_sigmas(self) -> dict[str, float]:
        return {}

    def _counter_sigmas(self) -> dict[str, float]:
        return dict.fromkeys(RELEASES, 0.0)

    def _released(self, prefixes: dict[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        return {}

    # -- the policy ----------------------------------------------------------------------------
    @property
    def declaration(self) -> PrivacyDeclaration | None:
        """The privacy declaration (``None``: the non-private algorithm releases nothing)."""
        return None

    def policy(self) -> np.ndarray:
        """The current PO policy π^k (H, S, A) (the VI policy exists only once planned)."""
        if self._logits is None:
            raise ValueError(f"variant {self.variant!r} has no standing policy; call plan(k)")
        z = self._logits - self._logits.max(axis=-1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=-1, keepdims=True)

    def _optimistic_values(self, prefixes: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(V (H+1, S), Q (H, S, A), policy) from the released prefixes: the backward recursion."""
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        sa = s_ * a_
        eye_p, eye_r = np.eye(self.d1), np.eye(self.d2)
        lam_p = (prefixes["B_{h,p,1}"] + step_column(self.shift_p, 3) * eye_p).reshape(h_, sa, s_, sa, s_)
        lam_r = prefixes["B_{h,r,1}"] + step_column(self.shift_r, 3) * eye_r
        u_p = prefixes["B_{h,p,2}"].reshape(h_, sa, s_)
        if self.dense:
            inv_p = np.linalg.inv(lam_p.reshape(h_, self.d1, self.d1)).reshape(h_, sa, s_, sa, s_)
            theta_p = np.einsum("hiajb,hjb->hia", inv_p, u_p)
            # The S×S diagonal blocks Λ_p⁻¹[block(s,a), block(s,a)]: (H, SA, S, S).
            blocks = np.einsum("hiaib->hiab", inv_p)
        else:  # no Gram noise: Λ_p is exactly block diagonal (one-hot φ), so invert its SA blocks
            blocks = np.linalg.inv(np.einsum("hiaib->hiab", lam_p))
            theta_p = np.einsum("hiab,hib->hia", blocks, u_p)
        inv_r = np.linalg.inv(lam_r)  # (H, d2, d2)
        theta_r = np.einsum("hij,hj->hi", inv_r, prefixes["B_{h,r,2}"])
        psi = self._psi
        mean_r = np.einsum("sad,hd->hsa", psi, theta_r)
        width_r = np.sqrt(np.maximum(np.einsum("sad,hde,sae->hsa", psi, inv_r, psi), 0.0))
        base = mean_r + step_column(self.beta_r, 3) * width_r  # (H, S, A)
        pi = self.policy() if self.variant == "po" else None
        v = np.zeros((h_ + 1, s_))
        q = np.empty((h_, s_, a_))
        for h in range(h_ - 1, -1, -1):
            nxt = v[h + 1]
            mean_p = theta_p[h] @ nxt  # (SA,)
            width_p = np.sqrt(np.maximum(np.einsum("iab,a,b->i", blocks[h], nxt, nxt), 0.0))
            q[h] = np.clip(base[h] + (mean_p + _at(self.beta_p, h) * width_p).reshape(s_, a_), 0.0, float(h_ - h))
            v[h] = q[h].max(axis=1) if pi is None else np.einsum("sa,sa->s", pi[h], q[h])
        return v, q, pi

    def plan(self, k: int) -> Plan:
        """The policy for episode ``k`` (0-based; episodes in order), from the released prefixes."""
        k = check_index("k", k)
        if k != self._next:
            raise ValueError(f"episodes must be planned in order: expected k = {self._next}, got k = {k}")
        if k >= self.episodes:
            raise ValueError(f"k = {k} is beyond the {self.episodes} episodes this agent was built for")
        prefixes = self.privatizer.release()
        v, q, pi = self._optimistic_values(prefixes)
        self._planned = (k, v, q)
        self.last_q, self.last_v = q, v
        policy = q.argmax(axis=2) if pi is None else pi
        return Plan(policy, self._released(prefixes))

    def _check_trajectory(self, k: int, states: object, actions: object, rewards: object) -> tuple[np.ndarray, ...]:
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        out = []
        for name, value, shape, bound in (("states", states, (h_ + 1,), s_), ("actions", actions, (h_,), a_)):
            arr = np.asarray(value)
            if arr.shape != shape or arr.dtype.kind not in "iu":
                raise ValueError(
                    f"{name} of episode {k} must be integers of shape {shape}, got {arr.dtype} {arr.shape}"
                )
            if np.any((arr < 0) | (arr >= bound)):
                raise ValueError(f"{name} of episode {k} must lie in 0..{bound - 1}, got {arr.tolist()}")
            out.append(arr.astype(np.int64))
        r = np.asarray(rewards)
        if r.shape != (h_,) or r.dtype.kind not in "biuf" or not np.all(np.isfinite(r)):
            raise ValueError(f"rewards of episode {k} must be {h_} finite numbers, got {r!r}")
        out.append(np.clip(r.astype(float), 0.0, 1.0))  # the declaration assumes r ∈ [0, 1]
        return tuple(out)

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Add episode ``k``'s trajectory to the counters (and, for PO, take the mirror-descent step).

        Under JDP nothing is released about the user here: returns ``{}``.
        """
        k = check_index("k", k)
        if self._planned is None or self._planned[0] != k:
            raise ValueError(f"update(k = {k}) must follow plan(k = {k}); the next episode to plan is {self._next}")
        self.privatizer.add(*self.items(k, states, actions, rewards).values())
        _, v, q = self._planned
        if self._logits is not None:
            self._logits += self.eta * q
            self._logits -= self._logits.max(axis=-1, keepdims=True)  # keeps the logits bounded; π unchanged
        self._planned = None
        self._next = k + 1
        return {}

    def items(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        """The four items episode ``k``'s trajectory adds to the counters, by release name (clipped as
        the declaration assumes): φφᵀ (H, d1, d1), φ·V_{h+1}(s_{h+1}) (H, d1), ϕϕᵀ (H, d2, d2), ϕ·r (H, d2).

        Uses the values of the plan of episode ``k``; changes nothing (so a counterfactual trajectory
        can be evaluated under the same plan)."""
        if self._planned is None or self._planned[0] != k:
            raise ValueError(f"items of episode {k} need its plan; the next episode to plan is {self._next}")
        s, a, r = self._check_trajectory(k, states, actions, rewards)
        _, v, _ = self._planned
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        steps = np.arange(h_)
        v_next = np.clip(v[1:], 0.0, self.step_value_bounds[:, None])  # V_{h+1} ∈ [0, H − h], (H, S)
        blocks = np.zeros((h_, s_ * a_, s_))
        blocks[steps, s[:-1] * a_ + a] = v_next  # φ_{V_{h+1}}(s_h, a_h) in its block
        phi = blocks.reshape(h_, self.d1)
        for h, bound in enumerate(self.step_feature_bounds):  # ‖φ‖ <= sqrt(d1)·(H − h), 0 at step H
            phi[h] = clip_norm(phi[h], float(bound)) if bound > 0.0 else 0.0
        target = v_next[steps, s[1:]]  # V_{h+1}(s_{h+1})
        psi = self._psi[s[:-1], a]  # (H, d2)
        return dict(
            zip(
                RELEASES,
                (
                    phi[:, :, None] * phi[:, None, :],
                    phi * target[:, None],
                    psi[:, :, None] * psi[:, None, :],
                    psi * r[:, None],
                ),
            )
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, episodes={self.episodes}, t={self._next})"


class PrivateLinOpt(LinOpt):
    """Private-LinOpt-VI / -PO: :class:`LinOpt` with the PRIVATIZER's noisy counters (JDP).

    Adds to :class:`LinOpt`'s parameters the target ``epsilon`` > 0 and ``delta`` ∈ (0, 1) of the
    declaration (:func:`declare_privacy`, ``reading``), and ``sigma``: ``"paper"`` (the paper's σ),
    ``"tight"`` (the σ the ledger needs under ``relation`` with ``method``), a number or a mapping
    release → σ (:func:`~dpkit.algorithms.episodes.resolve_sigmas`). ``Plan.released`` holds the four noisy
    prefixes before the shift — what an observer under JDP sees (zeros at k = 0: nothing released).
    ``regularization`` defaults to the paper's λ = 0 (Z = N + 2ΣI), which needs noise on both Gram counters;
    with σ = 0 and the same parameters (λ > 0) the agent takes the same actions as :class:`LinOpt`.
    """

    private = True

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        rng: np.random.Generator | int = 0,
        *,
        epsilon: float,
        delta: float,
        sigma: str | float | Mapping[str, float] = "paper",
        reading: str = "theorem-6.5",
        relation: str | None = None,
        method: str = "exact",
        variant: str = "vi",
        regularization: float = PRIVATE_REGULARIZATION,
        bonus_scale: float = DEFAULT_BONUS_SCALE,
        alpha: float = DEFAULT_ALPHA,
        eta: float | None = None,
    ) -> None:
        env = _check_env(env)
        variant = check_choice("variant", variant, VARIANTS)
        features = LinearMixture(env)
        self._declaration = declare_privacy(
            f"private-linopt-{variant}",
            episodes,
            env.horizon,
            epsilon,
            delta,
            features.dim,
            features.reward_dim,
            reading=reading,
            schedule="before-episode",
            states=env.states,
        )
        self._sigma_choice = sigma
        self._relation = relation
        self._method = method
        super().__init__(
            env,
            episodes,
            rng,
            variant=variant,
            regularization=regularization,
            bonus_scale=bonus_scale,
            alpha=alpha,
            eta=eta,
        )

    @property
    def declaration(self) -> PrivacyDeclaration:
        """What the 4H counters release about one user (:func:`declare_privacy`)."""
        return self._declaration

    def _resolve_sigmas(self) -> dict[str, float]:
        return resolve_sigmas(self._declaration, self._sigma_choice, relation=self._relation, method=self._method)

    def _counter_sigmas(self) -> dict[str, float]:
        return dict(self.sigmas)

    def _released(self, prefixes: dict[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        return prefixes


_OPTIONS: tuple[str, ...] = ("regularization", "bonus_scale", "alpha", "eta")
_PRIVATE_OPTIONS: tuple[str, ...] = _OPTIONS + ("reading", "relation", "method")


def make_agent(
    name: str,
    env: TabularMDP,
    episodes: int,
    rng: np.random.Generator | int,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    preset: str = "paper",
    **options: Any,
) -> LinOpt:
    """An agent by name: ``linopt-vi``, ``linopt-po``, ``private-linopt-vi``, ``private-linopt-po``.

    The private ones need ``epsilon`` and ``delta``; the non-private ones add no noise, ignore
    ``epsilon``/``delta`` and take no ``sigma`` but ``"paper"`` (the default). ``options`` go to the
    constructor (``regularization``, ``bonus_scale``, ``alpha``, ``eta``; private: ``reading``,
    ``relation``, ``method``). ``preset``: ``"paper"`` (the constructor's defaults, the paper's values) or
    ``"tuned"`` (:data:`TUNED` under the explicit ``options``).
    """
    name = check_choice("name", name, AGENT_NAMES)
    preset = check_choice("preset", preset, tuple(PRESETS))
    variant = name.rsplit("-", 1)[1]
    allowed = _PRIVATE_OPTIONS if name.startswith("private-") else _OPTIONS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"{name} takes the options {', '.join(allowed)}; got unknown {', '.join(unknown)}")
    options = {**PRESETS[preset], **options}
    if name.startswith("private-"):
        if epsilon is None or delta is None:
            raise ValueError(f"{name} is private: give epsilon and delta, got epsilon = {epsilon!r}, delta = {delta!r}")
        return PrivateLinOpt(env, episodes, rng, epsilon=epsilon, delta=delta, sigma=sigma, variant=variant, **options)
    if not (isinstance(sigma, str) and sigma == "paper"):
        raise ValueError(f"{name} is not private and adds no noise: sigma must be left at 'paper', got {sigma!r}")
    return LinOpt(env, episodes, rng, variant=variant, **options)


# -- audit: canaries and observers (dpkit.audits.rl) ------------------------------------------------


def audit_world(setting: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The audit's canaries: one starts in and walks state 0, the other state S − 1 (disjoint features at every
    step), both with raw rewards 2 — beyond [0, 1], which only LinOpt's own clipping brings back to the bound its
    reward counters' sensitivities assume. With the paper's bonus every optimistic Q sits at its cap H − h + 1, so
    each canary's φ_{V_{h+1}} is the full block (H − h)·1 and her target V_{h+1}(s_{h+1}) = H − h: every counter's
    item differs by its declared Δ at every step."""
    from .observers import tabular_world

    return tabular_world(setting, (2.0, 2.0))


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """``billboard``: every released noisy prefix of every counter (its p-sums recovered and whitened);
    ``actions``: the actions of all later users (black-box)."""
    from .episodes import play_episode
    from .observers import CounterLog, Trace

    s = run.setting
    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    log = CounterLog(tuple(agent.privatizer.counters), batched=True)
    trace = Trace()
    for k in range(s.episodes):
        plan = agent.plan(k)
        log.released(plan.released)
        policy = np.asarray(plan.policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        traj = play_episode(env, policy, users[k], draws)
        if run.observer == "actions" and k > j:
            trace.view.append(np.eye(env.actions)[traj[1]].ravel())
        theirs = agent.items(k, *play_episode(env, policy, other, draws)) if k == j else None
        log.episode(agent.items(k, *traj), theirs, run.which)
        agent.update(k, *traj)
    log.finish(
        trace,
        j,
        agent.privatizer.sigmas,
        run.claim_sigmas,
        {n: n.endswith(",1}") for n in log.names},
        run.sensitivities,
    )
    return trace.row(run.white_box)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries (user k canary ``run.coins[k]``), scored from the billboard: every
    released prefix of every counter, and both canaries' items under the plan each user was served
    (:func:`~dpkit.algorithms.observers.billboard_one_run_scores`)."""
    from .episodes import play_episode
    from .observers import CounterLog, billboard_one_run_scores, billboard_reach, counter_nodes

    if run.observer != "billboard":
        raise ValueError(f"one-run audits of {run.setting.algorithm} read the billboard, not {run.observer!r}")
    env, _, canaries = run.world
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    names = tuple(agent.privatizer.counters)
    log0, log1 = CounterLog(names, batched=True), CounterLog(names, batched=True)
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        log0.released(plan.released)
        policy = np.asarray(plan.policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        trajectories = [play_episode(env, policy, canary, draws) for canary in canaries]
        log0.episode(agent.items(k, *trajectories[0]), None, 0)
        log1.episode(agent.items(k, *trajectories[1]), None, 0)
        agent.update(k, *trajectories[int(coin)])
        run.advance()
    stack = lambda log: {n: np.stack(log.items[n]) for n in names}  # noqa: E731
    prefixes = {n: np.stack(log0.prefixes[n]) for n in names}
    scores = billboard_one_run_scores(
        prefixes, stack(log0), stack(log1), agent.privatizer.sigmas, {n: n.endswith(",1}") for n in names}
    )
    starts = counter_nodes(prefixes[names[0]])[1]
    return OneRunView(scores, "billboard", billboard_reach(starts, len(starts), run.sensitivities, run.claim_sigmas))


def _declare(name: str, epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(
        name,
        p["episodes"],
        p["horizon"],
        epsilon,
        delta,
        p["dim"],
        reading=p.get("reading") or "theorem-6.5",
        schedule=p.get("schedule") or "before-episode",
        states=p.get("states"),
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """d = S²A, the dimension of the one-hot linear-mixture features of S states; H = 2S unless given."""
    horizon = sizes.horizon if sizes.horizon is not None else 2 * sizes.states
    return {
        "episodes": sizes.episodes,
        "horizon": horizon,
        "dim": sizes.states**2 * sizes.actions,
        "states": sizes.states,
    }


def _assumptions(policy_update: str) -> tuple[str, ...]:
    return (
        "A tabular MDP in its linear-mixture view: transition features of dimension d1 = S²A, reward features "
        "of dimension d2 = SA.",
        "Values lie in [0, H] and rewards in [0, 1]; features, values and rewards are clipped to these bounds "
        "before they are counted.",
        "Four binary-tree counters per step, released at the start of each episode over the episodes before it "
        "(the before-episode schedule)." + policy_update,
    )


def _spec(name: str, policy_update: str) -> AlgorithmSpec:
    return AlgorithmSpec(
        name=name,
        entry_point=make_agent,
        summary="joint DP; 4H binary-tree counters (seed 004)",
        declaration=functools.partial(_declare, name),  # a partial, not a closure: specs travel to workers
        required=("episodes", "horizon", "dim"),
        optional=("reading", "schedule", "states"),
        ledger_parameters=_ledger_parameters,
        audit=AuditSpec(
            observers=("billboard", "actions"),
            white_box=("billboard",),
            world=audit_world,
            observe=observe,
            one_run=one_run,
            positions="dpkit.algorithms.observers:tree_positions",
            # The paper's constants (bonus scale 1): every optimistic Q saturates at its cap, so the canaries' items
            # reach every declared Δ (the black-box ``actions`` observer needs preset="tuned": with saturated Q, VI
            # plays one action forever). K = 4: users 0, 1, 2 are the tree's first, power-of-two and last released
            # positions. ε = 16 keeps μ near 2.9, where a few thousand runs certify most of it.
            defaults={"states": 2, "horizon": 3, "episodes": 4, "epsilon": 16.0},
            canaries=(
                "disjoint states from the first step with raw rewards 2, beyond [0, 1]: only the algorithm's reward "
                "clipping keeps the reward counters at their declared Δ; every value at its cap, so φ_{V_{h+1}} is "
                "the full block and V_{h+1}(s_{h+1}) = H − h: each counter's item attains its declared Δ at every step"
            ),
        ),
        report=ReportSpec(assumptions=_assumptions(policy_update), sections=("tree",)),
    )


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`): the baselines and the private ones.
REGISTRATIONS = (
    AlgorithmSpec("linopt-vi", make_agent, summary="non-private LinOpt-VI (seed 004)"),
    AlgorithmSpec("linopt-po", make_agent, summary="non-private LinOpt-PO (seed 004)"),
    _spec("private-linopt-vi", ""),
    _spec("private-linopt-po", " The policy update (mirror descent) uses only released statistics."),
)
