"""LinOpt-VI and LinOpt-PO and their private versions (seed 004): the privatizer (four binary-tree counters per
step) and the agents; the radii they use are in :mod:`dpkit.algorithms.linopt.radii` (see
:mod:`dpkit.algorithms.linopt`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.sensitivity import Relation, clip_norm
from dpkit.accountant.tree import (
    BinaryCounter,
    max_psums_per_prefix,
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

from ..envs.features import LinearMixture
from ..envs.tabular import TabularMDP
from ..episodes import Plan, per_step, resolve_sigmas, step_column
from .declaration import declare_privacy
from .radii import DEFAULT_ALPHA, DEFAULT_REGULARIZATION, confidence_radii, noise_shift, paper_eta, target_noise_bound

__all__ = [
    "RELEASES",
    "VARIANTS",
    "LINOPT_AGENTS",
    "DEFAULT_BONUS_SCALE",
    "PRIVATE_REGULARIZATION",
    "TUNED",
    "LEARNING",
    "PRESETS",
    "Privatizer",
    "LinOpt",
    "PrivateLinOpt",
    "make_agent",
]

#: The names of the four statistics' counters, as in the declaration.
RELEASES: tuple[str, ...] = ("B_{h,p,1}", "B_{h,p,2}", "B_{h,r,1}", "B_{h,r,2}")
#: ``vi``: optimistic value iteration (Algorithm 1); ``po``: optimistic policy optimisation (Algorithm 2).
VARIANTS: tuple[str, ...] = ("vi", "po")
LINOPT_AGENTS: tuple[str, ...] = ("linopt-vi", "linopt-po", "private-linopt-vi", "private-linopt-po")
#: Multiplier on the radii of Lemma 3.1: the paper's 1 (Algorithm 1's bonuses are β_p(α)‖φ‖ and β_r(α)‖ϕ‖).
DEFAULT_BONUS_SCALE: float = 1.0
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
#: The constants under which both variants learn in the report's world (``preset="learning"``): :data:`TUNED`, and
#: for PO the step size η = 1 (the paper's η = √(2 log A/(H²K)) ≈ 0.007 for A = 2, H = 4, K = 2000 moves the
#: logits too little for the noisy Q of the private agent: at ε = 1, σ tight, RiverSwim S = 2, K = 2000 it stays at
#: 0.97 × the uniform policy's regret, against 0.52 at η = 1). VI takes no η: it ignores it.
LEARNING: Mapping[str, Any] = MappingProxyType({**TUNED, "eta": 1.0})
#: The presets :func:`make_agent` knows: ``"paper"`` (the defaults), ``"tuned"`` (:data:`TUNED`) and
#: ``"learning"`` (:data:`LEARNING`).
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {"paper": MappingProxyType({}), "tuned": TUNED, "learning": LEARNING}
)


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

    ``rng`` may also be a sequence of Generators, one per run: the privatizer is then a batch of ``len(rng)``
    independent privatizers (:attr:`runs`), whose releases and items carry a leading run axis; run i's counters draw
    from the children of ``rng[i]`` exactly what a privatizer of that Generator draws.

    Schedule ``before-episode``: :meth:`release` at the start of episode k returns the noisy sums
    over episodes 1..k−1 (zeros at k = 1, when nothing has been added), then :meth:`add` inserts
    episode k's items.

    Args:
        horizon: H.
        d1: The dimension of the transition features φ.
        d2: The dimension of the reward features ϕ.
        episodes: K, the counters' capacity.
        sigmas: σ of each of the four releases (:data:`RELEASES`): one number >= 0, or one per step.
        rng: A Generator or seed, or a sequence of Generators, one per run (a batch).

    Raises:
        ValueError: If ``sigmas`` does not map exactly the four releases, or a σ is out of range.
    """

    def __init__(
        self,
        horizon: int,
        d1: int,
        d2: int,
        episodes: int,
        sigmas: Mapping[str, float],
        rng: np.random.Generator | int | Sequence[np.random.Generator],
    ) -> None:
        self.horizon = check_count("horizon", horizon)
        self.d1 = check_count("d1", d1)
        self.d2 = check_count("d2", d2)
        self.episodes = check_count("episodes", episodes)
        if not isinstance(sigmas, Mapping) or sorted(sigmas) != sorted(RELEASES):
            got = sorted(sigmas) if isinstance(sigmas, Mapping) else sigmas
            raise ValueError(f"sigmas must map exactly the releases {list(RELEASES)} to σ >= 0, got {got!r}")
        self.sigmas: dict[str, float | np.ndarray] = {n: _counter_sigma(n, sigmas[n], horizon) for n in RELEASES}
        gens = _run_generators(rng)
        #: The number of runs of a batch (``None``: one privatizer, no run axis).
        self.runs: int | None = None if gens is None else len(gens)
        # counter n of run i draws from child n of run i's Generator: a batch of one is the privatizer of its Generator
        children: list[Any] = (
            check_rng("rng", rng).spawn(len(RELEASES))
            if gens is None
            else [list(runs) for runs in zip(*(g.spawn(len(RELEASES)) for g in gens))]
        )
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
        """The noisy prefix sums over the episodes added so far.

        Returns:
            {release name: prefix} (fresh copies; a batch's with a leading run axis).
        """
        return {n: c.prefix() for n, c in self.counters.items()}

    def add(self, gram_p: np.ndarray, target_p: np.ndarray, gram_r: np.ndarray, target_r: np.ndarray) -> None:
        """Insert one episode's items into the four counters (a batch's with a leading run axis).

        Args:
            gram_p: φφᵀ, shape (H, d1, d1).
            target_p: φ·V_{h+1}(s_{h+1}), shape (H, d1).
            gram_r: ϕϕᵀ, shape (H, d2, d2).
            target_r: ϕ·r, shape (H, d2).
        """
        for name, item in zip(RELEASES, (gram_p, target_p, gram_r, target_r)):
            self.counters[name].add(item)

    def __repr__(self) -> str:
        runs = "" if self.runs is None else f", runs={self.runs}"
        return f"Privatizer(horizon={self.horizon}, d1={self.d1}, d2={self.d2}, sigmas={self.sigmas}, t={self.t}{runs})"


