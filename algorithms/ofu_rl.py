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

:func:`run_lq` runs an agent against :class:`~dpkit.algorithms.envs.lq.LQUsers`; :func:`make_agent` builds one
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
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

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

from .envs.lq import LQSystem, LQUsers, clip_norm, optimal_cost_from_riccati, riccati_unchecked
from .episodes import Plan, Run, resolve_sigmas
from .observers import ObservedRun, OneRun, OneRunView
from .spec import AlgorithmSpec, AuditSpec, ReportSpec

__all__ = [
    "ALGORITHM",
    "AGENT_NAMES",
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
    "REGULARIZER",
    "PRIVATE_REGULARIZER",
    "TUNED",
    "PRESETS",
]

ALGORITHM = "private-ofu-rl"
PAPER = "Chowdhury, Zhou, Shroff — Adaptive Control of Differentially Private LQ Systems (seed 003)"


#: The flag of a quantity computed from the private data and used without accounting (here: β_k's log-det).
UNACCOUNTED_CODE = "unaccounted-data-dependent-quantity"


def paper_sigma(sensitivity: float, episodes: int, epsilon: float, delta: float) -> float:
    """σ = sqrt(8 m Δ² ln(2/δ))/ε with the paper's m = ⌈log2 K⌉ (Theorem 2's choice)."""
    sensitivity = check_positive("sensitivity", sensitivity)
    k = check_count("episodes", episodes)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    return sensitivity * math.sqrt(8.0 * paper_depth(k) * math.log(2.0 / delta)) / epsilon


@cached_declaration
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


# ------------------------------------------------------------------------------------------
# Confidence ellipsoid and the optimistic choice
# ------------------------------------------------------------------------------------------

AGENT_NAMES: tuple[str, ...] = ("ofu-rl", "private-ofu-rl")
_SEED_BOUND = 2**63

#: λ of OFU-RL's regulariser H_k = λI. The paper states none ("when H_k = λI, we get back the standard
#: estimate of [14]", §III-A); the algorithm needs λ > 0, and 1 is the unit ridge.
REGULARIZER: float = 1.0
#: The base ridge λ of Private-OFU-RL: 0, the paper's η = 2Λ ("Setting η = 2Λ, we ensure that H_k is p.d.",
#: proof of Thm 3).
PRIVATE_REGULARIZER: float = 0.0
#: dpkit's tuned constants (``preset="tuned"``): a unit ridge under the private shift too (η = 1 + 2Λ), which
#: keeps V well conditioned when Λ is small; the optimiser's effort is the default's. With this preset the
#: agents play, bit for bit, the controls dpkit's agents played before the defaults became the paper's.
TUNED: Mapping[str, Any] = MappingProxyType(
    {"regularizer": 1.0, "candidates": 32, "refine_rounds": 10, "line_search": 8}
)
#: The presets ``make_agent`` knows: ``"paper"`` (the defaults) and ``"tuned"`` (:data:`TUNED`).
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType({"paper": MappingProxyType({}), "tuned": TUNED})


def confidence_radius(
    logdet_ratio: float,
    *,
    state_dim: int,
    noise_scale: float,
    alpha: float,
    lambda_max: float,
    theta_bound: float = 1.0,
    nu: float = 0.0,
) -> float:
    """β = R·sqrt(2 ln(1/α) + n·logdet_ratio) + √λ_max·S + ν (the paper's Lemma 1, failure α for the first term).

    ``logdet_ratio`` is ln det(I + GᵀG/λ_min) (or an upper bound on it), ``noise_scale`` R the
    sub-Gaussian parameter of the noise vectors (C_w for ‖w‖ <= C_w, σ_w for N(0, σ_w² I)),
    ``theta_bound`` S >= ‖Θ*‖_F, ``nu`` >= ‖L‖_{H⁻¹}. The first term is the self-normalised bound for
    matrix martingales: ‖Σ z wᵀ‖²_{(G + λI)⁻¹} <= R²(2 ln(1/α) + n ln det(I + G/λ)) for all k w.p. >= 1 − α.
    """
    ratio = check_nonnegative("logdet_ratio", logdet_ratio)
    n = check_count("state_dim", state_dim)
    r = check_nonnegative("noise_scale", noise_scale)
    alpha = check_probability("alpha", alpha)
    lam = check_nonnegative("lambda_max", lambda_max)
    s = check_nonnegative("theta_bound", theta_bound)
    nu = check_nonnegative("nu", nu)
    return r * math.sqrt(2.0 * math.log(1.0 / alpha) + n * ratio) + math.sqrt(lam) * s + nu


def _frob(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(a * a, axis=(-2, -1)))


