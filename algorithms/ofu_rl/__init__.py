"""Private-OFU-RL (Chowdhury, Zhou, Shroff: *Adaptive Control of Differentially Private LQ Systems*; seed 003).

Release declaration. Two binary-tree counters (:mod:`dpkit.accountant.tree`), released at the start of
each episode over episodes 1..k−1 (schedule ``before-episode``): B1 on Σ_h z_h z_hᵀ (symmetric
noise) and B2 on Σ_h z_h x_{h+1}ᵀ, with z = [x; u], ‖x‖ <= 1 and ‖u‖ <= γ under Assumption 1
(C_A + γC_B + C_w <= 1). The paper bounds ‖z‖ <= 1 + γ (triangle inequality) and takes
Δ1 = H(1+γ)², Δ2 = H(1+γ); but z stacks x and u, so ‖z‖² = ‖x‖² + ‖u‖² <= 1 + γ², and the exact
add/remove sensitivity of B2 is H·sqrt(1+γ²); B1 is released with symmetric noise, so its
sensitivity is taken on the upper triangle: H·sqrt(1+γ²+γ⁴)
(:func:`~dpkit.accountant.sensitivity.stacked_outer_product_sensitivity`). Its Definition 1 compares
user sequences "differing on a single user" (replace-one): √2·H·sqrt(1+γ²+γ⁴) and 2H·sqrt(1+γ²) —
so the paper's Δ1 is loose under both relations while its Δ2 is too small under replace-one.
Each counter is given
(ε/2, δ/2) through zCDP with σ_i² ≈ 8 m Δ_i² ln(2/δ)/ε², m = ⌈log2 K⌉.

**The algorithms.** :class:`OfuRl` (non-private) and :class:`PrivateOfuRl` share one implementation:
two :class:`~dpkit.accountant.tree.BinaryCounter` objects over episodes, B1 on Σ_h z zᵀ (symmetric noise) and
B2 on Σ_h z x_{h+1}ᵀ, read at the start of episode k (episodes 1..k−1) and fed the episode after it;
OfuRl's counters have σ = 0 (exact sums). With T1, T2 the two prefixes:

* regulariser (changing regularisers, §III-A): V = T1 + ηI with η = λ + 2Λ, where λ is the base ridge
  (``regularizer``: the paper's 0 for Private-OFU-RL, 1 for OFU-RL; see *Constants* below) and Λ the
  high-probability bound on the operator norm of B1's prefix noise
  (:func:`~dpkit.accountant.tree.symmetric_noise_norm_bound` with m = max p-sums per released prefix,
  failure α_N/K per episode). With σ1 = 0, Λ = 0 and η = λ, which must then be > 0.
  So Assumption 2 holds with λ_min = λ + Λ, λ_max = λ + 3Λ and ν = L̄/√λ_min, L̄ the χ² bound
  σ2√m·sqrt(D + 2√(Dx) + 2x) (D = n(n+d), x = ln(K/α_L)) on ‖B2's prefix noise‖_F;
* estimate Θ̂ = V⁻¹T2; confidence ellipsoid {Θ : ‖V^{1/2}(Θ − Θ̂)‖_F <= β_k} (:class:`Ellipsoid`) with
  β_k = R·sqrt(2 ln(1/α_w) + n·(ln det V − (n+d) ln λ_min)) + √λ_max·S + ν (:func:`confidence_radius`;
  R = C_w, S = ‖Θ*‖_F bound = 1). ln det V − (n+d) ln λ_min upper-bounds the paper's
  ln det(I + Z_kᵀZ_k/λ_min), which is not public, on the event ‖N_k‖ <= Λ (then V ⪰ Z_kᵀZ_k + λ_min I);
  with σ = 0 the two are equal. The paper's own radius reads the unreleased Z_kᵀZ_k, which its privacy proof
  does not account for (the declaration's ``unaccounted-data-dependent-quantity`` flag); this one is a
  post-processing of the released T1. The failure budget α is split: α_w = α when no counter adds noise,
  otherwise α/2 to the self-normalised bound and α/2 shared by the noisy counters' bounds (the paper
  spends α/2 on each of three events, 3α/2 in all);
* optimism: an approximate argmin of J*_1(Θ, x0) over the ellipsoid ∩ {‖Θ‖_F <= S} (:func:`optimistic_theta`);
* play u_h = clip(K_h(Θ̃) x_h, γ) (the system clips); feed the counters with x clipped to the unit
  ball and u to γ, which is what the sensitivities assume.

:func:`run_lq` runs an agent against :class:`~dpkit.algorithms.envs.lq_users.LQUsers`; :func:`make_agent` builds one
by name. With σ = 0 (both releases) and the same ``regularizer`` :class:`PrivateOfuRl` plays exactly the
controls of :class:`OfuRl` for the same rng.

**Constants** (the agent factory's keyword options; their defaults are the paper's, and
``make_agent(..., preset="tuned")`` applies :data:`TUNED`, what dpkit ran before the defaults were made the
paper's — explicit options override a preset):

* ``regularizer`` λ. Private-OFU-RL (§IV-B, proof of Thm 3): "By construction, we have the regularizer
  H_k = N_k + ηI. Setting η = 2Λ, we ensure that H_k is p.d." — no base ridge: λ = 0 (:data:`PRIVATE_REGULARIZER`).
  OFU-RL (§III-A): "when H_k = λI, we get back the standard estimate of [14]" — the paper states no value
  of λ; the algorithm needs λ > 0 (V = Z_kᵀZ_k + λI must be invertible at k = 1), and λ = 1, the
  unit ridge, is the default (:data:`REGULARIZER`). Tuned: λ = 1 for both (the private agent's ridge
  on top of 2Λ).
* ``theta_bound`` S = 1: stated, Assumption 1(a) "‖Θ‖_F ≤ 1" (and β_k's "+ √λ_max" is √λ_max·S with S = 1).
* ``noise_scale`` R = C_w: stated, Lemma 1 "β_k(α) := C_w sqrt(2 ln(2/α) + n ln det(I + λ_min⁻¹ Z_kᵀZ_k))
  + √λ_max + ν".
* ``alpha`` α = 0.05: an input of Algorithm 1 ("confidence level α ∈ (0, 1]"), which the paper leaves to the user.
* ``candidates`` (32), ``refine_rounds`` (10), ``line_search`` (8): the paper's step 5 is the exact
  "find Θ̃_k ∈ argmin_{Θ ∈ C_k(α) ∩ S} J*_1(Θ, x_{k,1})" and states no optimiser; these are the effort of
  dpkit's approximate search (:func:`optimistic_theta`), the same in both presets (no setting of them
  is exact).

**Regret** (:func:`run_lq`) is that of the policy played, u_h = clip(K_h x_h, γ): the paper's (6) with π_k
the clipped policy. (The paper's step 7 plays K_h x_h; dpkit's system clips it to γ, which keeps the states
in the unit ball that Assumption 1 and the sensitivities need, see :mod:`dpkit.algorithms.envs.lq`.) The
clipped policy's expected cost has no closed form: the figure is the exact regret of the linear policy plus
the clip's effect on the user's own noise, exact when nothing was clipped (:func:`run_lq`).

**Runs at once.** An agent built with a sequence of R Generators (one per run) is R independent agents simulated
together: its counters, ellipsoids, optimistic search (:func:`~.ellipsoid.optimistic_thetas`) and gains carry a
leading run axis, and run i draws from its own Generator exactly what the agent of that Generator alone draws. The
agent of one Generator is the batch of one. The audit's :func:`observe_batch` plays an audit's runs so.

The package holds the declaration (:mod:`.declaration`), the confidence ellipsoid and optimistic choice
(:mod:`.ellipsoid`), the agents (:mod:`.agent`), the audit world and observers (:mod:`.audit`) and the registration
(:mod:`.registration`); everything is importable from here.
"""

from __future__ import annotations

from .agent import (
    OFU_AGENTS,
    PRESETS,
    PRIVATE_REGULARIZER,
    REGULARIZER,
    TUNED,
    OfuRl,
    PrivateOfuRl,
    make_agent,
    run_lq,
    run_lq_runs,
)
from .audit import audit_world, observe, observe_batch, one_run
from .declaration import ALGORITHM, PAPER, UNACCOUNTED_CODE, declare_privacy, paper_sigma
from .ellipsoid import Ellipsoid, OptimisticChoice, confidence_radius, optimistic_theta
from .registration import REGISTRATIONS

__all__ = [
    "ALGORITHM",
    "OFU_AGENTS",
    "PAPER",
    "UNACCOUNTED_CODE",
    "paper_sigma",
    "declare_privacy",
    "confidence_radius",
    "Ellipsoid",
    "OptimisticChoice",
    "optimistic_theta",
    "OfuRl",
    "PrivateOfuRl",
    "make_agent",
    "run_lq",
    "run_lq_runs",
    "REGULARIZER",
    "PRIVATE_REGULARIZER",
    "TUNED",
    "PRESETS",
    "REGISTRATIONS",
    "audit_world",
    "observe",
    "observe_batch",
    "one_run",
]