def _run_generators(rng: object) -> tuple[np.random.Generator, ...] | None:
    """The per-run Generators of a batch (``rng`` a sequence of Generators), or ``None`` for one Generator or seed."""
    if isinstance(rng, Sequence) and not isinstance(rng, str):
        if not rng:
            raise ValueError("rng must hold at least one Generator (one per run), got an empty sequence")
        return tuple(check_rng(f"rng[{i}]", g) for i, g in enumerate(rng))
    return None


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

    The agent follows :class:`~dpkit.algorithms.episodes.EpisodicAgent`: ``plan(k)`` then ``update(k, …)``
    for k = 0, 1, … in order.

    Args:
        env: The tabular MDP, seen through its one-hot linear-mixture features (d1 = S²A, d2 = SA);
            only its sizes are read.
        episodes: K, the number of episodes (it enters the radii, η and the counters' capacity).
        rng: A numpy ``Generator`` or an integer seed (the privatizer's noise; unused without noise); or a sequence
            of Generators, one per run: the agent is then a batch of ``len(rng)`` independent runs (:attr:`runs`)
            whose plans, trajectories, items and values carry a leading run axis, run i exactly the agent of
            ``rng[i]`` (up to the rounding of batched linear algebra). The agent of one Generator is the batch of
            one.
        variant: ``"vi"`` (greedy policies (H, S) of ints) or ``"po"`` (stochastic policies (H, S, A)).
        regularization: λ > 0 of the ridge regulariser λI (default :data:`DEFAULT_REGULARIZATION` = 1; the paper
            states none). :class:`PrivateLinOpt` adds it to the shift 2Σ and defaults to the paper's 0
            (:data:`PRIVATE_REGULARIZATION`).
        bonus_scale: Multiplier >= 0 on the radii β_p, β_r of Lemma 3.1 (default :data:`DEFAULT_BONUS_SCALE`, the
            paper's 1; tuned 0.05, :data:`TUNED`).
        alpha: Confidence level α ∈ (0, 1) of the radii (default :data:`DEFAULT_ALPHA`).
        eta: PO step size > 0; ``None`` is the paper's :func:`paper_eta`. Only for ``variant="po"``.
            The paper's η moves the logits by at most sqrt(2K ln|A|)·ΔQ/H in K episodes: tuned for the
            worst-case bound, slow on small problems (and with the private shift's shrunken ΔQ the
            policy stays near uniform for hundreds of episodes); η ≈ 1 learns much faster there.

    Raises:
        ValueError: If an option is out of range, ``regularization`` is 0 without noise, or ``eta`` is given to VI.
    """

    private: bool = False
    #: The number of runs of a batch (``None``: one run, no run axis).
    runs: int | None = None

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator] = 0,
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
        gens = _run_generators(rng)
        self.runs = None if gens is None else len(gens)
        self.sigmas: dict[str, float] = self._resolve_sigmas()
        self.privatizer = Privatizer(
            h_, self.d1, self.d2, self.episodes, self._counter_sigmas(), check_rng("rng", rng) if gens is None else gens
        )
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
        self._logits = np.zeros(self._run_shape + (h_, s_, a_)) if self.variant == "po" else None
        self._next = 0  # the episode to be planned/updated next
        # (k, V (H+1, S), Q (H, S, A)), with the run axis of a batch
        self._planned: tuple[int, np.ndarray, np.ndarray] | None = None
        #: The optimistic Q_h(s, a) (H, S, A) and V_h(s) (H+1, S) of the last plan (``None`` before); a batch: (R, …).
        self.last_q: np.ndarray | None = None
        self.last_v: np.ndarray | None = None

    # -- the run axis: a scalar agent is the batch of one ---------------------------------------
    @property
    def _run_shape(self) -> tuple[int, ...]:
        """The leading run axis of the agent's arrays: ``()`` for one run, ``(R,)`` for a batch."""
        return () if self.runs is None else (self.runs,)

    def _runs_in(self, x: np.ndarray) -> np.ndarray:
        """``x`` with a leading run axis (added for one run)."""
        return x[None] if self.runs is None else x

    def _runs_out(self, x: np.ndarray) -> np.ndarray:
        """``x`` as the agent's caller sees it (the run axis dropped for one run)."""
        return x[0] if self.runs is None else x

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
        """The current PO policy π^k (the VI policy exists only once planned).

        Returns:
            π^k, shape (H, S, A) ((R, H, S, A) for a batch).

        Raises:
            ValueError: For the VI variant.
        """
        if self._logits is None:
            raise ValueError(f"variant {self.variant!r} has no standing policy; call plan(k)")
        z = self._logits - self._logits.max(axis=-1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=-1, keepdims=True)

    def _optimistic_values(self, prefixes: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(V (H+1, S), Q (H, S, A), policy) from the released prefixes: the backward recursion (a batch: every
        array with its leading run axis)."""
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        sa = s_ * a_
        eye_p, eye_r = np.eye(self.d1), np.eye(self.d2)
        gram_p = self._runs_in(np.asarray(prefixes["B_{h,p,1}"]))
        runs = gram_p.shape[0]
        lam_p = (gram_p + step_column(self.shift_p, 3) * eye_p).reshape(runs, h_, sa, s_, sa, s_)
        lam_r = self._runs_in(np.asarray(prefixes["B_{h,r,1}"])) + step_column(self.shift_r, 3) * eye_r
        u_p = self._runs_in(np.asarray(prefixes["B_{h,p,2}"])).reshape(runs, h_, sa, s_)
        if self.dense:
            inv_p = np.linalg.inv(lam_p.reshape(runs, h_, self.d1, self.d1)).reshape(runs, h_, sa, s_, sa, s_)
            theta_p = np.einsum("rhiajb,rhjb->rhia", inv_p, u_p)
            # The S×S diagonal blocks Λ_p⁻¹[block(s,a), block(s,a)]: (R, H, SA, S, S).
            blocks = np.einsum("rhiaib->rhiab", inv_p)
        else:  # no Gram noise: Λ_p is exactly block diagonal (one-hot φ), so invert its SA blocks
            blocks = np.linalg.inv(np.einsum("rhiaib->rhiab", lam_p))
            theta_p = np.einsum("rhiab,rhib->rhia", blocks, u_p)
        inv_r = np.linalg.inv(lam_r)  # (R, H, d2, d2)
        theta_r = np.einsum("rhij,rhj->rhi", inv_r, self._runs_in(np.asarray(prefixes["B_{h,r,2}"])))
        psi = self._psi
        mean_r = np.einsum("sad,rhd->rhsa", psi, theta_r)
        width_r = np.sqrt(np.maximum(np.einsum("sad,rhde,sae->rhsa", psi, inv_r, psi), 0.0))
        base = mean_r + step_column(self.beta_r, 3) * width_r  # (R, H, S, A)
        pi = self._runs_in(self.policy()) if self.variant == "po" else None
        v = np.zeros((runs, h_ + 1, s_))
        q = np.empty((runs, h_, s_, a_))
        for h in range(h_ - 1, -1, -1):
            nxt = v[:, h + 1]
            mean_p = np.matmul(theta_p[:, h], nxt[..., None])[..., 0]  # (R, SA): θ_p[h] @ V_{h+1}, run by run
            width_p = np.sqrt(np.maximum(np.einsum("riab,ra,rb->ri", blocks[:, h], nxt, nxt), 0.0))
            bonus = (mean_p + _at(self.beta_p, h) * width_p).reshape(runs, s_, a_)
            q[:, h] = np.clip(base[:, h] + bonus, 0.0, float(h_ - h))
            v[:, h] = q[:, h].max(axis=-1) if pi is None else np.einsum("rsa,rsa->rs", pi[:, h], q[:, h])
        return self._runs_out(v), self._runs_out(q), None if pi is None else self._runs_out(pi)

    def plan(self, k: int) -> Plan:
        """The policy for episode ``k``, from the released prefixes.

        Args:
            k: The episode, 0-based (episodes in order).

        Returns:
            The plan: the policy and the released prefixes (a batch's with a leading run axis).

        Raises:
            ValueError: If ``k`` is out of order or beyond the agent's episodes.
        """
        k = check_index("k", k)
        if k != self._next:
            raise ValueError(f"episodes must be planned in order: expected k = {self._next}, got k = {k}")
        if k >= self.episodes:
            raise ValueError(f"k = {k} is beyond the {self.episodes} episodes this agent was built for")
        prefixes = self.privatizer.release()
        v, q, pi = self._optimistic_values(prefixes)
        self._planned = (k, v, q)
        self.last_q, self.last_v = q, v
        policy = q.argmax(axis=-1) if pi is None else pi
        return Plan(policy, self._released(prefixes))

    def _check_trajectory(self, k: int, states: object, actions: object, rewards: object) -> tuple[np.ndarray, ...]:
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        runs = self._run_shape
        out = []
        for name, value, shape, bound in (("states", states, (h_ + 1,), s_), ("actions", actions, (h_,), a_)):
            arr = np.asarray(value)
            if arr.shape != runs + shape or arr.dtype.kind not in "iu":
                raise ValueError(
                    f"{name} of episode {k} must be integers of shape {runs + shape}, got {arr.dtype} {arr.shape}"
                )
            if np.any((arr < 0) | (arr >= bound)):
                raise ValueError(f"{name} of episode {k} must lie in 0..{bound - 1}, got {arr.tolist()}")
            out.append(arr.astype(np.int64))
        r = np.asarray(rewards)
        if r.shape != runs + (h_,) or r.dtype.kind not in "biuf" or not np.all(np.isfinite(r)):
            what = f"{h_} finite numbers" if not runs else f"finite numbers of shape {runs + (h_,)}"
            raise ValueError(f"rewards of episode {k} must be {what}, got {r!r}")
        out.append(np.clip(r.astype(float), 0.0, 1.0))  # the declaration assumes r ∈ [0, 1]
        return tuple(out)

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Add episode ``k``'s trajectory to the counters (and, for PO, take the mirror-descent step).

        Args:
            k: The episode, 0-based (the one planned last).
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).
            rewards: r_1, …, r_H, shape (H,) (a batch: (R, H)), clipped to [0, 1].

        Returns:
            ``{}``: under JDP nothing is released about the user here.

        Raises:
            ValueError: If ``k`` was not the episode planned last, or the trajectory is malformed.
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
        """The four items episode ``k``'s trajectory adds to the counters, clipped as the declaration assumes.

        Uses the values of the plan of episode ``k``; changes nothing (so a counterfactual trajectory
        can be evaluated under the same plan).

        Args:
            k: The episode, 0-based (the one planned last).
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).
            rewards: r_1, …, r_H, shape (H,) (a batch: (R, H)).

        Returns:
            By release name: φφᵀ (H, d1, d1), φ·V_{h+1}(s_{h+1}) (H, d1), ϕϕᵀ (H, d2, d2), ϕ·r (H, d2) (a batch's
            with a leading run axis).

        Raises:
            ValueError: If episode ``k`` is not planned, or the trajectory is malformed.
        """
        if self._planned is None or self._planned[0] != k:
            raise ValueError(f"items of episode {k} need its plan; the next episode to plan is {self._next}")
        s, a, r = (self._runs_in(x) for x in self._check_trajectory(k, states, actions, rewards))
        v = self._runs_in(self._planned[1])
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        runs = v.shape[0]
        steps = np.arange(h_)
        every = np.arange(runs)[:, None]
        v_next = np.clip(v[:, 1:], 0.0, self.step_value_bounds[:, None])  # V_{h+1} ∈ [0, H − h], (R, H, S)
        blocks = np.zeros((runs, h_, s_ * a_, s_))
        blocks[every, steps, s[:, :-1] * a_ + a] = v_next  # φ_{V_{h+1}}(s_h, a_h) in its block
        phi = blocks.reshape(runs, h_, self.d1)
        for h, bound in enumerate(self.step_feature_bounds):  # ‖φ‖ <= sqrt(d1)·(H − h), 0 at step H
            phi[:, h] = clip_norm(phi[:, h], float(bound)) if bound > 0.0 else 0.0
        target = v_next[every, steps, s[:, 1:]]  # V_{h+1}(s_{h+1}), (R, H)
        psi = self._psi[s[:, :-1], a]  # (R, H, d2)
        items = (
            phi[..., :, None] * phi[..., None, :],
            phi * target[..., None],
            psi[..., :, None] * psi[..., None, :],
            psi * r[..., None],
        )
        return dict(zip(RELEASES, (self._runs_out(x) for x in items)))

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

    Args:
        env: As in :class:`LinOpt`.
        episodes: As in :class:`LinOpt`.
        rng: As in :class:`LinOpt`.
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        sigma: ``"paper"``, ``"tight"``, a number or {release: σ}.
        reading: The declaration's reading (``"theorem-6.5"``).
        relation: The neighbouring relation of ``"tight"``.
        method: The accounting method of ``"tight"``.
        variant: As in :class:`LinOpt`.
        regularization: λ >= 0 added to the shift 2Σ (default :data:`PRIVATE_REGULARIZATION`).
        bonus_scale: As in :class:`LinOpt`.
        alpha: As in :class:`LinOpt`.
        eta: As in :class:`LinOpt`.
    """

    private = True

    def __init__(
        self,
        env: TabularMDP,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator] = 0,
        *,
        epsilon: float,
        delta: float,
        sigma: str | float | Mapping[str, float] = "paper",
        reading: str = "theorem-6.5",
        relation: Relation | str | None = None,
        method: AccountingMethod | str = "exact",
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

    Args:
        name: The agent (:data:`LINOPT_AGENTS`).
        env: The tabular MDP.
        episodes: K.
        rng: A Generator or seed, or one Generator per run (a batch).
        epsilon: The target ε (the private agents need it; the others ignore it).
        delta: The target δ (likewise).
        sigma: The private agents' σ; the non-private ones take none but ``"paper"`` (the default).
        preset: ``"paper"`` (the constructor's defaults, the paper's values), ``"tuned"`` (:data:`TUNED`) or
            ``"learning"`` (:data:`LEARNING`; its η for PO only), under the explicit ``options``.
        **options: Go to the constructor: ``regularization``, ``bonus_scale``, ``alpha``, ``eta``; private also
            ``reading``, ``relation``, ``method``.

    Returns:
        The agent (:class:`LinOpt` or :class:`PrivateLinOpt`).

    Raises:
        ValueError: For an unknown name, preset or option, a private agent without ε or δ, or a non-private one
            given a σ.
    """
    name = check_choice("name", name, LINOPT_AGENTS)
    preset = check_choice("preset", preset, tuple(PRESETS))
    variant = name.rsplit("-", 1)[1]
    allowed = _PRIVATE_OPTIONS if name.startswith("private-") else _OPTIONS
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"{name} takes the options {', '.join(allowed)}; got unknown {', '.join(unknown)}")
    constants = {k: v for k, v in PRESETS[preset].items() if variant == "po" or k != "eta"}  # η is PO's alone
    options = {**constants, **options}
    if name.startswith("private-"):
        if epsilon is None or delta is None:
            raise ValueError(f"{name} is private: give epsilon and delta, got epsilon = {epsilon!r}, delta = {delta!r}")
        return PrivateLinOpt(env, episodes, rng, epsilon=epsilon, delta=delta, sigma=sigma, variant=variant, **options)
    if not (isinstance(sigma, str) and sigma == Allocation.PAPER):
        raise ValueError(f"{name} is not private and adds no noise: sigma must be left at 'paper', got {sigma!r}")
    return LinOpt(env, episodes, rng, variant=variant, **options)
