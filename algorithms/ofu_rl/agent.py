"""OFU-RL and Private-OFU-RL as agents, and :func:`run_lq`, one run of an agent on an LQ system (see
:mod:`dpkit.algorithms.ofu_rl`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.declarations import (
    PrivacyDeclaration,
)
from dpkit.accountant.sensitivity import Relation
from dpkit.accountant.tree import (
    BinaryCounter,
    max_psums_per_prefix,
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

from ..envs.lq import LQSystem, clip_norm, optimal_cost_from_riccati, riccati_unchecked
from ..envs.lq_users import LQUsers
from ..episodes import Plan, Run, agent_runs, lift_run, resolve_sigmas
from .declaration import declare_privacy
from .ellipsoid import (
    Ellipsoid,
    EllipsoidBatch,
    OptimisticChoice,
    OptimisticChoices,
    confidence_radii_of_ratios,
    optimistic_thetas,
)

__all__ = [
    "OFU_AGENTS",
    "REGULARIZER",
    "PRIVATE_REGULARIZER",
    "TUNED",
    "LEARNING",
    "PRESETS",
    "OfuRl",
    "PrivateOfuRl",
    "make_agent",
    "run_lq",
    "run_lq_runs",
]

OFU_AGENTS: tuple[str, ...] = ("ofu-rl", "private-ofu-rl")
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
#: The constants under which Private-OFU-RL learns in the LQ world ``lq-learning`` (``preset="learning"``): the
#: paper's confidence radius β_k scaled by 0.1. With the paper's β_k the private set's radius holds √λ_max·S with
#: λ_max = 3Λ, wide enough to hold B = 0 and −B at any K we can run (even at ε = 1000), and J* is the same at B and
#: −B, so the optimistic gains take either sign and cost more than no control. The optimiser's effort is cut
#: (8 starts, 2 descent rounds) to fit a report's two minutes. Measured: docs/explanation/seed-algorithms.md.
LEARNING: Mapping[str, Any] = MappingProxyType({"radius_scale": 0.1, "candidates": 8, "refine_rounds": 2})
#: The presets ``make_agent`` knows: ``"paper"`` (the defaults), ``"tuned"`` (:data:`TUNED`) and ``"learning"``
#: (:data:`LEARNING`).
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {"paper": MappingProxyType({}), "tuned": TUNED, "learning": LEARNING}
)


class OfuRl:
    """OFU-RL for episodic LQ control (seed 003, §III-A), with exact statistics (σ = 0 counters).

    The agent reads only what the paper assumes known: Q, R, H, x0, C_w, γ and the noise covariance W
    (needed by J*, the paper's (5)); never A or B. Each episode: Θ̂, β_k and the ellipsoid from the
    counters' prefixes, Θ̃ = :func:`optimistic_theta`, gains K_h(Θ̃) by :func:`~dpkit.algorithms.envs.lq.riccati`
    (the plan's ``policy``, shape (H, d, n)); the plan's ``released`` are the prefixes T1, T2 it used.

    Args:
        system: The :class:`~dpkit.algorithms.envs.lq.LQSystem` (only its known parts are read).
        episodes: K, the number of episodes (sizes the counters).
        rng: Generator or seed; three child streams are drawn from it (B1's noise, B2's noise, the optimiser). Or a
            sequence of R Generators, one per run: the agent is then R independent agents at once (:attr:`runs`),
            whose ``plan``, ``update`` and ``items`` take and return arrays with a leading run axis; run i draws
            from ``rng[i]`` exactly what the agent of that one Generator draws, and plays what it plays.
        regularizer: λ >= 0, the base ridge; the shift is η = λ + 2Λ (Λ = 0 without noise, then λ must be > 0).
            Default :data:`REGULARIZER` = 1 (the paper states no λ); :class:`PrivateOfuRl`'s is the paper's 0.
        alpha: Failure probability of the confidence set (all episodes together). Default 0.05.
        theta_bound: S >= ‖Θ*‖_F (Assumption 1(a): 1), used in β and in the optimistic search's constraint.
        noise_scale: R, the sub-Gaussian parameter of w (default C_w, valid for any ‖w‖ <= C_w).
        candidates: The optimistic search's multi-start points (:func:`optimistic_theta`, with the exact gradient
            of J*); default 32 (the paper's argmin is exact and states no optimiser).
        refine_rounds: The search's rounds of descent (default 10).
        line_search: The step sizes of a descent round (default 8).
        radius_scale: Multiplier >= 0 on the confidence radius β_k (default 1, the paper's; 0 plays the centre
            Θ̂, certainty equivalence).

    Raises:
        ValueError: If ``system`` is not an LQSystem, an option is out of range, or λ = 0 without Gram noise.
    """

    name: str = "ofu-rl"

    def __init__(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator],
        *,
        regularizer: float = REGULARIZER,
        alpha: float = 0.05,
        theta_bound: float = 1.0,
        noise_scale: float | None = None,
        candidates: int = 32,
        refine_rounds: int = 10,
        line_search: int = 8,
        radius_scale: float = 1.0,
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
        self.radius_scale: float = check_nonnegative("radius_scale", radius_scale)
        self.sigmas: dict[str, float] = {}
        self.declaration: PrivacyDeclaration | None = None

    def _setup(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator],
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
        if isinstance(rng, Sequence) and not isinstance(rng, str):
            if not rng:
                raise ValueError("rng must hold at least one Generator (one per run), got an empty sequence")
            rngs = [check_rng(f"rng[{i}]", g) for i, g in enumerate(rng)]
            self.runs: int | None = len(rngs)
        else:
            rngs = [check_rng("rng", rng)]
            self.runs = None
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
        seeds = [g.integers(0, _SEED_BOUND, size=3, dtype=np.int64) for g in rngs]
        streams = [[np.random.default_rng(int(seed[i])) for seed in seeds] for i in range(3)]
        # one agent: counters of one Generator (no run axis); R runs: counters of one Generator per run
        b1_rng: Any = streams[0][0] if self.runs is None else streams[0]
        b2_rng: Any = streams[1][0] if self.runs is None else streams[1]
        self._b1 = BinaryCounter((p, p), sigma1, b1_rng, symmetric=True, steps=k_)
        self._b2 = BinaryCounter((p, n), sigma2, b2_rng, steps=k_)
        self._opt_rngs: list[np.random.Generator] = streams[2]
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
        self.last_choice: OptimisticChoice | None = None  # of one agent (None for runs: see last_choices)
        self.last_ellipsoid: Ellipsoid | None = None
        self.last_choices: OptimisticChoices | None = None

    # ------------------------------------------------------------------ J* of many Θ at once

    def optimal_costs(self, thetas: np.ndarray) -> np.ndarray:
        """J*_1(Θ, x0), the optimal expected cost from x0 under Θ and the known Q, R, W.

        Args:
            thetas: Θ = [A, B]ᵀ, shape (..., n + d, n).

        Returns:
            J*, shape (...).
        """
        n = self.state_dim
        t = np.asarray(thetas, dtype=float)
        a, b = np.swapaxes(t[..., :n, :], -1, -2), np.swapaxes(t[..., n:, :], -1, -2)
        p, _ = riccati_unchecked(a, b, self._q, self._r, self.horizon)
        return optimal_cost_from_riccati(p, self._x0, self._w)

    def optimal_costs_and_gradients(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """J*_1(Θ, x0) and its gradient ∇_Θ J*_1(Θ, x0).

        Envelope theorem: the gradient of the expected cost at the optimal gains held fixed. With
        F_h = A + BK_h and second moments X_0 = x0x0ᵀ, X_{h+1} = F_hX_hF_hᵀ + W:
        ∂J*/∂A = Σ_h 2P_{h+1}F_hX_h and ∂J*/∂B = Σ_h 2P_{h+1}F_hX_hK_hᵀ; Θ = [A, B]ᵀ.

        Args:
            thetas: Θ, shape (..., n + d, n).

        Returns:
            J*, shape (...), and the gradients, shape (..., n + d, n).
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

    def _objective(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The optimistic search's objective: J* and its gradients, or J* alone when no descent round reads them
        (``refine_rounds`` = 0; the same costs)."""
        if self.refine_rounds == 0:
            return self.optimal_costs(thetas), None
        return self.optimal_costs_and_gradients(thetas)

    def gains(self, theta: np.ndarray) -> np.ndarray:
        """The optimal gains K_h(Θ) of the Riccati recursion.

        Args:
            theta: Θ = [A, B]ᵀ, shape (n + d, n), or with leading axes.

        Returns:
            K_h, shape (H, d, n) ((..., H, d, n) for leading axes of Θ).
        """
        n = self.state_dim
        t = np.asarray(theta, dtype=float)
        a, b = np.swapaxes(t[..., :n, :], -1, -2), np.swapaxes(t[..., n:, :], -1, -2)
        return riccati_unchecked(a, b, self._q, self._r, self.horizon)[1]

    def ellipsoid(self) -> Ellipsoid | list[Ellipsoid]:
        """The confidence set of the next episode from the counters' current prefixes (draws no noise).

        Returns:
            The ellipsoid; of R runs, a list of one per run.
        """
        sets = self._ellipsoids(*self._prefixes())
        out = [Ellipsoid(sets.centre[i], sets.gram[i], float(sets.radius[i])) for i in range(len(sets))]
        return out[0] if self.runs is None else out

    def _prefixes(self) -> tuple[np.ndarray, np.ndarray]:
        """The counters' prefixes T1 (R, p, p), T2 (R, p, n), with a run axis of one for one agent."""
        t1, t2 = self._b1.prefix(), self._b2.prefix()
        return (t1[None], t2[None]) if self.runs is None else (t1, t2)

    def _ellipsoids(self, t1: np.ndarray, t2: np.ndarray) -> EllipsoidBatch:
        """The confidence sets of the prefixes T1 (R, p, p), T2 (R, p, n), run by run."""
        p = t1.shape[-1]
        v = t1 + self.shift * np.eye(p)
        vals, vecs = np.linalg.eigh(v)
        low = vals[:, 0] < self.lambda_min  # only when ‖N_k‖ > Λ (or rounding): floor at λ_min, a post-processing
        if low.any():
            floored = np.maximum(vals[low], self.lambda_min)
            w = (vecs[low] * floored[:, None, :]) @ np.swapaxes(vecs[low], -1, -2)
            v[low] = 0.5 * (w + np.swapaxes(w, -1, -2))
            vals[low] = floored
        centre = np.linalg.solve(v, t2)
        ratio = np.maximum(np.sum(np.log(vals), axis=-1) - p * math.log(self.lambda_min), 0.0)
        beta = self.radius_scale * confidence_radii_of_ratios(
            ratio,
            self.state_dim,
            self.noise_scale,
            self.alpha_self_normalised,
            self.lambda_max,
            self.theta_bound,
            self.nu,
        )
        return EllipsoidBatch.of(centre, v, beta)

    # ------------------------------------------------------------------ the episodic protocol

    def plan(self, k: int) -> Plan:
        """The gains for episode ``k``, and the released prefixes B1, B2 (episodes 0..k−1) used.

        Args:
            k: The episode, 0-based (episodes in order).

        Returns:
            The plan: the gains (H, d, n) and {"B1": T1, "B2": T2} (R runs: a leading run axis).

        Raises:
            ValueError: If ``k`` is out of order.
        """
        k = check_index("k", k)
        if k != self._b1.t:
            raise ValueError(f"plan({k}) called after {self._b1.t} episodes were learnt from")
        t1, t2 = self._prefixes()
        sets = self._ellipsoids(t1, t2)
        choices = optimistic_thetas(
            sets,
            self._objective,
            self._opt_rngs,
            gradient=True,
            theta_bound=self.theta_bound,
            candidates=self.candidates,
            refine_rounds=self.refine_rounds,
            line_search=self.line_search,
        )
        self.last_choices = choices
        policy = self.gains(choices.theta)
        if self.runs is not None:
            return Plan(policy=policy, released={"B1": t1, "B2": t2})
        self.last_ellipsoid = Ellipsoid(sets.centre[0], sets.gram[0], float(sets.radius[0]))
        c = choices
        self.last_choice = OptimisticChoice(
            c.theta[0],
            float(c.cost[0]),
            c.anchor[0],
            float(c.anchor_cost[0]),
            bool(c.constrained[0]),
            int(c.evaluated[0]),
        )
        return Plan(policy=policy[0], released={"B1": t1[0], "B2": t2[0]})

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Feed episode ``k``'s Σ z zᵀ and Σ z x′ᵀ (x clipped to the unit ball, u to γ) to the counters.

        Args:
            k: The episode, 0-based (the one planned last).
            states: x_1, …, x_{H+1}, shape (H + 1, n) (R runs: (R, H + 1, n)).
            actions: The controls u_1, …, u_H played, shape (H, d) (R runs: (R, H, d)).
            rewards: The negated costs (unused).

        Returns:
            ``{}``: nothing is released after the episode (the releases are the prefixes of the next plan).

        Raises:
            ValueError: If ``k`` is out of order or the trajectory has the wrong shape.
        """
        k = check_index("k", k)
        if k != self._b1.t:
            raise ValueError(f"update({k}) called after {self._b1.t} episodes were learnt from")
        items = self.items(states, actions)
        self._b1.add(items["B1"])
        self._b2.add(items["B2"])
        return {}

    def items(self, states: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        """What an episode adds to the counters, x clipped to the unit ball and u to γ (what the sensitivities assume).

        Changes nothing.

        Args:
            states: x_1, …, x_{H+1}, shape (H + 1, n) (R runs: (R, H + 1, n)).
            actions: u_1, …, u_H, shape (H, d) (R runs: (R, H, d)).

        Returns:
            {"B1": Σ_h z zᵀ, "B2": Σ_h z x_{h+1}ᵀ}, z = [x; u] (R runs: with a leading run axis).

        Raises:
            ValueError: If the trajectory has the wrong shape.
        """
        h_, n, d = self.horizon, self.state_dim, self.control_dim
        x = np.asarray(states, dtype=float)
        u = np.asarray(actions, dtype=float)
        lead = () if self.runs is None else (self.runs,)
        if x.shape != (*lead, h_ + 1, n) or u.shape != (*lead, h_, d):
            want = "" if self.runs is None else f"{self.runs}, "
            raise ValueError(
                f"states must have shape ({want}{h_ + 1}, {n}) and actions ({want}{h_}, {d}), got {x.shape} and "
                f"{u.shape}"
            )
        x = clip_norm(x, 1.0)
        z = np.concatenate([x[..., :h_, :], clip_norm(u, self.gamma)], axis=-1)
        zt = np.swapaxes(z, -1, -2)
        return {"B1": zt @ z, "B2": zt @ x[..., 1:, :]}


class PrivateOfuRl(OfuRl):
    """Private-OFU-RL (seed 003, Algorithm 1): :class:`OfuRl` whose counters add Gaussian noise.

    σ of B1 (symmetric noise) and B2 from ``resolve_sigmas(declare_privacy(K, H, ε, δ, γ), sigma,
    relation=relation, method=method)``: ``"paper"`` (the paper's σ_i² = 8mΔ_i² ln(2/δ)/ε²), ``"tight"``
    (the ledger's σ under ``relation``), a number or a mapping {"B1": σ1, "B2": σ2}. The shift is
    η = λ + 2Λ (the paper's 2Λ plus the base ridge ``regularizer``, by default the paper's
    :data:`PRIVATE_REGULARIZER` = 0; give λ > 0 for σ1 = 0, where Λ = 0).
    ``.sigmas`` and ``.declaration`` record what was used.

    Args:
        system: As in :class:`OfuRl`.
        episodes: As in :class:`OfuRl`.
        rng: As in :class:`OfuRl`.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        sigma: ``"paper"``, ``"tight"``, a number or {"B1": σ1, "B2": σ2}.
        relation: The neighbouring relation of ``"tight"``.
        method: The accounting method of ``"tight"``.
        regularizer: λ >= 0 (default :data:`PRIVATE_REGULARIZER` = 0).
        alpha: As in :class:`OfuRl`.
        theta_bound: As in :class:`OfuRl`.
        noise_scale: As in :class:`OfuRl`.
        candidates: As in :class:`OfuRl`.
        refine_rounds: As in :class:`OfuRl`.
        line_search: As in :class:`OfuRl`.
        radius_scale: As in :class:`OfuRl`.
    """

    name: str = "private-ofu-rl"

    def __init__(
        self,
        system: LQSystem,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator],
        *,
        epsilon: float,
        delta: float,
        sigma: str | float | Mapping[str, float] = "paper",
        relation: Relation | str | None = None,
        method: AccountingMethod | str = "exact",
        regularizer: float = PRIVATE_REGULARIZER,
        alpha: float = 0.05,
        theta_bound: float = 1.0,
        noise_scale: float | None = None,
        candidates: int = 32,
        refine_rounds: int = 10,
        line_search: int = 8,
        radius_scale: float = 1.0,
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
        self.radius_scale = check_nonnegative("radius_scale", radius_scale)
        self.sigmas = dict(sigmas)
        self.declaration = declaration


_OPTIONS = (
    "regularizer",
    "alpha",
    "theta_bound",
    "noise_scale",
    "candidates",
    "refine_rounds",
    "line_search",
    "radius_scale",
)
_PRIVATE_OPTIONS = _OPTIONS + ("relation", "method")


def make_agent(
    name: str,
    system: LQSystem,
    episodes: int,
    rng: np.random.Generator | int | Sequence[np.random.Generator],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    preset: str = "paper",
    **options: Any,
) -> OfuRl:
    """An agent by name: ``"ofu-rl"`` or ``"private-ofu-rl"``.

    Args:
        name: ``"ofu-rl"`` or ``"private-ofu-rl"``.
        system: The LQ system.
        episodes: K.
        rng: One Generator (or seed), or one Generator per run (an agent of R runs at once, see :class:`OfuRl`).
        epsilon: The target ε (the private agent needs it; the other ignores it).
        delta: The target δ (likewise).
        sigma: The private agent's σ; the non-private one takes none but ``"paper"`` (the default).
        preset: ``"paper"`` (the defaults below), ``"tuned"`` (:data:`TUNED`) or ``"learning"`` (:data:`LEARNING`),
            under the explicit ``options``.
        **options: Go to the constructor: ``regularizer`` (the paper's: 1 for OFU-RL, which states none, 0 for
            Private-OFU-RL), ``alpha`` (0.05), ``theta_bound`` (1), ``noise_scale`` (C_w), ``candidates`` (32),
            ``refine_rounds`` (10), ``line_search`` (8), ``radius_scale`` (1); private also ``relation`` and
            ``method``.

    Returns:
        The agent (:class:`OfuRl` or :class:`PrivateOfuRl`).

    Raises:
        ValueError: For an unknown name, preset or option, a private agent without ε or δ, or a non-private one
            given a σ.
    """
    name = check_choice("name", name, OFU_AGENTS)
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
    if not (isinstance(sigma, str) and sigma == Allocation.PAPER):
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
    clip's effect.

    Args:
        agent: The agent (one run).
        system: The LQ system.
        users: The K users (one episode each: their noise).
        rng: Checked and unused (the policies are deterministic; the users' randomness is in ``users``).
        record: Whether the releases of every episode are stacked (``B1`` (K, p, p), ``B2`` (K, p, n); episode
            1's are the empty prefix, zeros).
        sigmas: The σ the run records (default ``agent.sigmas``).
        progress: Called with 1 after each episode.

    Returns:
        The run.

    Raises:
        ValueError: If the users do not fit the system, or the agent's plans or releases are malformed.
    """
    return run_lq_runs(agent, system, [users], [rng], record=record, sigmas=sigmas, progress=progress)[0]


def run_lq_runs(
    agent: OfuRl,
    system: LQSystem,
    users: Sequence[LQUsers],
    rngs: Sequence[np.random.Generator | int],
    *,
    record: bool = False,
    sigmas: Mapping[str, float] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[Run]:
    """:func:`run_lq` of R runs at once: run i faces ``users[i]`` and is exactly :func:`run_lq` of its agent alone.

    Args:
        agent: A batch of R runs (``agent.runs`` = R: gains, trajectories and releases with a leading run axis), or
            an agent of one run for R = 1.
        system: The LQ system.
        users: Each run's users (its own noise).
        rngs: One rng per run (checked and unused).
        record: As in :func:`run_lq`.
        sigmas: As in :func:`run_lq`.
        progress: Called with R after each episode.

    Returns:
        The R runs.

    Raises:
        ValueError: If the users do not fit the system or each other, or the agent's plans or releases are
            malformed.
    """
    for rng in rngs:
        check_rng("rng", rng)
    if not isinstance(system, LQSystem):
        raise ValueError(f"system must be an LQSystem, got {type(system).__name__}")
    r_ = len(users)
    if r_ < 1 or len(rngs) != r_:
        raise ValueError(f"one rng per run: {len(rngs)} rngs for {r_} runs' users")
    batch = agent_runs(agent, r_)
    for mine in users:
        if not isinstance(mine, LQUsers):
            raise ValueError(f"users must be LQUsers, got {type(mine).__name__}")
        if mine.horizon != system.horizon or mine.state_dim != system.state_dim:
            raise ValueError(
                f"users have (horizon, state_dim) = ({mine.horizon}, {mine.state_dim}) but the system has "
                f"({system.horizon}, {system.state_dim})"
            )
        bound = mine.noise_bound
        if bound > system.noise_bound * (1.0 + 1e-12):
            raise ValueError(f"users' noise bound {bound!r} exceeds the system's C_w = {system.noise_bound!r}")
        if len(mine) != len(users[0]):
            raise ValueError(f"every run plays as many users: {len(mine)} and {len(users[0])}")
    k_, h_, n, d = len(users[0]), system.horizon, system.state_dim, system.control_dim
    noise = np.stack([mine.noise for mine in users], axis=1)  # (K, R, H, n)
    states = np.empty((r_, k_, h_ + 1, n))
    actions = np.empty((r_, k_, h_, d))
    costs = np.empty((r_, k_, h_))
    gains = np.empty((r_, k_, h_, d, n))
    clipping = np.zeros((r_, k_))  # C_k(played) − C_k(unclipped linear policy), same noise
    logs: dict[str, list[np.ndarray]] = {}
    for k in range(k_):
        plan = agent.plan(k)
        policy = np.asarray(plan.policy, dtype=float)
        if policy.shape != (r_,) * batch + (h_, d, n):
            want = f"{r_} runs of " if batch else ""
            raise ValueError(f"the agent's policy must be {want}gains of shape ({h_}, {d}, {n}), got {policy.shape}")
        policy = lift_run(agent, policy)
        gains[:, k] = policy
        x, u, c = system.rollout(policy, noise[k])
        states[:, k], actions[:, k], costs[:, k] = x, u, c
        _, linear_actions, linear_costs = system.rollout(policy, noise[k], clip=False)
        for i in range(r_):
            if not np.array_equal(linear_actions[i], u[i]):  # a control was clipped: the played policy differs
                clipping[i, k] = float(c[i].sum()) - float(linear_costs[i].sum())
        if batch:
            released = agent.update(k, x, u, -c)
        else:
            released = agent.update(k, states[0, k], actions[0, k], -costs[0, k])
        if record:
            for log in (plan.released, released):
                for key, value in log.items():
                    logs.setdefault(key, []).append(lift_run(agent, value))
        if progress is not None:
            progress(r_)
    releases = {key: np.stack(values, axis=1) for key, values in logs.items()}  # (R, K, ...)
    for key, values in releases.items():
        if values.shape[1] != k_:
            raise ValueError(f"the agent released {key!r} in {values.shape[1]} of {k_} episodes")
    regret = np.maximum(np.asarray(system.regret(gains)), 0.0) + clipping
    chosen = dict(getattr(agent, "sigmas", {}) if sigmas is None else sigmas)
    return [
        Run(
            algorithm=agent.name,
            env=system.name,
            regret=regret[i],
            returns=-costs[i].sum(axis=1),
            states=states[i],
            actions=actions[i],
            rewards=-costs[i],
            sigmas=dict(chosen),
            releases={key: values[i] for key, values in releases.items()},
            gains=gains[i],
        )
        for i in range(r_)
    ]
