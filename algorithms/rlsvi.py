"""RLSVI (Lu, Gajane, Bai, Talebi: *RLSVI itself is Joint Differentially Private*; seed 002).

Tabular RLSVI (the seed's Algorithm 1 with Russo's β_k) adds no noise for privacy: the exploration noise
w ~ N(0, β_k/(n+1)) on every released Q-value is the privacy, under joint DP with replace-one neighbours (one
episode's rewards). The module holds the release declaration (:func:`declare_privacy`: the worst case over
datasets as (K − 1)·H releases of one equivalent σ), the agent (:class:`Rlsvi`, with its run's exact, ex-post μ),
a one-call run (:func:`rlsvi_run`) and the registration. The derivations are on the documentation page *The seed
algorithms as implemented* (docs/explanation/seed-algorithms.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration, cached_declaration
from dpkit.accountant.rlsvi import (
    RlsviRunPrivacy,
    rlsvi_paper_epsilon,
    rlsvi_rho,
    rlsvi_run_privacy,
    rlsvi_worst_case_mu,
    russo_beta,
)
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_index,
    check_positive,
    check_probability,
    check_rng,
)

from .envs.catalog import make_environment
from .envs.tabular import TabularMDP, Users
from .episodes import Plan, Run, resolve_sigmas, run_tabular
from .spec import AlgorithmSpec, ReportSpec

__all__ = ["ALGORITHM", "RELEASE", "DEFAULT_DELTA", "declare_privacy", "Rlsvi", "make_agent", "rlsvi_run"]

ALGORITHM = "rlsvi"
RELEASE = "Q-values"
# The declaration's δ when none is given: it sets the ledger only, not the noise (unless sigma="tight").
DEFAULT_DELTA = 1e-5
PAPER = "Lu, Gajane, Bai, Talebi — RLSVI itself is Joint Differentially Private (seed 002)"


@cached_declaration
def declare_privacy(
    states: int, actions: int, horizon: int, episodes: int, epsilon: float, delta: float, *, beta: float | None = None
) -> PrivacyDeclaration:
    """What RLSVI's perturbed Q-values reveal about one user's rewards, at the exploration noise.

    "σ_paper" is the equivalent per-release σ of the exploration noise at a once-visited cell; σ_tight scales it
    (i.e. β by its square) to just meet the target.

    Args:
        states: S.
        actions: A.
        horizon: H.
        episodes: K (at least 2).
        epsilon: The target ε > 0.
        delta: The target δ ∈ (0, 1).
        beta: ``None`` for Russo's β_k = ½ S H³ ln(2HSAk); a number for a constant β.

    Returns:
        The declaration: one release of (K − 1)·H Q-values at the equivalent σ, with the paper's ε.

    Raises:
        ValueError: If an argument is out of range or K < 2.
    """
    s = check_count("states", states)
    a = check_count("actions", actions)
    h = check_count("horizon", horizon)
    k = check_count("episodes", episodes)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    if beta is not None:
        beta = check_positive("beta", beta)
    if k < 2:
        raise ValueError(
            f"episodes must be >= 2 for rlsvi's ledger: with K = {k} no release depends on a user's rewards"
        )
    mu = rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k, beta=beta)
    count = (k - 1) * h
    sigma_equivalent = math.sqrt(count) / mu
    beta1 = russo_beta(states=s, actions=a, horizon=h, episode=1) if beta is None else beta
    release = DeclaredRelease(
        name=RELEASE,
        statistic="perturbed Q_h(s,a) at the user's H cells in each later episode (Δ R̂ <= 1/n, σ² = β_k/(n+1))",
        count=count,
        sensitivity_add_remove=None,
        sensitivity_replace_one=1.0,
        paper_sensitivity=1.0,
        sigma_paper=sigma_equivalent,
        paper_count=k * h * s * a,
        notes=(
            f"equivalent σ: {count} releases with Δ = 1 at this σ have the worst user's μ = {mu:.6g}",
            f"β_1 = {beta1:.6g}: a once-visited cell at episode 1 has σ = sqrt(β_1/2) = {math.sqrt(beta1 / 2):.6g}",
        ),
    )
    rho = rlsvi_rho(states=s, actions=a, horizon=h, episodes=k)
    notes = [
        "JDP through the billboard lemma: each user's actions are a function of the perturbed Q-values "
        "(released to all) and of her own states.",
        f"The paper's ρ = 2AK/(H² ln(2HSA)) = {rho:.6g} charges all S·A cells of all K episodes; only the user's "
        "H visited cells in the K − 1 later episodes depend on her rewards.",
        "Worst case over runs: every later episode sees the user's cells at n = 1; a run's own counts "
        "give a smaller exact μ (dpkit.accountant.rlsvi.rlsvi_run_privacy), but that per-run figure is "
        "data-dependent (ex-post: the counts are the users' states and actions), not a DP guarantee.",
    ]
    params: dict[str, Any] = {
        "states": s,
        "actions": a,
        "horizon": h,
        "episodes": k,
        "beta": "russo" if beta is None else beta,
        "rho_paper": rho,
        "mu_worst_case": mu,
    }
    paper_eps = rlsvi_paper_epsilon(states=s, actions=a, horizon=h, episodes=k, delta=delta) if beta is None else None
    return PrivacyDeclaration(
        algorithm=ALGORITHM,
        privacy_model="JDP",
        paper=PAPER,
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(release,),
        parameters=params,
        paper_epsilon=paper_eps,
        relations=("replace_one",),
        notes=tuple(notes),
    )


def max_last(x: np.ndarray) -> np.ndarray:
    """``x.max(axis=-1)``, folded with ``np.maximum`` over the (few) entries of the last axis.

    The same numbers, without numpy's reduction over a short innermost axis, which costs a loop per outer element
    (the actions of every run).

    Args:
        x: An array with at least one entry on its last axis.

    Returns:
        The maxima over the last axis.

    Examples:
        >>> import numpy as np
        >>> max_last(np.array([[1.0, 3.0, 2.0], [0.0, -1.0, 5.0]]))
        array([3., 5.])
    """
    out = x[..., 0].copy()
    for i in range(1, x.shape[-1]):
        np.maximum(out, x[..., i], out=out)
    return out


def _argmax_last(x: np.ndarray) -> np.ndarray:
    """``x.argmax(axis=-1)`` of finite ``x`` (the first of equal maxima), folded over the (few) entries of the last
    axis: numpy's argmax loops over every outer element."""
    best = x[..., 0].copy()
    where = np.zeros(best.shape, dtype=np.int64)
    for i in range(1, x.shape[-1]):
        better = x[..., i] > best
        where[better] = i
        np.maximum(best, x[..., i], out=best)
    return where