@dataclass(frozen=True)
class Ellipsoid:
    """The confidence set {Θ : ‖V^{1/2}(Θ − Θ̂)‖_F <= β}: ``centre`` Θ̂ (p×n), ``gram`` V (p×p, p.d.), ``radius`` β."""

    centre: np.ndarray
    gram: np.ndarray
    radius: float

    def __post_init__(self) -> None:
        c = np.array(self.centre, dtype=float)
        v = np.array(self.gram, dtype=float)
        if v.ndim != 2 or v.shape[0] != v.shape[1]:
            raise ValueError(f"gram must be a square matrix, got shape {v.shape}")
        if c.ndim != 2 or c.shape[0] != v.shape[0]:
            raise ValueError(f"centre must have shape ({v.shape[0]}, n), got {c.shape}")
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(v))):
            raise ValueError("centre and gram must be finite")
        if not np.allclose(v, v.T, rtol=1e-10, atol=1e-12):
            raise ValueError("gram must be symmetric")
        radius = check_nonnegative("radius", self.radius)
        vals, vecs = np.linalg.eigh(0.5 * (v + v.T))
        if vals[0] <= 0.0:
            raise ValueError(f"gram must be positive definite, got smallest eigenvalue {vals[0]!r}")
        object.__setattr__(self, "centre", c)
        object.__setattr__(self, "gram", v)
        object.__setattr__(self, "radius", radius)
        object.__setattr__(self, "_vals", vals)
        object.__setattr__(self, "_vecs", vecs)
        object.__setattr__(self, "_half", (vecs * np.sqrt(vals)) @ vecs.T)
        object.__setattr__(self, "_inv_half", (vecs / np.sqrt(vals)) @ vecs.T)

    def coordinates(self, theta: np.ndarray) -> np.ndarray:
        """Y = V^{1/2}(Θ − Θ̂), batched over leading axes."""
        return self._half @ (np.asarray(theta, dtype=float) - self.centre)  # type: ignore[attr-defined]

    def point(self, y: np.ndarray) -> np.ndarray:
        """Θ = Θ̂ + V^{-1/2} Y (inside the set iff ‖Y‖_F <= β), batched."""
        return self.centre + self._inv_half @ np.asarray(y, dtype=float)  # type: ignore[attr-defined]

    def distance(self, theta: np.ndarray) -> np.ndarray | float:
        """‖V^{1/2}(Θ − Θ̂)‖_F, batched."""
        out = _frob(self.coordinates(theta))
        return float(out) if np.ndim(out) == 0 else out

    def contains(self, theta: np.ndarray, rtol: float = 1e-9) -> np.ndarray | bool:
        """Whether Θ lies in the set (up to a relative slack ``rtol`` on β), batched."""
        out = np.asarray(self.distance(theta)) <= self.radius * (1.0 + rtol) + 1e-300
        return bool(out) if out.ndim == 0 else out

    def sample_boundary(self, count: int, rng: np.random.Generator | int) -> np.ndarray:
        """``count`` points uniform on the boundary in the Y coordinates (‖Y‖_F = β), shape (count, p, n)."""
        count = check_count("count", count)
        rng = check_rng("rng", rng)
        g = rng.standard_normal((count,) + self.centre.shape)
        return self.point(self.radius * g / _frob(g)[:, None, None])

    def min_norm_point(self) -> np.ndarray:
        """argmin ‖Θ‖_F over the set (the trust-region subproblem, by bisection on the multiplier).

        Θ = Θ̂ + Δ with Δ = −(I + μV)⁻¹Θ̂, μ >= 0 the smallest with ‖V^{1/2}Δ‖_F <= β (μ = 0: Θ = 0).
        """
        vals, vecs = self._vals, self._vecs  # type: ignore[attr-defined]
        c = vecs.T @ self.centre
        row = np.sum(c * c, axis=1)
        beta2 = self.radius**2

        def g(mu: float) -> float:
            return float(np.sum(vals * row / (1.0 + mu * vals) ** 2))

        if g(0.0) <= beta2:
            return np.zeros_like(self.centre)
        if self.radius == 0.0:
            return self.centre.copy()
        lo, hi = 0.0, math.sqrt(float(np.sum(row / vals)) / beta2)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if g(mid) <= beta2:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-15 * hi:
                break
        return self.centre + vecs @ (-c / (1.0 + hi * vals)[:, None])


@dataclass(frozen=True)
class OptimisticChoice:
    """What :func:`optimistic_theta` returns: Θ̃ and its J*, the anchor and its J*, whether the
    Frobenius constraint could be met (``constrained``), and how many Θ were evaluated."""

    theta: np.ndarray
    cost: float
    anchor: np.ndarray
    anchor_cost: float
    constrained: bool
    evaluated: int


def _toward(anchor: np.ndarray, thetas: np.ndarray, bound: float) -> np.ndarray:
    """Each Θ moved along the segment to ``anchor`` (‖anchor‖_F <= bound) until ‖Θ‖_F <= bound."""
    d = thetas - anchor
    a = np.sum(d * d, axis=(-2, -1))
    b = np.sum(anchor * d, axis=(-2, -1))
    c = float(np.sum(anchor * anchor)) - bound * bound
    disc = np.maximum(b * b - a * c, 0.0)
    safe = np.where(a > 0.0, a, 1.0)
    t = np.clip(np.where(a > 0.0, (-b + np.sqrt(disc)) / safe, 1.0), 0.0, 1.0)
    t = np.where(_frob(thetas) > bound, t, 1.0)
    return anchor + t[..., None, None] * d


def _clip_ball(ys: np.ndarray, radius: float) -> np.ndarray:
    norms = _frob(ys)
    return ys * np.where(norms > radius, radius / np.where(norms > 0.0, norms, 1.0), 1.0)[..., None, None]


