"""LDP-UCRL-VTR (Liao, He, Gu: *Locally Differentially Private RL for Linear Mixture MDPs*; seeds 000/001).

Each user privatises her own 2H messages — the Gram updates ΔΛ_h = φφᵀ + W_h (symmetric noise) and the target
updates Δu_h = φ·V(s_{h+1}) + ξ_h, with V and φ clipped to the declared bounds — and the server plans UCRL-VTR's
optimistic Q from their sums, shifted against the noise. The module holds the paper's σ in its two readings
(:func:`paper_sigma`), the release declaration (:func:`declare_privacy`), the agent (:class:`LdpUcrlVtr`) and its
registration. The derivations (the readings, the shift, the bonus, what to expect) are on the documentation page
*The seed algorithms as implemented* (docs/explanation/seed-algorithms.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.declarations import DeclaredRelease, Flag, PrivacyDeclaration, cached_declaration
from dpkit.accountant.sensitivity import (
    Relation,
    clip_norm,
    outer_product_sensitivity,
    product_sensitivity,
    value_step_fractions,
)
from dpkit.accountant.structured_sensitivity import block_norm_bound, block_outer_product_sensitivity
from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_nonnegative,
    check_positive,
    check_probability,
    check_rng,
    enum_values,
)

from .envs.tabular import TabularMDP
from .episodes import per_step, resolve_sigmas, step_column
from .spec import AlgorithmSpec, ReportSpec
from .ucrl_vtr import (
    DEFAULT_FAILURE_PROBABILITY,
    DEFAULT_REGULARIZER,
    FEATURES,
    BlockModel,
    Bonus,
    DenseModel,
    VtrAgent,
    block_solve,
    confidence_radius,
    diagonal_blocks,
)

__all__ = [
    "ALGORITHM",
    "LDP_READINGS",
    "BONUSES",
    "GRAM",
    "TARGET",
    "DEFAULT_LDP_BONUS_SCALE",
    "DEFAULT_SHIFT_SCALE",
    "paper_sigma",
    "declare_privacy",
    "LdpUcrlVtr",
    "make_agent",
]

ALGORITHM = "ldp-ucrl-vtr"
LDP_READINGS: tuple[str, ...] = ("theorem", "experiment")
#: The forms of the bonus, as the strings an option takes (:class:`~dpkit.algorithms.ucrl_vtr.Bonus`, UCRL-VTR's).
BONUSES: tuple[str, ...] = enum_values(Bonus)
GRAM = "ΔΛ_h"
TARGET = "Δu_h"
#: c of the bonus, per ``bonus`` mode (see :class:`LdpUcrlVtr`).
DEFAULT_LDP_BONUS_SCALE: Mapping[Bonus, float] = {Bonus.CONFIDENCE: 0.1, Bonus.PAPER: 0.01}
#: r_n = shift_scale·Υ_n (Shariff & Sheffet, and seed 000's Lemma B.1: 2).
DEFAULT_SHIFT_SCALE = 2.0
#: ``features="auto"``: the one-hot features of §6 (d = S²A) up to this d, the model's support beyond (a dense
#: d × d Gram per user and step: FrozenLake 4×4's S²A is 1,024, its support 64 or 192).
AUTO_FEATURES_DIM = 512
PAPER = "Liao, He, Gu — Locally Differentially Private RL for Linear Mixture MDPs (seeds 000/001)"


def step_bounds(horizon: int) -> tuple[float, ...]:
    """(H − h)/H for h = 1..H: step h's bounds on V_{k,h+1} and ‖φ_V‖ as shares of the whole range's.

    The shares of ``value_bound`` and ``feature_bound`` (:func:`dpkit.accountant.sensitivity.value_step_fractions`).

    Args:
        horizon: H.

    Returns:
        The H shares.

    Examples:
        >>> step_bounds(4)
        (0.75, 0.5, 0.25, 0.0)
    """
    return value_step_fractions(horizon)


def paper_sigma(horizon: int, epsilon: float, delta: float, reading: str = "theorem") -> float:
    """The paper's σ: 4H³ sqrt(2 ln(2.5H/δ))/ε (``theorem``) or 4H sqrt(2 ln(2.5H/δ))/ε (``experiment``).

    Args:
        horizon: H.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        reading: ``"theorem"`` (Algorithm 1 / Theorem 5.1) or ``"experiment"`` (§6).

    Returns:
        σ, the same for both releases.

    Raises:
        ValueError: If an argument is out of range or the reading unknown.

    Examples:
        >>> round(paper_sigma(2, 1.0, 0.1), 4)
        89.5088
        >>> round(paper_sigma(2, 1.0, 0.1, reading="experiment"), 4)
        22.3772
    """
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    reading = check_choice("reading", reading, LDP_READINGS)
    power = 3 if reading == "theorem" else 1
    return 4.0 * h**power * math.sqrt(2.0 * math.log(2.5 * h / delta)) / epsilon


@cached_declaration
def declare_privacy(
    horizon: int,
    epsilon: float,
    delta: float,
    *,
    reading: str = "theorem",
    states: int | None = None,
    feature_bound: float | None = None,
    value_bound: float | None = None,
    block_size: int | None = None,
) -> PrivacyDeclaration:
    """What one user of LDP-UCRL-VTR releases, at the paper's σ for the target (ε, δ).

    The implementation clips φ_V to ``feature_bound`` and V to [0, ``value_bound``], which is what the
    sensitivities assume. With ``states`` S the features are one-hot blocks (the tabular linear-mixture view
    :class:`LdpUcrlVtr` uses: V placed in the block of (s, a)), whose exact sensitivities are smaller
    (:mod:`dpkit.accountant.structured_sensitivity`); without it, the norm-ball bounds of any features.

    Args:
        horizon: H.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        reading: ``"theorem"`` or ``"experiment"`` (:func:`paper_sigma`).
        states: S (required by ``experiment``): the features are then one-hot blocks.
        feature_bound: The bound on ‖φ_V(s, a)‖ (default H for ``theorem``, sqrt(S) for ``experiment``).
        value_bound: The bound on V (default H for ``theorem``, 1 for ``experiment``).
        block_size: B, the next states a one-hot block holds (the model's support, ``features="support"``;
            S by default).

    Returns:
        The declaration: the releases ΔΛ_h and Δu_h, with their flags and notes.

    Raises:
        ValueError: If an argument is out of range, ``experiment`` lacks ``states``, or ``block_size`` > S.
    """
    h = check_count("horizon", horizon)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    reading = check_choice("reading", reading, LDP_READINGS)
    if reading == "experiment":
        if states is None:
            raise ValueError("the experiment reading needs the number of states (one-hot features: ‖φ_V‖ <= sqrt(S))")
        s: int | None = check_count("states", states)
        b_phi = math.sqrt(states) if feature_bound is None else check_positive("feature_bound", feature_bound)
        b_v = 1.0 if value_bound is None else check_positive("value_bound", value_bound)
        paper_delta, nonnegative = 2.0, True
    else:
        s = None if states is None else check_count("states", states)
        b_phi = float(h) if feature_bound is None else check_positive("feature_bound", feature_bound)
        b_v = float(h) if value_bound is None else check_positive("value_bound", value_bound)
        paper_delta, nonnegative = 2.0 * h * h, False
    sigma = paper_sigma(h, epsilon, delta, reading)
    # Per step: V_{k,h+1} <= (H − h)/H of the value range (Algorithm 1 caps Q_{k,h} at H − h + 1; V_{H+1} = 0), so
    # step h's ‖φ‖ and V bounds are (H − h)/H of the whole range's; the releases carry step 1's bounds and the
    # later steps' factors ((H − h)/(H − 1))². With H = 1 every message is 0: the whole-range bounds stay (sound).
    fractions = step_bounds(h)
    first = fractions[0]
    factors = tuple((f / first) ** 2 for f in fractions) if h > 1 else ()
    b_phi1, b_v1 = (b_phi * first, b_v * first) if h > 1 else (b_phi, b_v)
    # One-hot features (the tabular linear-mixture view, S known): φ_V(s, a) is V ∈ [0, b_V]^S in the block of (s, a),
    # whose Gram update holds less on its upper triangle than a feature concentrated on one coordinate
    # (dpkit.accountant.structured_sensitivity), and whose products are entrywise >= 0.
    block = s if block_size is None or s is None else check_count("block_size", block_size)
    if s is not None and block is not None:
        if block > s:
            raise ValueError(f"block_size must be <= states = {s}, got {block}")
        gram_ar = block_outer_product_sensitivity(b_v1, block, "add_remove", norm_bound=b_phi1)
        gram_ro = block_outer_product_sensitivity(b_v1, block, "replace_one", norm_bound=b_phi1)
        b_phi1, nonnegative = block_norm_bound(b_v1, block, b_phi1), True
    else:
        gram_ar = outer_product_sensitivity(b_phi1, "add_remove")
        gram_ro = outer_product_sensitivity(b_phi1, "replace_one")
    gram = DeclaredRelease(
        name="ΔΛ_h",
        statistic="Gram update φφᵀ, φ = φ_V(s_h, a_h); symmetric noise on i ≤ j",
        count=h,
        sensitivity_add_remove=gram_ar,
        sensitivity_replace_one=gram_ro,
        paper_sensitivity=paper_delta,
        sigma_paper=sigma,
        noise="symmetric",
        step_factors=factors,
    )
    target = DeclaredRelease(
        name="Δu_h",
        statistic="target update φ·V(s_{h+1})",
        count=h,
        sensitivity_add_remove=product_sensitivity(
            b_phi1, scalar_bound=b_v1, relation="add_remove", nonnegative=nonnegative
        ),
        sensitivity_replace_one=product_sensitivity(
            b_phi1, scalar_bound=b_v1, relation="replace_one", nonnegative=nonnegative
        ),
        paper_sensitivity=paper_delta,
        sigma_paper=sigma,
        step_factors=factors,
    )
    per_release = epsilon / (2 * h)
    flags = []
    if per_release >= 1.0:
        flags.append(
            Flag(
                "classic-bound-at-large-epsilon",
                f"the paper gives each of the 2H = {2 * h} releases ε/2H = {per_release:.6g} by the classic Gaussian "
                "bound, which holds only for ε < 1 per release.",
                "error",
            )
        )
    notes = [
        "Local DP: each user's randomiser must be (ε, δ)-DP for any two data of that user (replace-one); "
        "only the user's own 2H messages see her data.",
        "The paper composes 2H classic (ε/2H, δ/2H) Gaussian releases; exact accounting composes "
        "the 2H Gaussian mechanisms as one μ-GDP mechanism.",
        "Algorithm 1 line 1 in the extracted text reads σ = 4H³ sqrt(2 log(2.5H/δ)/ε) (ε inside the root); "
        "the proof's composition gives σ = 4H³ sqrt(2 ln(2.5H/δ))/ε, used here.",
    ]
    if h > 1:
        notes.append(
            "Per-step sensitivities: Algorithm 1 caps Q_{k,h} at H − h + 1, so V_{k,h+1} lies in [0, (H − h)/H] of the "
            "value range and ‖φ_V‖ within (H − h)/H of its bound; step h's releases have (H − h)²/(H − 1)² of "
            "step 1's sensitivity and step H's are 0 (V_{H+1} = 0: the same message for every user). The user "
            "clips to these per-step bounds."
        )
    if s is not None:
        notes.append(
            f"One-hot features (S = {s}): φ_V(s, a) is V (S entries in [0, b_V]) in the block of (s, a), so the "
            "Gram update's "
            "upper triangle changes by at most b_V²·sqrt(S(S + 1)) under replace-one (two full blocks in different "
            "places), not √2·‖φ‖² (a feature on one coordinate, which a block of norm sqrt(S)·b_V cannot be); the "
            "target update's entries are >= 0 (√2·‖φ‖·b_V)."
        )
    if reading == "experiment":
        notes.append(
            "§6 sets σ = 4H sqrt(2 ln(2.5H/δ))/ε from Δf <= 1 for Δu only (|Q| <= 1); with one-hot features "
            f"‖φ_V‖ <= sqrt(S) = {b_phi:.6g}, and the Gram update is not accounted for."
        )
    params: Mapping[str, Any] = {
        "horizon": h,
        "states": s,
        "block_size": block,
        "reading": reading,
        "feature_bound": b_phi,
        "value_bound": b_v,
    }
    return PrivacyDeclaration(
        algorithm=ALGORITHM,
        privacy_model="LDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(gram, target),
        parameters=params,
        relations=("replace_one",),
        flags=tuple(flags),
        notes=tuple(notes),
    )


class LdpUcrlVtr(VtrAgent):
    """LDP-UCRL-VTR (Algorithm 1 of seed 000) on a tabular MDP in its linear-mixture view.

    The user clips V_{k,h+1} to [0, value_bound] and φ to feature_bound before adding noise (what the
    sensitivities assume). The planner itself caps Q at the largest return-to-go, not at value_bound: an MDP whose
    values exceed value_bound stays private but its regression targets are clipped (biased) — pick the reading or
    value_bound to fit the rewards. The shift, the bonus and their constants are derived in
    docs/explanation/seed-algorithms.md.

    Args:
        env: The tabular MDP.
        episodes: K (it enters the union bound of the shift).
        rng: A Generator or an integer seed (the noise); a sequence of R Generators makes a batch of R independent
            runs (``runs`` = R): every array of the protocol (plans, trajectories, messages, regression inputs, Λ
            and u) gets a leading run axis, and run i draws from ``rng[i]`` exactly what the agent with that
            Generator alone draws.
        epsilon: The target ε of the declaration (:func:`declare_privacy`).
        delta: The target δ.
        sigma: ``"paper"``, ``"tight"`` (under ``relation``, ``method``), a number or ``{release: σ}``: σ_Λ and
            σ_u (:func:`dpkit.algorithms.episodes.resolve_sigmas`; 0 turns the noise off).
        reading: ``"experiment"`` (default: rewards divided by H, V ∈ [0, 1], ‖φ_V‖ <= sqrt(S)) or ``"theorem"``.
        feature_bound: The declaration's bound on ‖φ_V‖ (default from ``reading``).
        value_bound: The declaration's bound on V (default from ``reading``).
        relation: The neighbouring relation of ``"tight"``.
        method: The accounting method of ``"tight"``.
        bonus: :class:`~dpkit.algorithms.ucrl_vtr.Bonus` (or its value): ``"confidence"`` (the self-normalised
            radius) or ``"paper"`` (§6's form).
        bonus_scale: c (default per mode, :data:`DEFAULT_LDP_BONUS_SCALE`).
        shift_scale: r_n = shift_scale·Υ_n (:data:`DEFAULT_SHIFT_SCALE`).
        regularizer: λ (``None``: UCRL-VTR's default).
        failure_probability: α.
        features: ``"auto"`` (one-hot up to d = :data:`AUTO_FEATURES_DIM`, the support beyond), ``"one-hot"`` or
            ``"support"``.

    Attributes:
        sigmas: {"ΔΛ_h": σ_Λ, "Δu_h": σ_u}.
        declaration: What one user releases.
        shift: r of the last plan (the same in every run).
        runs: R, or None for one run.
        rng: The Generator (a batch's first).
        rngs: Every run's Generator.

    Raises:
        ValueError: If ``env`` is not a TabularMDP or an option is out of range.
    """

    name = ALGORITHM
    _run_axis = True

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator],
        *,
        epsilon: float,
        delta: float,
        sigma: str | float | Mapping[str, float] = "paper",
        reading: str = "experiment",
        feature_bound: float | None = None,
        value_bound: float | None = None,
        relation: Relation | str | None = None,
        method: AccountingMethod | str = AccountingMethod.EXACT,
        bonus: Bonus | str = Bonus.CONFIDENCE,
        bonus_scale: float | None = None,
        shift_scale: float = DEFAULT_SHIFT_SCALE,
        regularizer: float | None = DEFAULT_REGULARIZER,
        failure_probability: float = DEFAULT_FAILURE_PROBABILITY,
        features: str = "auto",
    ) -> None:
        if not isinstance(env, TabularMDP):
            raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
        self.bonus = check_choice("bonus", bonus, tuple(Bonus))
        scale = DEFAULT_LDP_BONUS_SCALE[self.bonus] if bonus_scale is None else bonus_scale
        features = check_choice("features", features, ("auto", *FEATURES))
        if features == "auto":  # §6's one-hot features, unless d = S²A is beyond dense algebra per user and step
            features = "one-hot" if env.states**2 * env.actions <= AUTO_FEATURES_DIM else "support"
        rngs = _check_rngs(rng)
        super().__init__(
            env,
            episodes,
            bonus_scale=scale,
            regularizer=regularizer,
            failure_probability=failure_probability,
            features=features,
            runs=None if isinstance(rngs, np.random.Generator) else len(rngs),
        )
        self.rngs: tuple[np.random.Generator, ...] = (rngs,) if isinstance(rngs, np.random.Generator) else rngs
        self.rng = self.rngs[0]
        self.shift_scale = check_nonnegative("shift_scale", shift_scale)
        self.declaration = declare_privacy(
            self.horizon,
            epsilon,
            delta,
            reading=reading,
            states=self.states,
            feature_bound=feature_bound,
            value_bound=value_bound,
            block_size=self.block,
        )
        self.sigmas = resolve_sigmas(self.declaration, sigma, relation=relation, method=method)
        self.feature_bound = float(self.declaration.parameters["feature_bound"])
        self.value_bound = float(self.declaration.parameters["value_bound"])
        # step h's clipping bounds (the declaration's per-step sensitivities): (H − h)/H of the whole range
        fractions = np.asarray(step_bounds(self.horizon)) if self.horizon > 1 else np.ones(1)
        self.step_value_bounds: np.ndarray = self.value_bound * fractions
        self.step_feature_bounds: np.ndarray = self.feature_bound * fractions
        # the paper's cap Q_{k,h} <= H − h + 1 (Algorithm 1), in value_bound units: the planner's V_{h+1} never
        # exceeds the user's clip, whatever the MDP's rewards (on RiverSwim the return-to-go caps are already below)
        paper_caps = self.value_bound * (self.horizon - np.arange(self.horizon + 1)) / self.horizon
        self.caps = _below(self.caps, paper_caps)
        #: r of the last plan: one number, or one per step (a per-step σ_Λ)
        self.shift: float | np.ndarray = 0.0
        #: σ_Λ and σ_u: a float, or one σ per step (an allocation with per-step σ, e.g. ``sigma="optimal"``)
        self.sigma_gram: float | np.ndarray = _sigma_value(self.sigmas[GRAM])
        self.sigma_target: float | np.ndarray = _sigma_value(self.sigmas[TARGET])
        d = self.dim
        self._gram = np.broadcast_to(np.eye(d) * self.regularizer, (*self._lead, self.horizon, d, d)).copy()
        self._users = 0
        self._upper = np.triu_indices(d)
        self._noise_p = self.failure_probability / (self.horizon * self.episodes)

    # -- the server ------------------------------------------------------------------------------
    def _solve(self, k: int) -> tuple[BlockModel | DenseModel, np.ndarray]:
        n, lam = self._users, self.regularizer
        model: BlockModel | DenseModel
        if not np.any(self.sigma_gram):  # no noise: Λ is block diagonal, as UCRL-VTR's (same floats, same actions)
            upsilon: float | np.ndarray = 0.0
            self.shift = 0.0
            theta, inverse_blocks, logdet = block_solve(
                diagonal_blocks(self._gram, self.states, self.actions, self.block), self._target
            )
            model = BlockModel(theta, inverse_blocks, self.states, self.actions, self.features)
        else:
            upsilon = per_step(
                lambda s: symmetric_noise_norm_bound(s, psums=n, dim=self.dim, failure_probability=self._noise_p),
                self.sigma_gram,
            )
            self.shift = self.shift_scale * upsilon
            model = DenseModel(
                self._gram + step_column(self.shift, 3) * np.eye(self.dim),
                self._target,
                self.states,
                self.actions,
                self.features,
            )
            logdet = model.logdet() if self.bonus == Bonus.CONFIDENCE else np.zeros(self.horizon)
        if self.bonus == Bonus.PAPER:
            steps_left = self.horizon - np.arange(self.horizon)  # H − h + 1 with h 1-based
            beta = self.bonus_scale * self.dim**0.75 * steps_left**1.5 * (k + 1) ** 0.25
            return model, np.broadcast_to(beta, (*self._lead, self.horizon))
        gamma: float | np.ndarray = 0.0
        if np.any(self.sigma_target) and n > 0:
            gamma = self.sigma_target * (
                math.sqrt(n) * (math.sqrt(self.dim) + math.sqrt(2.0 * math.log(1.0 / self._noise_p)))
            )
        rho_min = lam + self.shift - upsilon
        rho_min = np.maximum(rho_min, lam) if np.ndim(rho_min) else max(rho_min, lam)  # shift_scale < 1: keep finite
        rho_max = lam + self.shift + upsilon
        ranges = _below(self.caps[1:], self.step_value_bounds)
        beta = confidence_radius(
            logdet,
            ranges,
            self.dim,
            self.theta_bound,
            self.failure_probability,
            rho_min=rho_min,
            rho_max=rho_max,
            gamma=gamma,
            scale=self.bonus_scale,
        )
        return model, beta

    # -- the user, then the server -----------------------------------------------------------------
    def _absorb(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> Mapping[str, np.ndarray]:
        messages = self.privatize(blocks, values, targets)
        self._gram += self._lift(messages[GRAM])
        self._target += self._lift(messages[TARGET])
        self._users += 1
        return messages

    def _generators(self) -> tuple[Any, ...]:
        """Every run's Generator, in run order (a scalar agent's: ``rng``, read when it draws)."""
        return (self.rng,) if self.runs is None else self.rngs

    def _normals(self, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normals of one run's ``shape`` from every run's Generator, stacked on the run axis."""
        return np.stack([g.standard_normal(shape) for g in self._generators()])

    def privatize(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        """The user's randomiser: her 2H messages from φ_h = V_{h+1} on block ``blocks[h]`` and target ``targets[h]``.

        V is clipped to [0, value_bound] (values and targets alike), φ to ℓ2 norm feature_bound; then
        ΔΛ_h = φφᵀ + W_h (symmetric noise, σ_Λ) and Δu_h = φ·V̄(s_{h+1}) + ξ_h (σ_u). A batch of R runs takes and
        returns each with a leading run axis, run i's noise drawn from its own Generator.

        Args:
            blocks: The block s_h·A + a_h of each step, shape (H,).
            values: V_{h+1} at the block's coordinates, shape (H, B).
            targets: V_{h+1}(s_{h+1}), shape (H,).

        Returns:
            {"ΔΛ_h": (H, d, d), "Δu_h": (H, d)}.

        Raises:
            ValueError: If the inputs have the wrong shapes, blocks out of range, or values not finite.
        """
        messages = self.statistics(blocks, values, targets)
        gram, target = self._lift(messages[GRAM]), self._lift(messages[TARGET])
        h_ = self.horizon
        if np.any(self.sigma_gram):
            z = self._normals((h_, self._upper[0].shape[0])) * step_column(self.sigma_gram, 2)
            noise = np.empty((gram.shape[0], h_, self.dim, self.dim))
            noise[..., self._upper[0], self._upper[1]] = z
            noise[..., self._upper[1], self._upper[0]] = z
            gram += noise
        if np.any(self.sigma_target):
            target += self._normals((h_, self.dim)) * step_column(self.sigma_target, 2)
        return {GRAM: self._drop(gram), TARGET: self._drop(target)}

    def message_statistics(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        """The user's 2H messages before their noise, from her trajectory under the last plan.

        The local-DP messages protocol of :func:`dpkit.audits.rl.observers.observe_messages`.

        Args:
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).
            rewards: Her rewards (they do not enter the messages).

        Returns:
            What :meth:`statistics` returns.
        """
        return self.statistics(*self.regression_inputs(states, actions))

    def statistics(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        """The noiseless statistics the randomiser privatises (clipped as it clips): the means of its messages.

        No noise is drawn.

        Args:
            blocks: The block s_h·A + a_h of each step, shape (H,) (a batch: (R, H)).
            values: V_{h+1} at the block's coordinates, shape (H, B).
            targets: V_{h+1}(s_{h+1}), shape (H,).

        Returns:
            {"ΔΛ_h": (H, d, d), "Δu_h": (H, d)}, as :meth:`privatize`.

        Raises:
            ValueError: If the inputs have the wrong shapes, blocks out of range, or values not finite.
        """
        h_, sa, s_, runs = self.horizon, self.states * self.actions, self.block, self._outer
        blocks = np.asarray(blocks)
        values = np.asarray(values, dtype=float)
        targets = np.asarray(targets, dtype=float)
        if blocks.shape != (*runs, h_) or values.shape != (*runs, h_, s_) or targets.shape != (*runs, h_):
            raise ValueError(
                f"blocks, values and targets must have shapes {(*runs, h_)}, {(*runs, h_, s_)} and {(*runs, h_)}, "
                f"got {blocks.shape}, {values.shape} and {targets.shape}"
            )
        if not np.issubdtype(blocks.dtype, np.integer) or np.any((blocks < 0) | (blocks >= sa)):
            raise ValueError(f"blocks must be integers in 0..{sa - 1}, got {blocks.tolist()}")
        if not (np.isfinite(values).all() and np.isfinite(targets).all()):
            raise ValueError("values and targets must be finite")
        blocks, values, targets = self._lift(blocks), self._lift(values), self._lift(targets)
        v = np.clip(values, 0.0, self.step_value_bounds[:, None])
        y = np.clip(targets, 0.0, self.step_value_bounds)
        phi_blocks = _clip_rows(v, self.step_feature_bounds)
        phi = np.zeros((blocks.shape[0], h_, sa, s_))
        phi[np.arange(blocks.shape[0])[:, None], self._steps, blocks] = phi_blocks
        phi = phi.reshape(blocks.shape[0], h_, self.dim)
        gram = phi[..., :, None] * phi[..., None, :]
        target = phi * y[..., None]
        return {GRAM: self._drop(gram), TARGET: self._drop(target)}

    def gram(self) -> np.ndarray:
        """A copy of the server's Λ_h = λI + Σ ΔΛ_h (without the shift).

        Returns:
            Λ, shape (H, d, d) (a batch's (R, H, d, d)).
        """
        return self._drop(self._gram).copy()

    def target(self) -> np.ndarray:
        """A copy of the server's u_h = Σ Δu_h.

        Returns:
            u, shape (H, d) (a batch's (R, H, d)).
        """
        return self._drop(self._target).copy()


_OPTIONS = (
    "features",
    "reading",
    "feature_bound",
    "value_bound",
    "relation",
    "method",
    "bonus",
    "bonus_scale",
    "shift_scale",
    "regularizer",
    "failure_probability",
)


def _below(caps: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """``caps`` lowered to ``bounds`` where they exceed them beyond rounding (equal values, computed two ways, keep
    ``caps``' floats: the same plans as before the per-step bounds)."""
    return np.where(caps > bounds * (1.0 + 1e-12), bounds, caps)


def _sigma_value(sigma: float | tuple[float, ...]) -> float | np.ndarray:
    """A resolved σ as the agent keeps it: a float, or an array of one σ per step when they differ."""
    values = np.atleast_1d(np.asarray(sigma, dtype=float))
    return float(values[0]) if np.all(values == values[0]) else values


def _check_rngs(rng: Any) -> np.random.Generator | tuple[np.random.Generator, ...]:
    """One Generator (or an integer seed), or a non-empty sequence of Generators (one per run) as a tuple."""
    if isinstance(rng, Sequence) and not isinstance(rng, str):
        if not rng:
            raise ValueError("rng must hold at least one Generator (one per run), got an empty sequence")
        return tuple(check_rng(f"rng[{i}]", g) for i, g in enumerate(rng))
    return check_rng("rng", rng)


def _clip_rows(x: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Each step's row of ``x`` (..., H, m) clipped to ℓ2 norm ``bounds[h]`` (:func:`clip_norm` where they are
    equal); a row already within its bound is kept as it is, and a bound of 0 gives zeros."""
    if np.all(bounds == bounds[0]):
        return clip_norm(x, float(bounds[0]), axis=-1)
    inside = np.einsum("...hm,...hm->...h", x, x) <= bounds * bounds  # clip_norm keeps these rows as they are
    out = np.zeros_like(x)
    for h, b in enumerate(bounds):
        if b > 0:
            out[..., h, :] = np.where(inside[..., h, None], x[..., h, :], clip_norm(x[..., h, :], float(b), axis=-1))
    return out


def make_agent(
    name: str,
    env: TabularMDP,
    episodes: int,
    rng: np.random.Generator | int,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    **options: Any,
) -> LdpUcrlVtr:
    """A :class:`LdpUcrlVtr` sized to ``env`` for ``episodes`` episodes, at the target (ε, δ).

    Args:
        name: ``"ldp-ucrl-vtr"``.
        env: The tabular MDP.
        episodes: K.
        rng: A Generator or seed, or one Generator per run (a batch).
        epsilon: The target ε (required).
        delta: The target δ (required).
        sigma: ``"paper"``, ``"tight"``, a number or ``{release: σ}``.
        **options: ``features``, ``reading``, ``feature_bound``, ``value_bound``, ``relation``, ``method``,
            ``bonus``, ``bonus_scale``, ``shift_scale``, ``regularizer``, ``failure_probability``
            (:class:`LdpUcrlVtr`).

    Returns:
        The agent.

    Raises:
        ValueError: For another name, a missing ε or δ, or an unknown option.
    """
    check_choice("name", name, (ALGORITHM,))
    if epsilon is None or delta is None:
        raise ValueError(f"ldp-ucrl-vtr is private: give epsilon and delta, got epsilon={epsilon!r}, delta={delta!r}")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"ldp-ucrl-vtr does not take option(s) {', '.join(unknown)} (only {', '.join(_OPTIONS)})")
    return LdpUcrlVtr(env, episodes, rng, epsilon=epsilon, delta=delta, sigma=sigma, **options)


def _declare(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(
        p["horizon"],
        epsilon,
        delta,
        reading=p.get("reading") or "theorem",
        states=p.get("states"),
        block_size=p.get("block_size"),
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """The regret runs' reading: §6's (rewards divided by H, ‖φ_V‖ <= sqrt(S)); H = 2S unless given; on a user's
    environment whose S²A is beyond :data:`AUTO_FEATURES_DIM`, the block size of its support (``features="auto"``)."""
    horizon = sizes.horizon if sizes.horizon is not None else 2 * sizes.states
    out: dict[str, Any] = {"horizon": horizon, "states": sizes.states, "reading": "experiment"}
    env_name = getattr(sizes, "env", "")
    if sizes.states**2 * sizes.actions > AUTO_FEATURES_DIM and env_name:
        from .envs.catalog import make_environment
        from .ucrl_vtr import Features

        env = make_environment(env_name, sizes.states, env_seed, actions=sizes.actions, horizon=horizon)
        out["block_size"] = Features(env, "support").block
    return out


SPEC = AlgorithmSpec(
    name=ALGORITHM,
    entry_point=make_agent,
    summary="local DP; 2H noisy messages per user (seeds 000/001)",
    declaration=_declare,
    required=("horizon",),
    optional=("states", "reading", "block_size"),
    ledger_parameters=_ledger_parameters,
    report=ReportSpec(
        assumptions=(
            "A tabular MDP in its linear-mixture view: one-hot features φ(s′|s, a) = e_(s,a,s′), d = S²A.",
            "The §6 (experiment) reading of the paper's σ: rewards divided by H, so values lie in [0, 1] and "
            "‖φ_V‖ <= sqrt(S).",
            "Each user clips V to [0, 1] and φ_V to the norm bound before adding noise, so the sensitivities hold "
            "whatever the server computes.",
            "The Gram update carries symmetric noise (i.i.d. on the upper triangle, mirrored); its sensitivity is "
            "taken on that triangle.",
        ),
    ),
)
#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`).
REGISTRATIONS = (SPEC,)
