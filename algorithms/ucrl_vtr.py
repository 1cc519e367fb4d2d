"""UCRL-VTR (Ayoub et al. 2020; Jia et al. 2020), inhomogeneous, on a tabular MDP in its linear-mixture view.

The non-private baseline of seed 000 §6: value-targeted regression on one-hot features φ_V(s, a), optimistic
backward induction with the self-normalised confidence radius, greedy play with known rewards. The module also
holds what LDP-UCRL-VTR shares with it: the features (:class:`Features`), the block-diagonal and dense solvers
(:class:`BlockModel`, :class:`DenseModel`), the radius (:func:`confidence_radius`), the planner
(:func:`optimistic_plan`) and the agent base (:class:`VtrAgent`). The formulas, defaults and their reasons are on
the documentation page *The seed algorithms as implemented* (docs/explanation/seed-algorithms.md).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_index,
    check_positive,
    check_probability,
    check_rng,
    enum_values,
)

from .envs.tabular import TabularMDP
from .episodes import Plan
from .spec import AlgorithmSpec

__all__ = [
    "ALGORITHM",
    "DEFAULT_BONUS_SCALE",
    "DEFAULT_REGULARIZER",
    "DEFAULT_FAILURE_PROBABILITY",
    "return_caps",
    "default_regularizer",
    "diagonal_blocks",
    "FEATURES",
    "Features",
    "block_solve",
    "BlockModel",
    "DenseModel",
    "BONUSES",
    "Bonus",
    "confidence_radius",
    "paper_radius",
    "optimistic_plan",
    "VtrAgent",
    "UcrlVtr",
    "make_agent",
]

ALGORITHM = "ucrl-vtr"
#: c of the confidence radius. 1 is the theory (too optimistic on RiverSwim: every Q sits at its cap,
#: ties go left, for thousands of episodes); with the default λ, 0.1 learns RiverSwim S = 5 (H = 10) in
#: ~200 episodes (cumulative regret ~110 at K = 3000, against ~1600 for the uniform policy), and
#: RiverSwim S = 2, 3 and random 2- and 3-state MDPs in tens; 0.05 under-explores RiverSwim S = 2.
DEFAULT_BONUS_SCALE = 0.1


class Bonus(enum.StrEnum):
    """The form of UCRL-VTR's and LDP-UCRL-VTR's exploration bonus (its value is what options and stored tuning
    files say)."""

    #: The self-normalised confidence radius (:func:`confidence_radius`).
    CONFIDENCE = "confidence"
    #: Seed 000 §6's form (:func:`paper_radius`; LDP-UCRL-VTR's c·d^{3/4}(H − h + 1)^{3/2}k^{1/4}).
    PAPER = "paper"


#: The forms of the bonus, as the strings an option takes (:class:`Bonus`).
BONUSES: tuple[str, ...] = enum_values(Bonus)
#: λ of Λ = λI + Σ φφᵀ is (c_0/H)² by default (:func:`default_regularizer`): the seed's λ = 1
#: (Theorem 5.2) in units where V ∈ [0, H]; with RiverSwim's rewards divided by H that is 1/H².
DEFAULT_REGULARIZER = None
#: α, the failure probability of the confidence bounds (the seed's §6 uses α = 0.01).
DEFAULT_FAILURE_PROBABILITY = 0.01


def return_caps(rewards: np.ndarray) -> np.ndarray:
    """The largest return-to-go c_h = Σ_{h′>=h} max_{s,a} r_{h′}(s, a) for h = 0..H (c_H = 0).

    Args:
        rewards: The known rewards r_h(s, a), shape (H, S, A).

    Returns:
        c_0, …, c_H, shape (H+1,).

    Raises:
        ValueError: If ``rewards`` is not three-dimensional.

    Examples:
        >>> import numpy as np
        >>> return_caps(np.array([[[0.0, 1.0]], [[0.5, 0.0]]]))
        array([1.5, 0.5, 0. ])
    """
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 3:
        raise ValueError(f"rewards must have shape (H, S, A), got {r.shape}")
    best = r.reshape(r.shape[0], -1).max(axis=1)
    return np.concatenate([np.cumsum(best[::-1])[::-1], [0.0]])


def default_regularizer(rewards: np.ndarray) -> float:
    """The default ridge λ = (c_0/H)², c_0 = Σ_h max r_h the largest return (the seed's λ = 1 where V ∈ [0, H]).

    λ is in the units of ``rewards``; a return-free MDP (all rewards 0) gets λ = 1/H².

    Args:
        rewards: The known rewards r_h(s, a), shape (H, S, A).

    Returns:
        λ.

    Raises:
        ValueError: If ``rewards`` is not three-dimensional.

    Examples:
        >>> import numpy as np
        >>> default_regularizer(np.array([[[0.0, 1.0]], [[0.5, 0.0]]]))
        0.5625
    """
    r = np.asarray(rewards, dtype=float)
    c0 = float(return_caps(r)[0])
    return (c0 if c0 > 0.0 else 1.0) ** 2 / r.shape[0] ** 2


def diagonal_blocks(matrices: np.ndarray, states: int, actions: int, block: int | None = None) -> np.ndarray:
    """The S·A diagonal B×B blocks of (..., d, d) matrices, d = S·A·B.

    Args:
        matrices: The matrices, shape (..., d, d).
        states: S.
        actions: A.
        block: B, the size of a block (default S: one-hot features of every next state).

    Returns:
        The diagonal blocks, shape (..., SA, B, B) (a copy).

    Raises:
        ValueError: If the matrices do not end in (d, d).

    Examples:
        >>> import numpy as np
        >>> diagonal_blocks(np.arange(16.0).reshape(4, 4), states=1, actions=2, block=2)[1]
        array([[10., 11.],
               [14., 15.]])
    """
    m = np.asarray(matrices)
    s_ = check_count("states", states)
    sa = s_ * check_count("actions", actions)
    b = s_ if block is None else check_count("block", block)
    d = b * sa
    if m.shape[-2:] != (d, d):
        raise ValueError(f"matrices must end in ({d}, {d}), got shape {m.shape}")
    split = m.reshape(m.shape[:-2] + (sa, b, sa, b))
    return np.einsum("...bibj->...bij", split).copy()


def block_solve(gram_blocks: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """θ̂ = Λ⁻¹u, the diagonal blocks of Λ⁻¹ and ln det Λ for block-diagonal Λ (one stack per step).

    Args:
        gram_blocks: The diagonal blocks of Λ_h (the rest is 0), shape (H, SA, S, S), or with leading axes (a run
            axis: (R, H, SA, S, S)).
        target: u_h, shape (H, d), with the same leading axes.

    Returns:
        θ̂ (..., H, d), the blocks of Λ⁻¹ (..., H, SA, S, S) and ln det Λ_h (..., H).

    Raises:
        ValueError: If the shapes do not fit.
    """
    g = np.asarray(gram_blocks, dtype=float)
    if g.ndim < 4 or g.shape[-2] != g.shape[-1]:
        raise ValueError(f"gram_blocks must have shape (H, SA, S, S), got {g.shape}")
    lead, (h_, sa, s_, _) = g.shape[:-4], g.shape[-4:]
    u = np.asarray(target, dtype=float)
    if u.shape != (*lead, h_, sa * s_):
        raise ValueError(f"target must have shape {(*lead, h_, sa * s_)}, got {u.shape}")
    inv = np.linalg.inv(g)
    theta = np.einsum("...hbij,...hbj->...hbi", inv, u.reshape(*lead, h_, sa, s_)).reshape(*lead, h_, sa * s_)
    _, logdet = np.linalg.slogdet(g)
    return theta, inv, logdet.sum(axis=-1)


class Features:
    """The one-hot features of a tabular MDP's linear-mixture view: φ_V(s, a) holds V at the next states of (s, a).

    The next states are every state (``one-hot``, d = S²A: seed 000's §6), or only those the model allows from
    (s, a) at some step (``support``, d = S·A·B with B the largest support: a linear mixture whose features know
    which transitions are possible; FrozenLake 4×4's d is 64 deterministic and 192 slippery, against 1,024).
    Blocks are padded to B with zeros.

    Args:
        env: The tabular MDP (its transitions give the support).
        kind: ``"one-hot"`` or ``"support"`` (:data:`FEATURES`).

    Attributes:
        kind: The feature map.
        block: B, the coordinates of a block.
        index: (S·A, B): the next state of each coordinate of block (s, a).
        mask: (S·A, B): which coordinates of a block are real (not padding).
        full: Whether the features are the one-hot ones (every block holds every state in order).
        dim: d = S·A·B.
    """

    def __init__(self, env: TabularMDP, kind: str = "one-hot") -> None:
        self.kind = check_choice("features", kind, FEATURES)
        s_, a_ = env.states, env.actions
        if self.kind == "one-hot":
            self.block = s_
            self.index = np.broadcast_to(np.arange(s_), (s_ * a_, s_)).copy()
            self.mask = np.ones((s_ * a_, s_), dtype=bool)
            self.full = True
        else:
            allowed = (np.asarray(env.transitions) > 0).any(axis=0).reshape(s_ * a_, s_)
            self.block = int(allowed.sum(axis=1).max())
            self.index = np.zeros((s_ * a_, self.block), dtype=np.int64)
            self.mask = np.zeros((s_ * a_, self.block), dtype=bool)
            for b, row in enumerate(allowed):
                nxt = np.flatnonzero(row)
                self.index[b, : nxt.size], self.mask[b, : nxt.size] = nxt, True
            self.full = bool(self.block == s_ and self.mask.all() and np.all(self.index == np.arange(s_)))
        self.states, self.actions = s_, a_
        self.dim = s_ * a_ * self.block

    def values(self, v: np.ndarray, blocks: np.ndarray | None = None) -> np.ndarray:
        """The block coordinates of V, at every block or at one block per step; padding is 0.

        Args:
            v: V, shape (S,) (or (H, S) with ``blocks``); leading axes (e.g. a run axis) are kept.
            blocks: One block s·A + a per step, shape (H,); ``None`` for every block.

        Returns:
            (S·A, B) over every block, or (H, B) at ``blocks``; for one-hot features V itself (bit for bit).
        """
        if self.full:
            if blocks is None:
                return np.broadcast_to(v[..., None, :], v.shape[:-1] + (self.states * self.actions, self.block))
            return v
        if blocks is None:
            return np.where(self.mask, v[..., self.index], 0.0)
        return np.where(self.mask[blocks], np.take_along_axis(v, self.index[blocks], axis=-1), 0.0)


#: The feature maps of :class:`Features`.
FEATURES: tuple[str, ...] = ("one-hot", "support")


class BlockModel:
    """The fitted model when Σ_h is block diagonal: θ̂_h and the diagonal blocks of Σ_h⁻¹.

    Called with (h, V) it returns ⟨θ̂_h, φ_V(s, a)⟩ and ‖φ_V(s, a)‖²_{Σ_h⁻¹} for every (s, a), both
    (S, A): θ̂[block]·V and Vᵀ Σ⁻¹[block, block] V (V at the block's coordinates, :class:`Features`).

    Args:
        theta: θ̂_h, shape (H, d), or (R, H, d) for R runs (V is then (R, S) and both outputs (R, S, A)).
        inverse_blocks: The diagonal blocks of Σ_h⁻¹, shape (H, SA, B, B) (with the same run axis).
        states: S.
        actions: A.
        features: The feature map (``None``: one-hot).
    """

    def __init__(
        self, theta: np.ndarray, inverse_blocks: np.ndarray, states: int, actions: int, features: Features | None = None
    ) -> None:
        self.theta = np.asarray(theta, dtype=float)
        self.inverse_blocks = np.asarray(inverse_blocks, dtype=float)
        self.states, self.actions = states, actions
        self.features = features

    def __call__(self, h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s_, a_ = self.states, self.actions
        lead = self.theta.shape[:-2]
        theta, inverse = self.theta[..., h, :], self.inverse_blocks[..., h, :, :, :]
        if self.features is None or self.features.full:
            mean = _matvec(theta.reshape(*lead, s_, a_, s_), v)
            quad = _matvec(_matvec(inverse, v), v)
            return mean, quad.reshape(*lead, s_, a_)
        vb = self.features.values(v)  # (..., SA, B)
        mean = np.einsum("...bi,...bi->...b", theta.reshape(*lead, s_ * a_, -1), vb)
        quad = np.einsum("...bi,...bij,...bj->...b", vb, inverse, vb)
        return mean.reshape(*lead, s_, a_), quad.reshape(*lead, s_, a_)


def _matvec(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``m @ v`` with ``v`` (..., n) shared by every matrix of ``m`` (..., X, Y, n) that follows its leading axes:
    (..., X, Y) — for one run (no leading axes), exactly ``m @ v``."""
    if v.ndim == 1:
        return m @ v
    shaped = v.reshape(v.shape[:-1] + (1,) * (m.ndim - v.ndim - 1) + (v.shape[-1], 1))
    return (m @ shaped)[..., 0]


class DenseModel:
    """The fitted model for dense Σ_h (H, d, d) and u_h (H, d), solved step by step.

    At step h, once V_{h+1} is known, one solve Σ_h X = [u_h | φ_V(s, a) for all (s, a)] gives θ̂_h
    and every Σ_h⁻¹φ_V(s, a) (d × (1 + SA) right-hand sides; cheaper than inverting Σ_h). Called with (h, V) it
    returns what :class:`BlockModel` returns.

    Args:
        gram: Σ_h, shape (H, d, d), or (R, H, d, d) for R runs (V is then (R, S) and the outputs (R, S, A), one
            batched solve per step).
        target: u_h, shape (H, d) (with the same run axis).
        states: S.
        actions: A.
        features: The feature map (``None``: one-hot).

    Raises:
        ValueError: If ``gram`` or ``target`` has the wrong shape.
    """

    def __init__(
        self, gram: np.ndarray, target: np.ndarray, states: int, actions: int, features: Features | None = None
    ) -> None:
        g = np.asarray(gram, dtype=float)
        block = states if features is None else features.block
        d = states * actions * block
        if g.ndim < 3 or g.shape[-2:] != (d, d):
            raise ValueError(f"gram must have shape (H, {d}, {d}), got {g.shape}")
        u = np.asarray(target, dtype=float)
        if u.shape != g.shape[:-1]:
            raise ValueError(f"target must have shape {g.shape[:-1]}, got {u.shape}")
        self.gram, self.target = g, u
        self.states, self.actions, self.block, self.features = states, actions, block, features
        sa = states * actions
        self._lead = g.shape[:-3]
        self._rhs = np.zeros((*self._lead, d, 1 + sa))
        self._features = self._rhs[..., 1:].reshape(*self._lead, sa, block, sa)  # φ_V(s, a) as column s·A + a
        self._blocks = np.arange(sa)

    def __call__(self, h: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s_, a_, sa, lead = self.states, self.actions, self.states * self.actions, self._lead
        vb = v[..., None, :] if self.features is None else self.features.values(v)  # (..., 1, B) or (..., SA, B)
        self._rhs[..., 0] = self.target[..., h, :]
        # the blocks' diagonal, indexed past the leading axes, comes first: (SA, ..., B)
        self._features[..., self._blocks, :, self._blocks] = np.moveaxis(
            np.broadcast_to(vb, (*lead, sa, self.block)), -2, 0
        )
        x = np.linalg.solve(self.gram[..., h, :, :], self._rhs)
        diagonal = np.moveaxis(x[..., 1:].reshape(*lead, sa, self.block, sa)[..., self._blocks, :, self._blocks], 0, -2)
        if self.features is None or self.features.full:
            mean = _matvec(x[..., 0].reshape(*lead, s_, a_, s_), v)
            quad = _matvec(diagonal, v)
            return mean, quad.reshape(*lead, s_, a_)
        mean = np.einsum("...bi,...bi->...b", x[..., 0].reshape(*lead, sa, self.block), vb)
        quad = np.einsum("...bi,...bi->...b", diagonal, vb)
        return mean.reshape(*lead, s_, a_), quad.reshape(*lead, s_, a_)

    def theta(self) -> np.ndarray:
        """θ̂_h = Σ_h⁻¹u_h for every step.

        Returns:
            θ̂, shape (H, d) (with the leading run axis, if any).
        """
        return np.linalg.solve(self.gram, self.target[..., None])[..., 0]

    def logdet(self) -> np.ndarray:
        """ln det Σ_h for every step.

        Returns:
            ln det Σ_h, shape (H,) (with the leading run axis, if any); −inf where det Σ_h <= 0 (Σ_h not positive
            definite: the noise beat the shift).
        """
        sign, logdet = np.linalg.slogdet(self.gram)
        return np.where(sign > 0, logdet, -np.inf)


def confidence_radius(
    logdet: np.ndarray,
    value_ranges: np.ndarray,
    dim: int,
    theta_bound: float,
    failure_probability: float,
    *,
    rho_min: float | np.ndarray,
    rho_max: float | np.ndarray,
    gamma: float | np.ndarray = 0.0,
    scale: float = 1.0,
) -> np.ndarray:
    """β_h = scale·[(B_h/2)·sqrt(2 ln(H/α) + max(ln det Σ_h − d ln ρ_min, 0)) + sqrt(ρ_max)·S_θ + γ/sqrt(ρ_min)].

    The self-normalised bound with a regulariser whose eigenvalues lie in [ρ_min, ρ_max]
    (Abbasi-Yadkori et al. 2011; with noise, Shariff & Sheffet 2018 Prop. 4). Without noise ρ_min = ρ_max = λ,
    γ = 0. ``rho_min``, ``rho_max`` and ``gamma`` are numbers, or one per step (a regulariser and noise of
    per-step σ).

    Args:
        logdet: ln det Σ_h, shape (H,), or (R, H) for R runs (β is then (R, H)).
        value_ranges: B_h, the range of the regression target at each step, shape (H,).
        dim: d.
        theta_bound: S_θ >= ‖θ_h‖.
        failure_probability: α.
        rho_min: The regulariser's smallest eigenvalue.
        rho_max: The regulariser's largest eigenvalue.
        gamma: A bound on the norm of the noise in u (0 without noise).
        scale: c, the multiplier on the radius (1: the theory).

    Returns:
        β, shape (H,) (or (R, H)).
    """
    ld = np.asarray(logdet, dtype=float)
    b = np.asarray(value_ranges, dtype=float)
    h_ = ld.shape[-1]
    if np.ndim(rho_min) or np.ndim(rho_max) or np.ndim(gamma):
        lo, hi, g = (np.broadcast_to(np.asarray(x, dtype=float), (h_,)) for x in (rho_min, rho_max, gamma))
        return scale * (
            0.5 * b * np.sqrt(2.0 * math.log(h_ / failure_probability) + np.maximum(ld - dim * np.log(lo), 0.0))
            + np.sqrt(hi) * theta_bound
            + g / np.sqrt(lo)
        )
    ratio = np.maximum(ld - dim * math.log(rho_min), 0.0)
    return scale * (
        0.5 * b * np.sqrt(2.0 * math.log(h_ / failure_probability) + ratio)
        + math.sqrt(rho_max) * theta_bound
        + gamma / math.sqrt(rho_min)
    )


def paper_radius(
    logdet: np.ndarray,
    value_ranges: np.ndarray,
    *,
    dim: int,
    pairs: int,
    regularizer: float,
    episodes: int,
    scale: float,
) -> np.ndarray:
    """Seed 000 §6's radius for UCRL-VTR, as we read it: β_h = c·sqrt(d₁) + B_h·sqrt(2 ln K + ln(det Λ_h / λ^d)).

    The seed prints sqrt(β) = c·sqrt(d₁) + (H − h + 1)·sqrt(2 log(1/K)) + log det M with d₁ = SA; as printed the
    root is of a negative number and ln det M is unnormalised. We read log(1/K) as Jia et al.'s log(1/δ) at
    δ = 1/K, put ln det M under the root with ln λ^d taken off (Jia et al.'s ln(det M/det λI)) and measure the
    range H − h + 1 in the rewards' units (B_h, the cap of V_{h+1}: (H − h)/H with rewards divided by H).

    Args:
        logdet: ln det Λ_h, shape (H,).
        value_ranges: B_h, shape (H,).
        dim: d (of Λ).
        pairs: d₁ = SA.
        regularizer: λ.
        episodes: K.
        scale: c.

    Returns:
        β, shape (H,).
    """
    ld = np.asarray(logdet, dtype=float)
    ratio = np.maximum(ld - dim * math.log(regularizer), 0.0)
    return scale * math.sqrt(pairs) + np.asarray(value_ranges, dtype=float) * np.sqrt(2.0 * math.log(episodes) + ratio)


def optimistic_plan(
    rewards: np.ndarray,
    model: Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray]],
    beta: np.ndarray,
    caps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward induction with the optimistic Q of UCRL-VTR, vectorised over (s, a).

    For R runs at once, ``beta`` is (R, H) and the model maps V (R, S) to (R, S, A); every output then has a
    leading run axis.

    Args:
        rewards: r_h(s, a), shape (H, S, A).
        model: ``model(h, V)`` returns ⟨θ̂_h, φ_V(s, a)⟩ and ‖φ_V(s, a)‖²_{Σ_h⁻¹}, both (S, A)
            (:class:`BlockModel`, :class:`DenseModel`).
        beta: The radii β_h, shape (H,).
        caps: The caps c_h of Q, shape (H+1,) (:func:`return_caps`).

    Returns:
        The greedy policy (H, S) (ints; ties to the lowest action), Q (H, S, A) and V (H+1, S).
    """
    h_, s_, a_ = rewards.shape
    beta = np.asarray(beta, dtype=float)
    lead = beta.shape[:-1]
    v = np.zeros((*lead, h_ + 1, s_))
    q = np.empty((*lead, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        mean, quad = model(h, v[..., h + 1, :])
        bonus = beta[..., h, None, None] * np.sqrt(np.maximum(quad, 0.0))
        q[..., h, :, :] = np.clip(rewards[h] + mean + bonus, 0.0, caps[h])
        v[..., h, :] = q[..., h, :, :].max(axis=-1)
    return q.argmax(axis=-1), q, v


class VtrAgent:
    """What UCRL-VTR and LDP-UCRL-VTR share: optimistic planning and the regression inputs of an episode.

    Subclasses aggregate the regression inputs (:meth:`_absorb`, returning the episode's releases)
    and solve for θ̂, the diagonal blocks of the inverse Gram matrices and their log-dets plus the
    radius β (:meth:`_solve`).

    Runs. A subclass that sets ``_run_axis`` keeps its state with a leading run axis of ``_count`` runs
    (``runs`` of them, or one for a scalar agent, ``runs`` None): its model, β, values and policies carry that axis
    inside, and the protocol's arrays carry it outside only when ``runs`` is not None (:meth:`_lift` on the way in,
    :meth:`_drop` on the way out) — a scalar agent is the batch of one.

    Args:
        env: The tabular MDP.
        episodes: K.
        bonus_scale: c, the multiplier on the radius.
        regularizer: λ (``None``: :func:`default_regularizer`).
        failure_probability: α.
        features: ``"one-hot"`` or ``"support"`` (:class:`Features`).
        runs: R for a batch of R runs (subclasses with a run axis only), ``None`` for one run.

    Raises:
        ValueError: If ``env`` is not a TabularMDP, or ``runs`` is given to an agent without a run axis.
    """

    name: str = ALGORITHM
    #: whether the agent's state carries a leading run axis (LDP-UCRL-VTR's); UCRL-VTR's is one run without it
    _run_axis: bool = False

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        *,
        bonus_scale: float,
        regularizer: float | None,
        failure_probability: float,
        features: str = "one-hot",
        runs: int | None = None,
    ) -> None:
        if not isinstance(env, TabularMDP):
            raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
        if runs is not None and not self._run_axis:
            raise ValueError(f"{type(self).__name__} simulates one run at a time: runs must be None, got {runs!r}")
        self.features = Features(env, features)
        self.env = env
        self.episodes = check_count("episodes", episodes)
        self.bonus_scale = check_positive("bonus_scale", bonus_scale)
        self.regularizer = (
            default_regularizer(env.rewards) if regularizer is None else check_positive("regularizer", regularizer)
        )
        self.failure_probability = check_probability("failure_probability", failure_probability)
        self.horizon, self.states, self.actions = env.rewards.shape
        self.dim = self.features.dim
        self.block = self.features.block
        self.theta_bound = math.sqrt(self.states * self.actions)
        self._rewards = env.rewards.copy()
        self.caps = return_caps(self._rewards)
        #: R for a batch of R runs (arrays with a leading run axis), None for one run (no run axis)
        self.runs: int | None = runs
        self._count = 1 if runs is None else runs
        self._lead: tuple[int, ...] = (self._count,) if self._run_axis else ()
        self._target = np.zeros((*self._lead, self.horizon, self.dim))
        self._values: np.ndarray | None = None
        self._planned: int | None = None
        self._steps = np.arange(self.horizon)
        self.sigmas: dict[str, float] = {}
        self.declaration: PrivacyDeclaration | None = None

    # -- to be provided by subclasses ------------------------------------------------------
    def _solve(self, k: int) -> tuple[Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """The fitted model (see :func:`optimistic_plan`) and β (H,) before episode ``k``."""
        raise NotImplementedError

    def _absorb(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> Mapping[str, np.ndarray]:
        """Aggregate one episode: φ_h = V_{h+1} on block ``blocks[h]`` (``values`` (H, S)), target ``targets`` (H,)."""
        raise NotImplementedError

    # -- runs ------------------------------------------------------------------------------
    @property
    def _outer(self) -> tuple[int, ...]:
        """The leading axes of the protocol's arrays: (R,) for a batch of R runs, () for one run."""
        return () if self.runs is None else (self.runs,)

    def _lift(self, x: Any) -> np.ndarray:
        """A protocol array as the state holds it: with its run axis (a view; a scalar agent's gets one of 1)."""
        x = np.asarray(x)
        return x[None] if self._run_axis and self.runs is None else x

    def _drop(self, x: np.ndarray) -> np.ndarray:
        """An array of the state as the protocol returns it: a scalar agent's without its run axis."""
        return x[0] if self._run_axis and self.runs is None else x

    # -- the protocol ------------------------------------------------------------------------
    def plan(self, k: int) -> Plan:
        """The greedy policy of the optimistic Q-values before episode ``k``.

        Args:
            k: The episode, 0-based.

        Returns:
            The plan: the policy (H, S), or (R, H, S) for a batch of R runs.

        Raises:
            ValueError: If ``k`` is beyond the agent's episodes.
        """
        k = check_index("k", k)
        if k >= self.episodes:
            raise ValueError(f"episode k = {k} is beyond the {self.episodes} episodes the agent was built for")
        model, beta = self._solve(k)
        policy, _, v = optimistic_plan(self._rewards, model, beta, self.caps)
        self._values, self._planned = v, k
        return Plan(self._drop(policy))

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Absorb episode ``k``: regress V_{k,h+1}(s_{h+1}) on φ_{V_{k,h+1}}(s_h, a_h) for every h.

        Args:
            k: The episode, 0-based (the one planned last).
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).
            rewards: The episode's rewards (unused: the rewards are known).

        Returns:
            The episode's releases (UCRL-VTR: none; LDP-UCRL-VTR: the user's messages).

        Raises:
            ValueError: If episode ``k`` was not the one planned last.
        """
        k = check_index("k", k)
        if self._values is None or self._planned != k:
            raise ValueError(f"update of episode {k} without a plan for it (last planned: {self._planned})")
        blocks, values, targets = self.regression_inputs(states, actions)
        self._values = None
        return self._absorb(blocks, values, targets)

    def regression_inputs(self, states: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The inputs of the planned episode's regression for a trajectory.

        Uses the values of the last plan; changes nothing (so a counterfactual trajectory can be
        evaluated under the same plan).

        Args:
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).

        Returns:
            The blocks (H,) of (s_h, a_h), the values V_{k,h+1} at the block's coordinates (H, B; B = S for one-hot
            features: V_{k,h+1} itself) and the targets V_{k,h+1}(s_{h+1}) (H,) — each with a leading run axis
            for a batch of runs.

        Raises:
            ValueError: Without a plan, or if the trajectory has the wrong shape or leaves the MDP.
        """
        if self._values is None:
            raise ValueError("regression inputs need a planned episode (call plan first)")
        s = np.asarray(states)
        a = np.asarray(actions)
        runs = self._outer
        if s.shape != (*runs, self.horizon + 1) or a.shape != (*runs, self.horizon):
            raise ValueError(
                f"states must have shape {(*runs, self.horizon + 1)} and actions {(*runs, self.horizon)}, "
                f"got {s.shape} and {a.shape}"
            )
        if np.any((s < 0) | (s >= self.states)) or np.any((a < 0) | (a >= self.actions)):
            raise ValueError(f"states must lie in 0..{self.states - 1} and actions in 0..{self.actions - 1}")
        s = self._lift(s.astype(np.int64))
        values = self._values[..., 1:, :]  # V_{k,h+1}, shape (..., H, S)
        targets = np.take_along_axis(values, s[..., 1:, None], axis=-1)[..., 0]  # V_{k,h+1}(s_{h+1})
        blocks = s[..., :-1] * self.actions + self._lift(a.astype(np.int64))
        return self._drop(blocks), self._drop(self.features.values(values, blocks)), self._drop(targets)


class UcrlVtr(VtrAgent):
    """Inhomogeneous UCRL-VTR with known rewards (docs/explanation/seed-algorithms.md gives Λ, u, Q and β).

    Λ_h is block diagonal and kept as its S·A blocks; it is re-inverted block by block before each episode. The
    agent is deterministic and releases nothing.

    Args:
        env: The tabular MDP.
        episodes: K.
        bonus_scale: c, the multiplier on the confidence radius (1: the theory; default
            :data:`DEFAULT_BONUS_SCALE`), or the paper form's c.
        bonus: :class:`Bonus` (or its value): ``"confidence"`` (:func:`confidence_radius`, the default) or
            ``"paper"`` (:func:`paper_radius`).
        regularizer: λ (``None``: :func:`default_regularizer`).
        failure_probability: α.
        features: ``"one-hot"`` or ``"support"`` (:class:`Features`).
    """

    name = ALGORITHM

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        *,
        bonus_scale: float = DEFAULT_BONUS_SCALE,
        bonus: Bonus | str = Bonus.CONFIDENCE,
        regularizer: float | None = DEFAULT_REGULARIZER,
        failure_probability: float = DEFAULT_FAILURE_PROBABILITY,
        features: str = "one-hot",
    ) -> None:
        self.bonus = check_choice("bonus", bonus, tuple(Bonus))
        super().__init__(
            env,
            episodes,
            bonus_scale=bonus_scale,
            regularizer=regularizer,
            failure_probability=failure_probability,
            features=features,
        )
        eye = np.eye(self.block) * self.regularizer
        self._gram_blocks = np.broadcast_to(eye, (self.horizon, self.states * self.actions) + eye.shape).copy()

    def _solve(self, k: int) -> tuple[BlockModel, np.ndarray]:
        theta, inverse_blocks, logdet = block_solve(self._gram_blocks, self._target)
        model = BlockModel(theta, inverse_blocks, self.states, self.actions, self.features)
        if self.bonus == Bonus.PAPER:
            beta = paper_radius(
                logdet,
                self.caps[1:],
                dim=self.dim,
                pairs=self.states * self.actions,
                regularizer=self.regularizer,
                episodes=self.episodes,
                scale=self.bonus_scale,
            )
            return model, beta
        beta = confidence_radius(
            logdet,
            self.caps[1:],
            self.dim,
            self.theta_bound,
            self.failure_probability,
            rho_min=self.regularizer,
            rho_max=self.regularizer,
            scale=self.bonus_scale,
        )
        return model, beta

    def _absorb(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> Mapping[str, np.ndarray]:
        self._gram_blocks[self._steps, blocks] += values[:, :, None] * values[:, None, :]
        u = self._target.reshape(self.horizon, self.states * self.actions, self.block)
        u[self._steps, blocks] += values * targets[:, None]
        return {}

    def gram(self) -> np.ndarray:
        """A dense copy of Λ_h.

        Returns:
            Λ, shape (H, d, d).
        """
        sa, s_ = self.states * self.actions, self.block
        out = np.zeros((self.horizon, sa, s_, sa, s_))
        idx = np.arange(sa)
        out[:, idx, :, idx, :] = self._gram_blocks.transpose(1, 0, 2, 3)
        return out.reshape(self.horizon, self.dim, self.dim)

    def target(self) -> np.ndarray:
        """A copy of u_h.

        Returns:
            u, shape (H, d).
        """
        return self._target.copy()


_OPTIONS = ("bonus_scale", "bonus", "regularizer", "failure_probability", "features")


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
) -> UcrlVtr:
    """A :class:`UcrlVtr` sized to ``env`` for ``episodes`` episodes.

    The agent is deterministic and adds no noise.

    Args:
        name: ``"ucrl-vtr"``.
        env: The tabular MDP.
        episodes: K.
        rng: A Generator or seed (checked, unused).
        epsilon: Ignored.
        delta: Ignored.
        sigma: Must stay ``"paper"``.
        **options: ``bonus_scale``, ``bonus``, ``regularizer``, ``failure_probability``, ``features``
            (:class:`UcrlVtr`).

    Returns:
        The agent.

    Raises:
        ValueError: For another name, a ``sigma`` other than ``"paper"`` or an unknown option.
    """
    check_choice("name", name, (ALGORITHM,))
    check_rng("rng", rng)
    if not (isinstance(sigma, str) and sigma == Allocation.PAPER):
        raise ValueError(f"ucrl-vtr is not private and adds no noise: sigma must be left at 'paper', got {sigma!r}")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"ucrl-vtr does not take option(s) {', '.join(unknown)} (only {', '.join(_OPTIONS)})")
    return UcrlVtr(env, episodes, **options)


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`): the non-private baseline.
REGISTRATIONS = (AlgorithmSpec(ALGORITHM, make_agent, summary="non-private UCRL-VTR (the baseline of seeds 000/001)"),)