def optimistic_theta(
    ellipsoid: Ellipsoid,
    objective: Callable[[np.ndarray], Any],
    rng: np.random.Generator | int,
    *,
    gradient: bool = False,
    theta_bound: float = 1.0,
    candidates: int = 32,
    refine_rounds: int = 10,
    line_search: int = 8,
) -> OptimisticChoice:
    """An approximate argmin of ``objective`` (J*_1(Θ, x0), batched over Θ of shape (c, p, n)) over
    F = ellipsoid ∩ {‖Θ‖_F <= S}. With ``gradient`` the objective returns ``(costs, gradients)``, the
    gradients ∇_Θ of shape (c, p, n).

    The exact argmin is non-convex; this is a stated search, in the coordinates Y = V^{1/2}(Θ − Θ̂)
    where the ellipsoid is the ball ‖Y‖_F <= β:

    1. anchor Θ_0: the centre Θ̂ if ‖Θ̂‖_F <= S; otherwise the last point inside the ball on the segment
       from the ellipsoid's minimum-norm point to Θ̂ (if that point has norm <= S, F is non-empty);
       if even it lies outside the ball, F is empty (the true Θ is then not in the ellipsoid either)
       and the search runs over the ellipsoid alone with Θ_0 = Θ̂ (``constrained=False``). Every point
       below is brought into F by moving it along its segment to Θ_0 until ‖Θ‖_F <= S (F is convex);
    2. multi-start: ``candidates`` points uniform on the boundary ‖Y‖_F = β; the best of them and Θ_0
       is kept;
    3. ``refine_rounds`` rounds of descent from the best point: with ``gradient``, projected
       gradient in Y (direction −V^{-1/2}∇_Θ J*, ``line_search`` step sizes
       β, β/2, …, evaluated together, Y projected onto ‖Y‖_F <= β), stopping when no step improves;
       without it, ``candidates`` random perturbations of size step·β per round (step 0.3, halved after
       a round without improvement).

    **Guarantee.** The returned Θ̃ lies in F (in the ellipsoid when F is empty), up to rounding, and
    J*(Θ̃) <= J*(Θ_0) and <= J* of every candidate evaluated; in particular J*(Θ̃) <= J*(Θ̂) whenever
    ‖Θ̂‖_F <= S. It is not certified to be the global minimum, so the paper's optimism
    J*(Θ̃) <= J*(Θ*) is not guaranteed.
    """
    if not isinstance(ellipsoid, Ellipsoid):
        raise ValueError(f"ellipsoid must be an Ellipsoid, got {type(ellipsoid).__name__}")
    rng = check_rng("rng", rng)
    s = check_positive("theta_bound", theta_bound)
    count = check_count("candidates", candidates)
    rounds = check_index("refine_rounds", refine_rounds)
    steps = check_count("line_search", line_search)
    beta = ellipsoid.radius
    centre = ellipsoid.centre
    constrained = True
    if float(_frob(centre)) <= s:
        anchor = centre.copy()
    else:
        low = ellipsoid.min_norm_point()
        if float(_frob(low)) <= s * (1.0 + 1e-12):
            anchor = _toward(low, centre[None], s)[0] if float(_frob(low)) < s else low
        else:
            anchor, constrained = centre.copy(), False

    def feasible(ys: np.ndarray) -> np.ndarray:
        thetas = ellipsoid.point(_clip_ball(ys, beta))
        return _toward(anchor, thetas, s) if constrained else thetas

    def evaluate(thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        out = objective(thetas)
        c, g = (out[0], np.asarray(out[1], dtype=float)) if gradient else (out, None)
        c = np.asarray(c, dtype=float)
        if c.shape != thetas.shape[:1]:
            raise ValueError(f"objective must return one cost per Θ, shape {thetas.shape[:1]}, got {c.shape}")
        if g is not None and g.shape != thetas.shape:
            raise ValueError(f"objective must return one gradient per Θ, shape {thetas.shape}, got {g.shape}")
        return np.where(np.isfinite(c), c, np.inf), g

    shape = centre.shape
    g = rng.standard_normal((count,) + shape)
    first = np.concatenate([anchor[None], feasible(beta * g / _frob(g)[:, None, None])])
    costs, grads = evaluate(first)
    anchor_cost = float(costs[0])
    i = int(np.argmin(costs))
    best, best_cost = first[i], float(costs[i])
    best_grad = None if grads is None else grads[i]
    evaluated = first.shape[0]
    scales = beta * 0.5 ** np.arange(steps)
    step = 0.3
    for _ in range(rounds):
        if beta == 0.0:
            break
        y = ellipsoid.coordinates(best)
        if best_grad is not None:
            direction = -(ellipsoid._inv_half @ best_grad)  # type: ignore[attr-defined]
            norm = float(_frob(direction))
            if not np.isfinite(norm) or norm == 0.0:
                break
            ys = y + scales[:, None, None] * (direction / norm)
        else:
            g = rng.standard_normal((count,) + shape)
            ys = y + step * beta * g / _frob(g)[:, None, None]
        thetas = feasible(ys)
        c, gr = evaluate(thetas)
        evaluated += thetas.shape[0]
        j = int(np.argmin(c))
        if c[j] < best_cost:
            best, best_cost = thetas[j], float(c[j])
            best_grad = None if gr is None else gr[j]
        elif gradient:
            break
        else:
            step *= 0.5
    return OptimisticChoice(best.copy(), best_cost, anchor, anchor_cost, constrained, evaluated)


# ------------------------------------------------------------------------------------------
# The agents
# ------------------------------------------------------------------------------------------


class OfuRl:
    """OFU-RL for episodic LQ control (seed 003, §III-A), with exact statistics (σ = 0 counters).

    The agent reads only what the paper assumes known: Q, R, H, x0, C_w, γ and the noise covariance W
    (needed by J*, the paper's (5)); never A or B. Each episode: Θ̂, β_k and the ellipsoid from the
    counters' prefixes, Θ̃ = :func:`optimistic_theta`, gains K_h(Θ̃) by :func:`~dpkit.algorithms.envs.lq.riccati`
    (the plan's ``policy``, shape (H, d, n)); the plan's ``released`` are the prefixes T1, T2 it used.

    Parameters
    ----------
    system:
        The :class:`~dpkit.algorithms.envs.lq.LQSystem` (only its known parts are read).
    episodes:
        K, the number of episodes (sizes the counters).
    rng:
        Generator or seed; three child streams are drawn from it (B1's noise, B2's noise, the optimiser).
    regularizer:
        λ >= 0, the base ridge; the shift is η = λ + 2Λ (Λ = 0 without noise, then λ must be > 0). Default
        :data:`REGULARIZER` = 1 (the paper states no λ); :class:`PrivateOfuRl`'s is the paper's 0.
    alpha:
        Failure probability of the confidence set (all episodes together). Default 0.05.
    theta_bound:
        S >= ‖Θ*‖_F (Assumption 1(a): 1), used in β and in the optimistic search's constraint.
    noise_scale:
        R, the sub-Gaussian parameter of w (default C_w, valid for any ‖w‖ <= C_w).
    candidates, refine_rounds, line_search:
        The optimistic search's effort (:func:`optimistic_theta`, with the exact gradient of J*). Defaults 32, 10
        and 8 (the paper's argmin is exact and states no optimiser).
    """

    name: str = "ofu-rl"

    def __init__(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int,
        *,
        regularizer: float = REGULARIZER,
        alpha: float = 0.05,
        theta_bound: float = 1.0,
        noise_scale: float | None = None,
        candidates: int = 32,
        refine_rounds: int = 10,
        line_search: int = 8,
    ) -> None:
        self._setup(
            system,
            episodes,
            rng,
            0.0,
            0.0,
            regularizer,
            alpha,
            theta_bound,
            noise_scale,
            candidates,
            refine_rounds,
            line_search,
        )
        self.sigmas: dict[str, float] = {}
        self.declaration: PrivacyDeclaration | None = None

    def _setup(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int,
        sigma1: float,
        sigma2: float,
        regularizer: float,
        alpha: float,
        theta_bound: float,
        noise_scale: float | None,
        candidates: int,
        refine_rounds: int,
        line_search: int = 8,
    ) -> None:
        if not isinstance(system, LQSystem):
            raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
        k_ = check_count("episodes", episodes)
        rng = check_rng("rng", rng)
        lam = check_nonnegative("regularizer", regularizer)
        alpha = check_probability("alpha", alpha)
        self.theta_bound: float = check_positive("theta_bound", theta_bound)
        self.noise_scale: float = (
            system.noise_bound if noise_scale is None else check_positive("noise_scale", noise_scale)
        )
        self.candidates: int = check_count("candidates", candidates)
        self.refine_rounds: int = check_index("refine_rounds", refine_rounds)
        self.line_search: int = check_count("line_search", line_search)
        sigma1, sigma2 = check_nonnegative("sigma B1", sigma1), check_nonnegative("sigma B2", sigma2)
        self.episodes, self.horizon = k_, system.horizon
        self.state_dim, self.control_dim, self.gamma = system.state_dim, system.control_dim, system.gamma
        n, p = system.state_dim, system.state_dim + system.control_dim
        self._q, self._r, self._x0 = system.Q.copy(), system.R.copy(), system.x0.copy()
        self._w = system.noise_covariance
        seeds = rng.integers(0, _SEED_BOUND, size=3, dtype=np.int64)
        self._b1 = BinaryCounter((p, p), sigma1, np.random.default_rng(int(seeds[0])), symmetric=True, steps=k_)
        self._b2 = BinaryCounter((p, n), sigma2, np.random.default_rng(int(seeds[1])), steps=k_)
        self._opt_rng = np.random.default_rng(int(seeds[2]))
        # failure budget: α to the self-normalised bound when there is no noise, else α/2 and α/2 shared
        noisy = int(sigma1 > 0.0) + int(sigma2 > 0.0)
        self.alpha = alpha
        self.alpha_self_normalised = alpha / 2.0 if noisy else alpha
        each = alpha / (2.0 * noisy) if noisy else 0.0
        m = max_psums_per_prefix(k_, schedule="before-episode")
        self.psums_per_prefix: int = m
        big_lambda = (
            symmetric_noise_norm_bound(sigma1, psums=m, dim=p, failure_probability=each / k_)
            if sigma1 > 0.0 and m > 0
            else 0.0
        )
        cross = 0.0
        if sigma2 > 0.0 and m > 0:
            dof, x = n * p, math.log(k_ / each)
            cross = sigma2 * math.sqrt(m) * math.sqrt(dof + 2.0 * math.sqrt(dof * x) + 2.0 * x)
        self.noise_norm_bound: float = big_lambda  # Λ
        self.cross_noise_bound: float = cross  # bound on ‖L_k‖_F
        self.regularizer: float = lam
        self.shift: float = lam + 2.0 * big_lambda  # η
        self.lambda_min: float = lam + big_lambda
        self.lambda_max: float = lam + 3.0 * big_lambda
        if self.lambda_min <= 0.0:
            raise ValueError(f"regularizer must be > 0 when the Gram counter adds no noise, got {regularizer!r}")
        self.nu: float = cross / math.sqrt(self.lambda_min)
        self.last_choice: OptimisticChoice | None = None
        self.last_ellipsoid: Ellipsoid | None = None

    # ------------------------------------------------------------------ J* of many Θ at once

    def optimal_costs(self, thetas: np.ndarray) -> np.ndarray:
        """J*_1(Θ, x0) for Θ of shape (..., n + d, n), under the known Q, R, W."""
        n = self.state_dim
        t = np.asarray(thetas, dtype=float)
        a, b = np.swapaxes(t[..., :n, :], -1, -2), np.swapaxes(t[..., n:, :], -1, -2)
        p, _ = riccati_unchecked(a, b, self._q, self._r, self.horizon)
        return optimal_cost_from_riccati(p, self._x0, self._w)

    def optimal_costs_and_gradients(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """J*_1(Θ, x0) and ∇_Θ J*_1(Θ, x0) for Θ of shape (..., n + d, n) (gradients of the same shape).

        Envelope theorem: the gradient of the expected cost at the optimal gains held fixed. With
        F_h = A + BK_h and second moments X_0 = x0x0ᵀ, X_{h+1} = F_hX_hF_hᵀ + W:
        ∂J*/∂A = Σ_h 2P_{h+1}F_hX_h and ∂J*/∂B = Σ_h 2P_{h+1}F_hX_hK_hᵀ; Θ = [A, B]ᵀ.
        """
        n = self.state_dim
        t = np.asarray(thetas, dtype=float)
        a, b = np.swapaxes(t[..., :n, :], -1, -2), np.swapaxes(t[..., n:, :], -1, -2)
        p, k = riccati_unchecked(a, b, self._q, self._r, self.horizon)
        x = np.broadcast_to(np.outer(self._x0, self._x0), a.shape)
        grad_a = np.zeros_like(a)
        grad_b = np.zeros_like(b)
        for h in range(self.horizon):
            kh = k[..., h, :, :]
            f = a + b @ kh
            pfx = p[..., h + 1, :, :] @ f @ x
            grad_a += pfx
            grad_b += pfx @ np.swapaxes(kh, -1, -2)
            x = f @ x @ np.swapaxes(f, -1, -2) + self._w
        grads = 2.0 * np.concatenate([np.swapaxes(grad_a, -1, -2), np.swapaxes(grad_b, -1, -2)], axis=-2)
        return optimal_cost_from_riccati(p, self._x0, self._w), grads

    def gains(self, theta: np.ndarray) -> np.ndarray:
        """K_h(Θ), shape (H, d, n)."""
        n = self.state_dim
        t = np.asarray(theta, dtype=float)
        return riccati_unchecked(t[:n].T, t[n:].T, self._q, self._r, self.horizon)[1]

    def ellipsoid(self) -> Ellipsoid:
        """The confidence set of the next episode from the counters' current prefixes (draws no noise)."""
        return self._ellipsoid(self._b1.prefix(), self._b2.prefix())

    def _ellipsoid(self, t1: np.ndarray, t2: np.ndarray) -> Ellipsoid:
        p = t1.shape[0]
        v = t1 + self.shift * np.eye(p)
        vals, vecs = np.linalg.eigh(v)
        if vals[0] < self.lambda_min:  # only when ‖N_k‖ > Λ (or rounding): floor at λ_min, a post-processing
            vals = np.maximum(vals, self.lambda_min)
            v = (vecs * vals) @ vecs.T
            v = 0.5 * (v + v.T)
        centre = np.linalg.solve(v, t2)
        ratio = max(float(np.sum(np.log(vals)) - p * math.log(self.lambda_min)), 0.0)
        beta = confidence_radius(
            ratio,
            state_dim=self.state_dim,
            noise_scale=self.noise_scale,
            alpha=self.alpha_self_normalised,
            lambda_max=self.lambda_max,
            theta_bound=self.theta_bound,
            nu=self.nu,
        )
        return Ellipsoid(centre, v, beta)

    # ------------------------------------------------------------------ the episodic protocol

    def plan(self, k: int) -> Plan:
        """The gains for episode ``k`` (0-based), and the released prefixes B1, B2 (episodes 0..k−1) used."""
        k = check_index("k", k)
        if k != self._b1.t:
            raise ValueError(f"plan({k}) called after {self._b1.t} episodes were learnt from")
        t1, t2 = self._b1.prefix(), self._b2.prefix()
        ell = self._ellipsoid(t1, t2)
        choice = optimistic_theta(
            ell,
            self.optimal_costs_and_gradients,
            self._opt_rng,
            gradient=True,
            theta_bound=self.theta_bound,
            candidates=self.candidates,
            refine_rounds=self.refine_rounds,
            line_search=self.line_search,
        )
        self.last_ellipsoid, self.last_choice = ell, choice
        return Plan(policy=self.gains(choice.theta), released={"B1": t1, "B2": t2})

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Feed episode ``k``'s Σ z zᵀ and Σ z x′ᵀ (x clipped to the unit ball, u to γ) to the counters.

        Nothing is released after the episode (the releases are the prefixes of the next plan).
        """
        k = check_index("k", k)
        if k != self._b1.t:
            raise ValueError(f"update({k}) called after {self._b1.t} episodes were learnt from")
        items = self.items(states, actions)
        self._b1.add(items["B1"])
        self._b2.add(items["B2"])
        return {}

    def items(self, states: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        """What an episode adds to the counters: {"B1": Σ_h z zᵀ, "B2": Σ_h z x_{h+1}ᵀ}, z = [x; u], with x
        clipped to the unit ball and u to γ (what the sensitivities assume). Changes nothing."""
        h_, n, d = self.horizon, self.state_dim, self.control_dim
        x = np.asarray(states, dtype=float)
        u = np.asarray(actions, dtype=float)
        if x.shape != (h_ + 1, n) or u.shape != (h_, d):
            raise ValueError(
                f"states must have shape ({h_ + 1}, {n}) and actions ({h_}, {d}), got {x.shape} and {u.shape}"
            )
        x = clip_norm(x, 1.0)
        z = np.hstack([x[:h_], clip_norm(u, self.gamma)])
        return {"B1": z.T @ z, "B2": z.T @ x[1:]}


class PrivateOfuRl(OfuRl):
    """Private-OFU-RL (seed 003, Algorithm 1): :class:`OfuRl` whose counters add Gaussian noise.

    σ of B1 (symmetric noise) and B2 from ``resolve_sigmas(declare_privacy(K, H, ε, δ, γ), sigma,
    relation=relation, method=method)``: ``"paper"`` (the paper's σ_i² = 8mΔ_i² ln(2/δ)/ε²), ``"tight"``
    (the ledger's σ under ``relation``), a number or a mapping {"B1": σ1, "B2": σ2}. The shift is
    η = λ + 2Λ (the paper's 2Λ plus the base ridge ``regularizer``, by default the paper's
    :data:`PRIVATE_REGULARIZER` = 0; give λ > 0 for σ1 = 0, where Λ = 0).
    ``.sigmas`` and ``.declaration`` record what was used. Other options as in :class:`OfuRl`.
    """

    name: str = "private-ofu-rl"

    def __init__(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int,
        *,
        epsilon: float,
        delta: float,
        sigma: str | float | Mapping[str, float] = "paper",
        relation: str | None = None,
        method: str = "exact",
        regularizer: float = PRIVATE_REGULARIZER,
        alpha: float = 0.05,
        theta_bound: float = 1.0,
        noise_scale: float | None = None,
        candidates: int = 32,
        refine_rounds: int = 10,
        line_search: int = 8,
    ) -> None:
        if not isinstance(system, LQSystem):
            raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
        declaration = declare_privacy(episodes, system.horizon, epsilon, delta, system.gamma)
        sigmas = resolve_sigmas(declaration, sigma, relation=relation, method=method)
        self._setup(
            system,
            episodes,
            rng,
            sigmas["B1"],
            sigmas["B2"],
            regularizer,
            alpha,
            theta_bound,
            noise_scale,
            candidates,
            refine_rounds,
            line_search,
        )
        self.sigmas = dict(sigmas)
        self.declaration = declaration


_OPTIONS = ("regularizer", "alpha", "theta_bound", "noise_scale", "candidates", "refine_rounds", "line_search")
_PRIVATE_OPTIONS = _OPTIONS + ("relation", "method")


def make_agent(
    name: str,
    system: LQSystem,
    episodes: int,
    rng: np.random.Generator | int,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    preset: str = "paper",
    **options: Any,
) -> OfuRl:
    """An agent by name: ``"ofu-rl"`` or ``"private-ofu-rl"``.

    The private one needs ``epsilon`` and ``delta``; the non-private one adds no noise, ignores
    ``epsilon``/``delta`` and takes no ``sigma`` but ``"paper"`` (the default). ``options`` go to the
    constructor: ``regularizer`` (the paper's: 1 for OFU-RL, which states none, 0 for Private-OFU-RL),
    ``alpha`` (0.05), ``theta_bound`` (1), ``noise_scale`` (C_w), ``candidates`` (32), ``refine_rounds`` (10),
    ``line_search`` (8); private also ``relation`` and ``method``. ``preset``: ``"paper"`` (these defaults) or
    ``"tuned"`` (:data:`TUNED` under the explicit ``options``).
    """
    name = check_choice("name", name, AGENT_NAMES)
    preset = check_choice("preset", preset, tuple(PRESETS))
    allowed = _PRIVATE_OPTIONS if name == "private-ofu-rl" else _OPTIONS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"{name} does not take option(s) {', '.join(unknown)}; it takes {', '.join(allowed)}")
    options = {**PRESETS[preset], **options}
    if name == "private-ofu-rl":
        if epsilon is None or delta is None:
            raise ValueError(f"{name} is private: give epsilon and delta, got epsilon = {epsilon!r}, delta = {delta!r}")
        return PrivateOfuRl(system, episodes, rng, epsilon=epsilon, delta=delta, sigma=sigma, **options)
    if not (isinstance(sigma, str) and sigma == "paper"):
        raise ValueError(f"{name} is not private and adds no noise: sigma must be left at 'paper', got {sigma!r}")
    return OfuRl(system, episodes, rng, **options)


def run_lq(
    agent: OfuRl,
    system: LQSystem,
    users: LQUsers,
    rng: np.random.Generator | int,
    *,
    record: bool = False,
    sigmas: Mapping[str, float] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Run:
    """Run ``agent`` on ``system`` for one episode per user of ``users``.

    Episode k: ``agent.plan(k)`` gives the gains K_h; the system plays u_h = clip(K_h x_h, γ) against
    user k's noise; ``agent.update`` learns from the trajectory. ``Run.states`` (K, H + 1, n),
    ``actions`` (K, H, d) (the clipped controls played), ``rewards`` = −costs (K, H), ``returns`` their
    sums. ``regret[k]`` is the regret of the policy played, π_k(x) = clip(K_h x, γ) (the paper's (6)):

        regret[k] = [J^{K}(x0) − J*(x0)] + [C_k(clip(K x)) − C_k(K x)],

    the exact expected regret of the linear policy u = K_h x (:meth:`~dpkit.algorithms.envs.lq.LQSystem.regret`,
    floored at 0 against rounding), plus what the clip changed on user k's own noise: the cost C_k of the
    controls played minus the cost the unclipped linear policy would have paid against the same noise
    (:meth:`~dpkit.algorithms.envs.lq.LQSystem.rollout` with ``clip=False``). Its expectation over the user's
    noise is J^{π_k}(x0) − J*(x0) exactly; it is exact (the second term is 0.0) when no control of episode k
    was clipped, and may be negative when clipping helped on this user's noise. The expected cost of the
    clipped policy has no closed form; this is its control-variate estimate, whose only randomness is the
    clip's effect. ``rng`` is checked and unused (the policies are deterministic; the
    users' randomness is in ``users``). With ``record`` the releases of every episode are stacked
    (``B1`` (K, p, p), ``B2`` (K, p, n); episode 1's are the empty prefix, zeros). ``sigmas`` defaults to
    ``agent.sigmas``; ``progress`` is called with 1 after each episode.
    """
    check_rng("rng", rng)
    if not isinstance(system, LQSystem):
        raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
    if not isinstance(users, LQUsers):
        raise ValueError(f"users must be LQUsers, got {type(users).__name__}")
    if users.horizon != system.horizon or users.state_dim != system.state_dim:
        raise ValueError(
            f"users have (horizon, state_dim) = ({users.horizon}, {users.state_dim}) but the system has "
            f"({system.horizon}, {system.state_dim})"
        )
    if users.noise_bound > system.noise_bound * (1.0 + 1e-12):
        raise ValueError(f"users' noise bound {users.noise_bound!r} exceeds the system's C_w = {system.noise_bound!r}")
    k_, h_, n, d = len(users), system.horizon, system.state_dim, system.control_dim
    states = np.empty((k_, h_ + 1, n))
    actions = np.empty((k_, h_, d))
    costs = np.empty((k_, h_))
    gains = np.empty((k_, h_, d, n))
    clipping = np.zeros(k_)  # C_k(played) − C_k(unclipped linear policy), same noise
    logs: dict[str, list[np.ndarray]] = {}
    for k in range(k_):
        plan = agent.plan(k)
        policy = np.asarray(plan.policy, dtype=float)
        if policy.shape != (h_, d, n):
            raise ValueError(f"the agent's policy must be gains of shape ({h_}, {d}, {n}), got {policy.shape}")
        gains[k] = policy
        states[k], actions[k], costs[k] = system.rollout(policy, users.noise[k])
        _, linear_actions, linear_costs = system.rollout(policy, users.noise[k], clip=False)
        if not np.array_equal(linear_actions, actions[k]):  # a control was clipped: the played policy differs
            clipping[k] = float(costs[k].sum()) - float(linear_costs.sum())
        released = agent.update(k, states[k], actions[k], -costs[k])
        if record:
            for log in (plan.released, released):
                for key, value in log.items():
                    logs.setdefault(key, []).append(np.asarray(value))
        if progress is not None:
            progress(1)
    releases = {key: np.stack(values) for key, values in logs.items()}
    for key, values in releases.items():
        if values.shape[0] != k_:
            raise ValueError(f"the agent released {key!r} in {values.shape[0]} of {k_} episodes")
    regret = np.maximum(np.asarray(system.regret(gains)), 0.0) + clipping
    return Run(
        algorithm=agent.name,
        env=system.name,
        regret=regret,
        returns=-costs.sum(axis=1),
        states=states,
        actions=actions,
        rewards=-costs,
        sigmas=dict(getattr(agent, "sigmas", {}) if sigmas is None else sigmas),
        releases=releases,
    )


# -- audit: canaries and observers (dpkit.audits.rl) ------------------------------------------------


def audit_world(setting: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The audit's LQ system and canaries: weak dynamics and noise near the whole state budget
    (Assumption 1: C_A + γC_B + C_w <= 1, C_w = 0.9), and two canaries whose states sit on the unit sphere from
    the first step (each user's x_{k,1} is her own, Assumption 1(c)), pushed there by noise at twice the bound C_w —
    beyond the unit ball, so only the algorithm's clipping of x keeps its counters' items at their declared Δ.
    B1 and B2 cannot both reach their Δ with one pair (:class:`~dpkit.accountant.declarations.JointRelease`):
    at the claim's σ the canaries are the pair that reaches the joint bound — orthogonal trajectories (e₁ against
    e₂: B1 and B2 each differ by √2 of one trajectory's term) when B1 weighs more (1/σ1² · a² >= 1/σ2² · b²),
    else one trajectory against itself with alternating signs (e₁ against ±e₁: B1 the same, B2 twice one term)."""
    from .envs.lq import LQUser, LQUsers, random_lq

    h_ = setting.horizon
    if setting.state_dim < 2:
        raise ValueError(
            f"the LQ audit needs state_dim >= 2 (its canaries push along e1 and e2), got {setting.state_dim}"
        )
    system = random_lq(
        setting.state_dim,
        setting.control_dim,
        h_,
        np.random.default_rng(setting.env_seed),
        a_norm=0.05,
        b_norm=0.5,
        noise_bound=0.9,
        x0=np.zeros(setting.state_dim),
        name="lq-audit",
    )
    users = LQUsers.draw(setting.episodes, system, np.random.default_rng(setting.users_seed))
    e1, e2 = np.eye(setting.state_dim)[:2]
    beyond = 2.0 * system.noise_bound
    if _orthogonal_canaries(setting, float(system.gamma)):
        first = (LQUser.canary(np.tile(e1, (h_, 1)), beyond, x1=e1), LQUser.canary(np.tile(e2, (h_, 1)), beyond, x1=e2))
    else:
        signs = (-1.0) ** np.arange(1, h_ + 1)  # x′_{h+1} = (−1)^h e₁: alternating against canary 0's constant e₁
        first = (LQUser.canary(np.tile(e1, (h_, 1)), beyond, x1=e1), LQUser.canary(signs[:, None] * e1, beyond, x1=e1))
    return system, users, first


def _orthogonal_canaries(setting: Any, gamma: float) -> bool:
    """Whether orthogonal canaries reach more of the joint bound than alternating ones at the claim's σ: with
    w = 1/σ², orthogonal trajectories give 2H²(w1 a² + w2 b²), alternating ones 4H²w2 b²
    (a² = 1 + γ² + γ⁴, b² = 1 + γ²)."""
    from .episodes import resolve_sigmas

    declaration = declare_privacy(setting.episodes, setting.horizon, setting.epsilon, setting.delta, gamma)
    sigmas = resolve_sigmas(declaration, setting.claim_allocation or "tight", relation=setting.relation)
    w1, w2 = 1.0 / float(np.max(sigmas["B1"])) ** 2, 1.0 / float(np.max(sigmas["B2"])) ** 2
    a2, b2 = 1.0 + gamma**2 + gamma**4, 1.0 + gamma**2
    return w1 * a2 + w2 * b2 >= 2.0 * w2 * b2


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """``billboard``: every released noisy prefix of B1 and B2 (p-sums recovered and whitened);
    ``actions``: the controls of all later users (black-box)."""
    from .observers import CounterLog, Trace

    s = run.setting
    system, users, canaries = run.world
    j = run.index
    noise = users.noise.copy()
    noise[j] = canaries[run.which].noise
    other = canaries[1 - run.which]
    agent = run.make_agent(rng, system)
    log = CounterLog(("B1", "B2"), batched=False)
    trace = Trace()
    for k in range(s.episodes):
        plan = agent.plan(k)
        log.released(plan.released)
        start = canaries[run.which].x1 if k == j else None
        states, controls, _ = system.rollout(plan.policy, noise[k], x1=start)
        if run.observer == "actions" and k > j:
            trace.view.append(controls.ravel())
        theirs = agent.items(*system.rollout(plan.policy, other.noise, x1=other.x1)[:2]) if k == j else None
        log.episode(agent.items(states, controls), theirs, run.which)
        agent.update(k, states, controls, np.zeros(s.horizon))
    log.finish(trace, j, dict(agent.sigmas), run.claim_sigmas, {"B1": True, "B2": False}, run.sensitivities)
    return trace.row(run.white_box)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries (user k's process noise canary ``run.coins[k]``'s), scored from the
    billboard: every released prefix of B1 and B2, and both canaries' items under the controller each user was
    served (:func:`~dpkit.algorithms.observers.billboard_one_run_scores`)."""
    from .observers import CounterLog, billboard_one_run_scores, billboard_reach, counter_nodes

    if run.observer != "billboard":
        raise ValueError(f"one-run audits of {run.setting.algorithm} read the billboard, not {run.observer!r}")
    system, _, canaries = run.world
    agent = run.make_agent(rng, system)
    names = ("B1", "B2")
    log0, log1 = CounterLog(names, batched=False), CounterLog(names, batched=False)
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        log0.released(plan.released)
        rollouts = [system.rollout(plan.policy, canary.noise, x1=canary.x1) for canary in canaries]
        log0.episode(agent.items(*rollouts[0][:2]), None, 0)
        log1.episode(agent.items(*rollouts[1][:2]), None, 0)
        states, controls, _ = rollouts[int(coin)]
        agent.update(k, states, controls, np.zeros(run.setting.horizon))
        run.advance()
    prefixes = {n: np.stack(log0.prefixes[n]) for n in names}
    scores = billboard_one_run_scores(
        prefixes,
        {n: np.stack(log0.items[n]) for n in names},
        {n: np.stack(log1.items[n]) for n in names},
        dict(agent.sigmas),
        {"B1": True, "B2": False},
    )
    starts = counter_nodes(prefixes["B1"])[1]
    return OneRunView(scores, "billboard", billboard_reach(starts, len(starts), run.sensitivities, run.claim_sigmas))


def _declare(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(
        p["episodes"], p["horizon"], epsilon, delta, p["gamma"], schedule=p.get("schedule") or "before-episode"
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """γ: the control bound of the LQ system the regret runs face (drawn from ``env_seed``); H = 10 unless given."""
    from .envs.lq import random_lq

    system = random_lq(sizes.state_dim, sizes.control_dim, sizes.horizon or 10, np.random.default_rng(env_seed))
    return {"episodes": sizes.episodes, "horizon": system.horizon, "gamma": float(system.gamma)}


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`).
REGISTRATIONS = (
    AlgorithmSpec("ofu-rl", make_agent, environment="lq", summary="non-private OFU-RL (seed 003)"),
    AlgorithmSpec(
        name=ALGORITHM,
        entry_point=make_agent,
        environment="lq",
        summary="joint DP; 2 binary-tree counters (seed 003)",
        declaration=_declare,
        required=("episodes", "horizon", "gamma"),
        optional=("schedule",),
        ledger_parameters=_ledger_parameters,
        audit=AuditSpec(
            observers=("billboard", "actions"),
            white_box=("billboard",),
            world=audit_world,
            observe=observe,
            one_run=one_run,
            positions="dpkit.algorithms.observers:tree_positions",
            defaults={
                "horizon": 4,
                "episodes": 4,
                "epsilon": 16.0,
                # the tuned preset (λ = 1 under the shift 2Λ): the controls, hence the items, depend on λ
                "options": (("candidates", 8), ("preset", "tuned"), ("refine_rounds", 0)),
            },
            canaries=(
                "states on the unit sphere from the first step (each user's x_1 is her own), pushed by noise at twice "
                "the bound C_w — beyond the unit ball, which only the algorithm's clipping of x keeps at the declared "
                "Δ; the pair that reaches the joint bound of B1 and B2 at the claim's σ: orthogonal trajectories (e1 "
                "against e2) or one trajectory against itself with alternating signs (controls are clipped to γ by "
                "the system itself)"
            ),
        ),
        report=ReportSpec(
            assumptions=(
                "An LQ system under the paper's Assumption 1: ‖A‖ + γ‖B‖ + C_w <= 1, states in the unit ball and "
                "controls of norm at most γ.",
                "States are clipped to the unit ball and controls to γ before they are counted, which is what the "
                "sensitivities assume.",
                "Two binary-tree counters (B1 on z zᵀ with symmetric noise, B2 on z x′ᵀ), released at the start of "
                "each episode over the episodes before it.",
            ),
            sections=("tree",),
        ),
    ),
)
