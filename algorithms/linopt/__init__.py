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

Runs in batches: an agent (and its :class:`Privatizer`) built with a sequence of Generators, one per run, simulates
those runs at once along a leading run axis, run i exactly the agent of its Generator; the agent of one Generator is
the batch of one. The audit's :func:`observe_batch` observes a chunk of runs of dpkit's agent that way (``observe``
is its batch of one; an implementation under test is observed run by run).

The package holds the declaration (:mod:`.declaration`), the agents (:mod:`.agent`), the audit world and observers
(:mod:`.audit`) and the registration (:mod:`.registration`); everything is importable from here.
"""

from __future__ import annotations

from .agent import (
    DEFAULT_ALPHA,
    DEFAULT_BONUS_SCALE,
    DEFAULT_REGULARIZATION,
    LINOPT_AGENTS,
    PRESETS,
    PRIVATE_REGULARIZATION,
    RELEASES,
    TUNED,
    VARIANTS,
    LinOpt,
    PrivateLinOpt,
    Privatizer,
    confidence_radii,
    make_agent,
    noise_shift,
    paper_eta,
    target_noise_bound,
)
from .audit import audit_world, observe, observe_batch, one_run
from .declaration import ALGORITHMS, LINOPT_READINGS, declare_privacy, paper_sigma
from .registration import REGISTRATIONS

__all__ = [
    "ALGORITHMS",
    "LINOPT_READINGS",
    "RELEASES",
    "VARIANTS",
    "LINOPT_AGENTS",
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
    "REGISTRATIONS",
    "audit_world",
    "observe",
    "observe_batch",
    "one_run",
]