class Rlsvi:
    """Tabular RLSVI (seed 002's Algorithm 1, Russo's β), vectorised over (h, s, a) and over runs.

    Drive it with :func:`dpkit.algorithms.episodes.run_tabular`: :meth:`plan` draws the noise, runs the
    backward induction and returns the greedy policy (H, S) with the perturbed Q-values (H, S, A)
    released as ``"Q-values"``; :meth:`update` adds the episode's visits, rewards (clipped to
    [0, 1]) and transitions. Episodes must come in order 0, 1, …, ``episodes`` − 1, each planned
    then updated. :attr:`counts` and :attr:`variances` are n_k(h, s, a) and the noise variances of the episodes
    planned so far (K, H, S, A); :meth:`run_privacy` gives their exact per-user privacy.

    Args:
        states: S.
        actions: A.
        horizon: H.
        episodes: K.
        rng: One Generator (or an integer seed): one run. A sequence of Generators, one per run, makes a batch of
            ``len(rng)`` independent runs (:attr:`runs`): every array that :meth:`plan`, :meth:`update`,
            :attr:`counts`, :attr:`variances` and :meth:`estimates` take or give gets a leading run axis, and run i
            draws from ``rng[i]`` exactly what an agent of that Generator alone draws.
        beta: ``None`` for Russo's β_k, a number for a constant β.
        sigma: ``"paper"``, ``"tight"``, a number or ``{"Q-values": σ}``: rescales β by (σ/σ_paper)² with
            σ_paper the declaration's equivalent σ.
        epsilon: The target ε (``None``: the paper's own ε(δ); it matters for ``"tight"`` and the ledger only).
        delta: The target δ (``None``: :data:`DEFAULT_DELTA`).

    Attributes:
        name: ``"rlsvi"``.
        declaration: :func:`declare_privacy` at these sizes.
        sigmas: {"Q-values": σ} actually used.
        noise_scale: The factor on β.
        betas: β_k per episode, scaled.
        runs: ``None`` for one run, R for a batch.

    Raises:
        ValueError: If a size or option is out of range, or ``rng`` is an empty sequence.
    """

    name: str = ALGORITHM

    def __init__(
        self,
        states: int,
        actions: int,
        horizon: int,
        episodes: int,
        rng: np.random.Generator | int | Sequence[np.random.Generator],
        *,
        beta: float | None = None,
        sigma: str | float | Mapping[str, float] = "paper",
        epsilon: float | None = None,
        delta: float | None = None,
    ) -> None:
        s_ = check_count("states", states)
        a_ = check_count("actions", actions)
        h_ = check_count("horizon", horizon)
        k_ = check_count("episodes", episodes)
        self._rngs: tuple[np.random.Generator, ...] | None = None
        if isinstance(rng, Sequence) and not isinstance(rng, str):
            if not rng:
                raise ValueError("rng must hold at least one Generator (one per run), got an empty sequence")
            self._rngs = tuple(check_rng(f"rng[{i}]", g) for i, g in enumerate(rng))
            self._rng = self._rngs[0]
        else:
            self._rng = check_rng("rng", rng)
        #: The number of runs of a batch (``None``: one run, no run axis).
        self.runs: int | None = None if self._rngs is None else len(self._rngs)
        if beta is not None:
            beta = check_positive("beta", beta)
        delta = DEFAULT_DELTA if delta is None else check_probability("delta", delta)
        if epsilon is None:
            epsilon = rlsvi_paper_epsilon(states=s_, actions=a_, horizon=h_, episodes=k_, delta=delta)
        self.declaration: PrivacyDeclaration = declare_privacy(s_, a_, h_, k_, epsilon, delta, beta=beta)
        self.sigmas: dict[str, float] = resolve_sigmas(self.declaration, sigma)
        sigma_paper = self.declaration.releases[0].sigma_paper
        self.noise_scale: float = (self.sigmas[RELEASE] / sigma_paper) ** 2
        self.beta = beta
        self.states, self.actions, self.horizon, self.episodes = s_, a_, h_, k_
        if beta is None:  # Russo's β_k = ½ S H³ ln(2HSAk), k = 1..K
            base = 0.5 * s_ * h_**3 * np.log(2.0 * h_ * s_ * a_ * np.arange(1, k_ + 1, dtype=float))
        else:
            base = np.full(k_, beta)
        self.betas: np.ndarray = base * self.noise_scale
        self.betas.setflags(write=False)
        r_ = 1 if self.runs is None else self.runs
        # every statistic has a leading run axis (one run for the agent of one Generator)
        self._runs_n = np.zeros((r_, h_, s_, a_), dtype=np.int64)
        self._runs_reward_sum = np.zeros((r_, h_, s_, a_))
        self._runs_next = np.zeros((r_, h_, s_, a_, s_))  # transition counts
        self._runs_r_hat = np.zeros((r_, h_, s_, a_))
        self._runs_p_hat = np.zeros((r_, h_, s_, a_, s_))
        self._runs_counts = np.zeros((r_, k_, h_, s_, a_), dtype=np.int64)
        self._runs_variances = np.zeros((r_, k_, h_, s_, a_))
        # the arrays as the agent shows them: with the run axis for a batch, run 0's (views) for one run
        shown: Callable[[np.ndarray], np.ndarray] = (lambda x: x[0]) if self.runs is None else (lambda x: x)
        self._n, self._reward_sum = shown(self._runs_n), shown(self._runs_reward_sum)
        self._next = shown(self._runs_next)
        self._r_hat, self._p_hat = shown(self._runs_r_hat), shown(self._runs_p_hat)
        self._counts, self._variances = shown(self._runs_counts), shown(self._runs_variances)
        self._cell_base = np.arange(h_) * (s_ * a_)  # flat (h, s, a) index in a run = h·S·A + s·A + a
        self._run_base = np.arange(r_)[:, None] * (h_ * s_ * a_)  # and run i's cells start at i·H·S·A
        self._n_flat = self._runs_n.reshape(-1)  # views: updating them updates the (R, H, S, A[, S]) arrays
        self._reward_sum_flat = self._runs_reward_sum.reshape(-1)
        self._r_hat_flat = self._runs_r_hat.reshape(-1)
        self._next_rows = self._runs_next.reshape(-1, s_)
        self._p_hat_rows = self._runs_p_hat.reshape(-1, s_)
        self._p_hat_by_step = self._runs_p_hat.reshape(r_, h_, s_ * a_, s_)
        self._planned = 0  # episodes planned
        self._updated = 0  # episodes learnt from

    # -- the episodic protocol -------------------------------------------------------------

    def _normals(self, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normals of one run's ``shape`` from each run's Generator, stacked on the run axis."""
        if self._rngs is None:
            return self._rng.standard_normal(shape)[None]
        out = np.empty((len(self._rngs), *shape))
        for g, run in zip(self._rngs, out, strict=True):
            g.standard_normal(out=run)
        return out

    def plan(self, k: int) -> Plan:
        """Draw w, compute the perturbed Q-values backwards and return the greedy policy for episode ``k``.

        Args:
            k: The episode, 0-based (episodes in order, each after the previous one's update).

        Returns:
            The plan: the policy (H, S) and the released Q-values (H, S, A), with a leading run axis for a batch.

        Raises:
            ValueError: If ``k`` is out of order or beyond the agent's episodes.
        """
        k = check_index("k", k)
        if k != self._planned or self._updated != self._planned:
            raise ValueError(
                f"episode k={k} planned out of order: expected k={self._planned}"
                + ("" if self._updated == self._planned else f" after update of episode {self._planned - 1}")
            )
        if k >= self.episodes:
            raise ValueError(f"episode k={k} beyond the agent's {self.episodes} episodes")
        var = self._runs_variances[:, k]
        np.divide(self.betas[k], self._runs_n + 1.0, out=var)
        q = self._normals(var.shape[1:])
        q *= np.sqrt(var)
        q += self._runs_r_hat  # q = R̂ + w; the loop adds P̂ᵀV_{h+1} (V_{H+1} = 0)
        rows = q.reshape(q.shape[0], self.horizon, -1, 1)  # views (R, H, S·A, 1): one matrix-vector product per step
        p_rows = self._p_hat_by_step
        v = max_last(q[:, -1])
        for h in range(self.horizon - 2, -1, -1):
            rows[:, h] += np.matmul(p_rows[:, h], v[:, :, None])
            v = max_last(q[:, h])
        self._runs_counts[:, k] = self._runs_n
        self._planned += 1
        policy = _argmax_last(q)
        if self.runs is None:
            return Plan(policy[0], {RELEASE: q[0]})
        return Plan(policy, {RELEASE: q})

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Add episode ``k``'s trajectory to the counts and estimates.

        Releases nothing (the Q-values are released when planning).

        Args:
            k: The episode, 0-based (the one planned last).
            states: s_1, …, s_{H+1}, shape (H+1,) (a batch: (R, H+1)).
            actions: a_1, …, a_H, shape (H,) (a batch: (R, H)).
            rewards: r_1, …, r_H, shape (H,), clipped to [0, 1] (a batch: (R, H)).

        Returns:
            ``{}``.

        Raises:
            ValueError: If ``k`` is out of order or the trajectory is malformed.
        """
        k = check_index("k", k)
        if k != self._updated or self._planned != k + 1:
            expected = f"k={self._planned - 1}" if self._planned > self._updated else f"plan(k={self._planned}) first"
            raise ValueError(f"update of episode k={k} out of order: expected {expected}")
        h_, s_, a_ = self.horizon, self.states, self.actions
        lead: tuple[int, ...] = () if self.runs is None else (self.runs,)
        st = np.asarray(states)
        ac = np.asarray(actions)
        r = np.asarray(rewards, dtype=float)
        if st.shape != (*lead, h_ + 1) or ac.shape != (*lead, h_) or r.shape != (*lead, h_):
            raise ValueError(
                f"a trajectory needs states {(*lead, h_ + 1)}, actions {(*lead, h_)} and rewards {(*lead, h_)}, "
                f"got {st.shape}, {ac.shape} and {r.shape}"
            )
        if st.dtype.kind not in "iu" or ac.dtype.kind not in "iu":
            raise ValueError(f"states and actions must be integers, got dtypes {st.dtype} and {ac.dtype}")
        if st.min() < 0 or st.max() >= s_:
            raise ValueError(f"states must lie in 0..{s_ - 1}, got {st.tolist()}")
        if ac.min() < 0 or ac.max() >= a_:
            raise ValueError(f"actions must lie in 0..{a_ - 1}, got {ac.tolist()}")
        if not np.isfinite(r).all():
            raise ValueError(f"rewards must be finite, got {r.tolist()}")
        r = np.minimum(np.maximum(r, 0.0), 1.0).reshape(-1, h_)
        st = st.reshape(-1, h_ + 1)
        # flat index of (run, h, s_h, a_h): one cell per run and step, never repeated
        cell = self._run_base + self._cell_base + st[:, :-1] * a_ + ac.reshape(-1, h_)
        self._n_flat[cell] += 1
        self._reward_sum_flat[cell] += r
        self._next_rows[cell, st[:, 1:]] += 1.0
        n = self._n_flat[cell].astype(float)
        self._r_hat_flat[cell] = self._reward_sum_flat[cell] / n
        self._p_hat_rows[cell] = self._next_rows[cell] / n[..., None]
        self._updated += 1
        return {}

    # -- what the run recorded -------------------------------------------------------------

    @property
    def counts(self) -> np.ndarray:
        """n_k(h, s, a), the visits before each planned episode (read-only, shape (k, H, S, A); (R, k, H, S, A) for a
        batch)."""
        view = self._counts[..., : self._planned, :, :, :]
        view.setflags(write=False)
        return view

    @property
    def variances(self) -> np.ndarray:
        """The variance β_k/(n_k + 1) of the noise on every Q-value of each planned episode (read-only)."""
        view = self._variances[..., : self._planned, :, :, :]
        view.setflags(write=False)
        return view

    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the current estimates of the rewards and transitions.

        Returns:
            R̂[h, s, a] and P̂[h, s, a, s′] (0 at unvisited cells; run axis first for a batch).
        """
        return self._r_hat.copy(), self._p_hat.copy()

    def worst_case_mu(self, reward_range: float = 1.0) -> float:
        """μ of the worst user over every dataset of the episodes planned so far, at this agent's β_k.

        β_k is Russo's or the constant β, times ``noise_scale``. This is the DP guarantee that
        :meth:`run_privacy`'s ex-post μ sits below.

        Args:
            reward_range: The range of a reward (1: rewards in [0, 1]).

        Returns:
            μ.

        Raises:
            ValueError: If nothing was planned yet, or the noise is off (σ = 0).
        """
        if self._planned == 0:
            raise ValueError("no episode has been planned yet: the run has released nothing")
        if self.noise_scale == 0.0:
            raise ValueError("sigma = 0: RLSVI's noise is off, so its Q-values give no privacy")
        mu = rlsvi_worst_case_mu(
            states=self.states,
            actions=self.actions,
            horizon=self.horizon,
            episodes=self._planned,
            beta=self.beta,
            reward_range=reward_range,
        )
        return mu / math.sqrt(self.noise_scale) * (1.0 + 2.0**-50)  # β scaled by noise_scale: μ by its −½ power

    def run_privacy(self, reward_range: float = 1.0, run: int | None = None) -> RlsviRunPrivacy:
        """The exact per-user μ of the episodes planned so far, from the recorded counts and variances.

        Ex-post: it depends on this run's visit counts (the users' own states and actions), so it is not a
        DP guarantee; the result carries :meth:`worst_case_mu`, the guarantee, as ``mu_worst_case``.

        Args:
            reward_range: The range of a reward (1: rewards in [0, 1]).
            run: The run of a batch (required for a batch, and only then).

        Returns:
            The run's privacy (:class:`~dpkit.accountant.rlsvi.RlsviRunPrivacy`).

        Raises:
            ValueError: If ``run`` is given for one run or missing for a batch, or out of range.
        """
        if (run is None) != (self.runs is None):
            raise ValueError(
                "run must be given for a batch of runs (and only then): "
                + (f"this agent holds {self.runs} runs" if self.runs is not None else "this agent holds one run")
            )
        mu_worst_case = self.worst_case_mu(reward_range)
        counts, variances = self.counts, self.variances
        if run is not None:
            i = check_index("run", run)
            if i >= len(counts):
                raise ValueError(f"run must be < {len(counts)}, got {run}")
            counts, variances = counts[i], variances[i]
        return rlsvi_run_privacy(counts, variances, reward_range=reward_range, mu_worst_case=mu_worst_case)


def make_agent(
    name: str,
    env: TabularMDP,
    episodes: int,
    rng: np.random.Generator | int | Sequence[np.random.Generator],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    **options: Any,
) -> Rlsvi:
    """An :class:`Rlsvi` agent sized to ``env`` for ``episodes`` episodes.

    Args:
        name: ``"rlsvi"``.
        env: The tabular MDP.
        episodes: K.
        rng: A Generator or seed, or a sequence of Generators, one per run (a batch of runs).
        epsilon: As in :class:`Rlsvi`.
        delta: As in :class:`Rlsvi`.
        sigma: As in :class:`Rlsvi`.
        **options: Only ``beta`` (``None``: Russo's β_k; a number: a constant β).

    Returns:
        The agent.

    Raises:
        ValueError: For another name, an environment that is not a TabularMDP, or an unknown option.
    """
    check_choice("name", name, (ALGORITHM,))
    if not isinstance(env, TabularMDP):
        raise ValueError(f"env must be a TabularMDP, got {type(env).__name__}")
    unknown = sorted(set(options) - {"beta"})
    if unknown:
        raise ValueError(f"rlsvi does not take option(s) {', '.join(unknown)} (only beta)")
    return Rlsvi(
        env.states,
        env.actions,
        env.horizon,
        episodes,
        rng,
        beta=options.get("beta"),
        sigma=sigma,
        epsilon=epsilon,
        delta=delta,
    )


def rlsvi_run(
    env_name: str,
    states: int,
    actions: int,
    episodes: int,
    seed: int,
    *,
    horizon: int | None = None,
    beta: float | None = None,
    sigma: str | float | Mapping[str, float] = "paper",
    epsilon: float | None = None,
    delta: float | None = None,
    record: bool = False,
    progress: Callable[[int], None] | None = None,
) -> tuple[Run, RlsviRunPrivacy]:
    """Build an environment, K users and an RLSVI agent from ``seed``, run it and return the run and its privacy.

    One seed fixes everything: it is split into independent streams for the environment, the users, the agent's
    noise and the run.

    Args:
        env_name: ``riverswim``, ``riverswim-inhomogeneous`` or ``tabular``.
        states: S.
        actions: A (RiverSwim has two).
        episodes: K.
        seed: An integer >= 0.
        horizon: H (default 2S).
        beta: As in :class:`Rlsvi`.
        sigma: As in :class:`Rlsvi`.
        epsilon: As in :class:`Rlsvi`.
        delta: As in :class:`Rlsvi`.
        record: Whether the run keeps every episode's releases.
        progress: Called with 1 after each episode.

    Returns:
        The run and its exact per-user privacy (:meth:`Rlsvi.run_privacy`).

    Raises:
        ValueError: If a size is out of range, or RiverSwim is asked for another number of actions.
    """
    seed = check_index("seed", seed)
    s_ = check_count("states", states)
    a_ = check_count("actions", actions)
    k_ = check_count("episodes", episodes)
    if env_name in ("riverswim", "riverswim-inhomogeneous") and a_ != 2:
        raise ValueError(f"{env_name} has 2 actions, got actions={a_}")
    env_seq, users_seq, agent_seq, run_seq = np.random.SeedSequence(seed).spawn(4)
    env = make_environment(env_name, s_, np.random.default_rng(env_seq), actions=a_, horizon=horizon)
    agent = make_agent(
        ALGORITHM, env, k_, np.random.default_rng(agent_seq), epsilon=epsilon, delta=delta, sigma=sigma, beta=beta
    )
    users = Users.draw(k_, env.horizon, np.random.default_rng(users_seq))
    run = run_tabular(
        agent, env, users, np.random.default_rng(run_seq), record=record, sigmas=agent.sigmas, progress=progress
    )
    return run, agent.run_privacy()


def _declare(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(p["states"], p["actions"], p["horizon"], p["episodes"], epsilon, delta, beta=p.get("beta"))


def _paper_epsilon(delta: float, p: Mapping[str, Any]) -> float:
    """The paper's own ε(δ) (RLSVI does not choose its noise for a target)."""
    from dpkit.accountant.rlsvi import rlsvi_paper_epsilon

    return rlsvi_paper_epsilon(
        states=p["states"], actions=p["actions"], horizon=p["horizon"], episodes=p["episodes"], delta=delta
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """The sizes of the tabular environment the regret runs face; H = 2S unless given."""
    horizon = sizes.horizon if sizes.horizon is not None else 2 * sizes.states
    return {"states": sizes.states, "actions": sizes.actions, "horizon": horizon, "episodes": sizes.episodes}


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`).
REGISTRATIONS = (
    AlgorithmSpec(
        name=ALGORITHM,
        entry_point=make_agent,
        summary="joint DP from exploration noise alone (seed 002)",
        declaration=_declare,
        required=("states", "actions", "horizon", "episodes"),
        optional=("beta",),
        default_epsilon=_paper_epsilon,
        ledger_parameters=_ledger_parameters,
        report=ReportSpec(
            assumptions=(
                "Tabular RLSVI adds no noise for privacy: its exploration noise w ~ N(0, β_k/(n + 1)) on every "
                "Q-value is the privacy (Russo's β_k unless σ is rescaled).",
                "Neighbouring runs differ only in the rewards (in [0, 1]) of one episode; its states and actions, "
                "and so the visit counts, stay the same and are treated as public.",
                "Observed rewards are clipped to [0, 1]; the released perturbed Q-values are the billboard.",
            ),
            sections=("rlsvi",),
        ),
    ),
)
