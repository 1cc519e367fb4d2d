"""Running an episodic algorithm against a sequence of users, and what a run records.

An agent (:class:`EpisodicAgent`) plans a policy before each episode and learns from the trajectory after it; both
steps may release something, which :func:`run_tabular` records (:class:`Run`) when asked. :func:`run_tabular_runs`
plays R runs at once. :func:`resolve_sigmas` turns ``sigma="paper" | "tight" | "optimal" | number | {release: σ}``
into one σ per declared release, from the algorithm's ledger (:mod:`dpkit.accountant.algorithm_ledgers`). What the
releases are and who sees them: docs/explanation/environments.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.algorithm_ledgers import Allocation, algorithm_ledger
from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.sensitivity import Relation, check_relation
from dpkit.accountant.validation import check_member, check_nonnegative, check_rng

from .envs.tabular import TabularMDP, User, Users

__all__ = [
    "SIGMA_CHOICES",
    "MAX_SIGMA",
    "check_sigma",
    "resolve_sigmas",
    "clear_sigma_caches",
    "per_step",
    "step_column",
    "Plan",
    "EpisodicAgent",
    "Run",
    "run_tabular",
    "run_tabular_runs",
    "agent_runs",
    "lift_run",
    "lift_releases",
    "play_episode",
    "play_episodes",
    "sample_actions",
    "sample_actions_runs",
]

#: The σ a run may be given by name (:func:`resolve_sigmas`); a number or a mapping release → σ besides.
SIGMA_CHOICES: tuple[str, ...] = ("paper", "tight", "optimal")
#: The largest σ a run accepts: beyond it σ², and the regularisers' shifts of order σ·sqrt(K·d), overflow
#: double precision (no privacy is lost by the cap: a release at σ = 1e100 is already ε ≈ 0 for any sane Δ).
MAX_SIGMA = 1e100
_EVALUATE_EVERY = 512  # policies evaluated together (one batched backward pass)


def check_sigma(name: str, value: object) -> float:
    """``value`` as a σ: a float in [0, MAX_SIGMA] (0 turns the noise off).

    Args:
        name: The parameter's name, for the error message.
        value: The σ to check.

    Returns:
        ``value`` as a float.

    Raises:
        ValueError: If ``value`` is not a number >= 0, or exceeds :data:`MAX_SIGMA`.

    Examples:
        >>> check_sigma("sigma", 2)
        2.0
    """
    sigma = check_nonnegative(name, value)
    if sigma > MAX_SIGMA:
        raise ValueError(
            f"{name} = {sigma!r} is too large to run with: the algorithms' arithmetic (σ², shifts of order "
            f"σ·sqrt(K·d)) overflows double precision; use at most {MAX_SIGMA:g}"
        )
    return sigma


def resolve_sigmas(
    declaration: PrivacyDeclaration,
    sigma: str | float | Mapping[str, float | Sequence[float]],
    *,
    relation: Relation | str | None = None,
    method: AccountingMethod | str = "exact",
) -> dict[str, Any]:
    """σ of every declared release.

    Args:
        declaration: The algorithm's privacy declaration.
        sigma: ``"paper"`` (the paper's formula), ``"tight"`` (the ledger's σ_tight under ``relation`` and
            ``method``), ``"optimal"`` (the ledger's σ_optimal: σ ∝ sqrt(Δ) per release and step), a number (every
            release), or a mapping name → σ covering every release (a release with per-step sensitivities may take
            one σ per step). σ = 0 turns the noise off.
        relation: The neighbouring relation of the ledger; None for the declaration's.
        method: The accounting method of the ledger.

    Returns:
        Release name → σ: a float, or a tuple of one σ per step where an allocation gives its steps different σ.

    Raises:
        ValueError: If ``sigma`` is an unknown name, a σ out of range, a mapping that does not name exactly the
            releases, or ``"optimal"`` for a declaration without an optimal allocation.
    """
    names = [r.name for r in declaration.releases]
    if isinstance(sigma, str):
        if sigma == Allocation.PAPER:
            return {r.name: r.sigma_paper for r in declaration.releases}
        if sigma in (Allocation.TIGHT, Allocation.OPTIMAL):
            tight, optimal, note = _allocations(
                (
                    declaration.algorithm,
                    declaration.epsilon,
                    declaration.delta,
                    declaration.releases,
                    declaration.joint,
                ),
                declaration,
                None if relation is None else check_relation(relation),
                check_member("method", method, AccountingMethod),
            )
            if sigma == Allocation.TIGHT:
                return dict(zip(names, tight))
            if optimal is None:
                raise ValueError(f"{declaration.algorithm} has no optimal allocation: {note}")
            return {n: (s[0] if len(set(s)) == 1 else s) for n, s in zip(names, optimal)}
        raise ValueError(
            f"sigma must be 'paper', 'tight', 'optimal', a number >= 0 or a mapping release -> sigma, got {sigma!r}"
        )
    if isinstance(sigma, Mapping):
        unknown = sorted(set(sigma) - set(names))
        missing = [n for n in names if n not in sigma]
        if unknown or missing:
            raise ValueError(
                f"sigma mapping must name exactly the releases {names}: unknown {unknown}, missing {missing}"
            )
        return {n: _mapped_sigma(declaration, n, sigma[n]) for n in names}
    value = check_sigma("sigma", sigma)
    return dict.fromkeys(names, value)


def _allocations(
    key: tuple[Any, ...], declaration: PrivacyDeclaration, relation: Relation | None, method: AccountingMethod
) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...] | None, str]:
    """σ_tight, σ_optimal and the optimal note of ``declaration`` (cached on ``key``: what the allocations depend on —
    the target, the releases and their joint groups — so that an audit building one agent per run computes them
    once)."""
    try:
        hash(key)
    except TypeError:  # an unhashable release (never for dpkit's): compute it
        ledger = algorithm_ledger(declaration, relation=relation, method=method)
        return ledger.sigmas_tight, ledger.sigmas_optimal, ledger.optimal_note
    return _cached_allocations(key, relation, method, _Passenger(declaration))


@dataclass(frozen=True, eq=False)
class _Passenger:
    """A value carried through a cache without being part of its key (every passenger hashes and compares equal)."""

    value: Any

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Passenger)


@functools.lru_cache(maxsize=256)
def _cached_allocations(
    key: tuple[Any, ...], relation: Relation | None, method: AccountingMethod, declaration: _Passenger
) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...] | None, str]:
    ledger = algorithm_ledger(declaration.value, relation=relation, method=method)
    return ledger.sigmas_tight, ledger.sigmas_optimal, ledger.optimal_note


def clear_sigma_caches() -> None:
    """Forget every σ and declaration worked out so far: the next agent works its own out again.

    The calibrations of :func:`~dpkit.accountant.calibrate_sigma`, the ledgers' allocations of :func:`resolve_sigmas`
    and the memoised declarations are cleared, as every run's agent would find them without these caches
    (bench/rl_throughput.py measures that path against the cached one).
    """
    from dpkit.accountant.calibration import clear_calibration_cache
    from dpkit.accountant.declarations import clear_declaration_caches

    clear_calibration_cache()
    clear_declaration_caches()
    _cached_allocations.cache_clear()


def _mapped_sigma(declaration: PrivacyDeclaration, name: str, value: object) -> float | tuple[float, ...]:
    """One release's σ from a mapping: a number, or one per step of a release with per-step sensitivities."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return check_sigma(f"sigma[{name!r}]", value)
    steps = next(r.steps for r in declaration.releases if r.name == name)
    if len(value) != steps:
        raise ValueError(f"sigma[{name!r}] must be one σ or one per step ({steps}), got {len(value)} values")
    values = tuple(check_sigma(f"sigma[{name!r}][{i}]", v) for i, v in enumerate(value))
    return values[0] if len(set(values)) == 1 else values


def per_step(bound: Callable[[float], float], sigma: float | np.ndarray) -> float | np.ndarray:
    """``bound(σ)`` for one σ, or each step's for per-step σ: the shifts and radii the agents derive from their σ.

    Args:
        bound: The function of σ.
        sigma: One σ, or an array of one σ per step (an allocation such as ``sigma="optimal"``).

    Returns:
        A float for one σ, else an array of one value per step.

    Examples:
        >>> import numpy as np
        >>> per_step(lambda s: 2 * s, 1.5), per_step(lambda s: 2 * s, np.array([1.0, 2.0])).tolist()
        (3.0, [2.0, 4.0])
    """
    if np.ndim(sigma) == 0:
        return float(bound(float(sigma)))
    return np.array([bound(float(s)) for s in np.asarray(sigma)])


def step_column(x: Any, ndim: int) -> Any:
    """One value as it is, or one per step shaped to broadcast over an array whose first axis is the step.

    Args:
        x: One value, or one value per step.
        ndim: The number of axes of the array broadcast against (e.g. 2 for σ over (H, m) noise, 3 for a shift over
            (H, d, d) matrices).

    Returns:
        ``x`` itself when it is one value, else ``x`` with trailing axes of length 1 up to ``ndim`` axes.

    Examples:
        >>> step_column(0.5, 3), step_column([1.0, 2.0], 3).shape
        (0.5, (2, 1, 1))
    """
    if np.ndim(x) == 0:
        return x
    a = np.asarray(x, dtype=float)
    return a.reshape(a.shape + (1,) * (ndim - a.ndim))


@dataclass(frozen=True)
class Plan:
    """A policy for the next episode and what was released to compute it.

    Attributes:
        policy: Actions ``policy[h, s]`` or probabilities ``policy[h, s, a]`` (with a leading run axis for an agent
            of R runs).
        released: Release name → what was released before the episode (under joint DP, the counters' prefixes).
    """

    policy: np.ndarray
    released: Mapping[str, np.ndarray] = field(default_factory=dict)


class EpisodicAgent(Protocol):
    """What :func:`run_tabular` drives: an agent that plans before each episode and learns after it.

    Attributes:
        name: The algorithm's name.
    """

    name: str

    def plan(self, k: int) -> Plan:
        """The policy for episode ``k``.

        Args:
            k: The episode, 0-based.

        Returns:
            The plan: the policy and what was released to compute it.
        """

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Mapping[str, np.ndarray]:
        """Learn from episode ``k``'s trajectory.

        Args:
            k: The episode, 0-based.
            states: Its states (H + 1,).
            actions: Its actions (H,).
            rewards: Its rewards (H,).

        Returns:
            Release name → what was released about its user (under local DP, her messages).
        """


@dataclass(frozen=True)
class Run:
    """One run of an algorithm over K users.

    Attributes:
        algorithm: The algorithm's name.
        env: The environment's name.
        regret: The expected regret of the policy played in each episode (K,), exact: V*_1(s_1) − V^π_k_1(s_1) by
            backward induction, or the LQ cost difference; its cumulative sum is the pseudo-regret.
        returns: What each user really got (K,).
        states: Each episode's states (K, H + 1).
        actions: Each episode's actions (K, H).
        rewards: Each episode's rewards (K, H).
        sigmas: The σ of each release.
        releases: Release name → its values stacked over episodes (empty unless recorded).
        gains: The linear gains K_h played in each episode (K, H, d, n) of an LQ run; None for a tabular run.
    """

    algorithm: str
    env: str
    regret: np.ndarray
    returns: np.ndarray
    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    sigmas: Mapping[str, float] = field(default_factory=dict)
    releases: Mapping[str, np.ndarray] = field(default_factory=dict)
    gains: np.ndarray | None = None

    @property
    def episodes(self) -> int:
        """K, the number of episodes."""
        return int(self.regret.shape[0])

    @property
    def cumulative_regret(self) -> np.ndarray:
        """The cumulative regret after each episode (K,)."""
        return np.cumsum(self.regret)

    def summary(self) -> dict[str, Any]:
        """The run in a few numbers.

        Returns:
            The algorithm, the environment, the episodes, the final cumulative regret and the σ of each release.
        """
        return {
            "algorithm": self.algorithm,
            "env": self.env,
            "episodes": self.episodes,
            "final_regret": float(self.cumulative_regret[-1]),
            "sigmas": dict(self.sigmas),
        }


def sample_actions(probs: np.ndarray, uniform: float) -> int:
    """The action drawn from ``probs`` by the inverse CDF at ``uniform``.

    Args:
        probs: The actions' probabilities (A,).
        uniform: A uniform in [0, 1).

    Returns:
        The action.

    Examples:
        >>> sample_actions([0.2, 0.8], 0.1), sample_actions([0.2, 0.8], 0.5)
        (0, 1)
    """
    return int(sample_actions_runs(np.asarray(probs)[None], np.asarray([uniform], dtype=float))[0])


def sample_actions_runs(probs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """:func:`sample_actions` in R runs.

    Args:
        probs: Each run's probabilities (R, A).
        uniforms: Each run's uniform (R,).

    Returns:
        Each run's action (R,).
    """
    cdf = np.cumsum(probs, axis=-1)
    # searchsorted(side="right") of u·total in each row: the number of entries <= it
    found = np.count_nonzero(cdf <= (uniforms * cdf[:, -1])[:, None], axis=-1)
    return np.minimum(found, probs.shape[-1] - 1).astype(np.int64)


def play_episode(
    env: TabularMDP, policy: np.ndarray, user: User, draws: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One episode of ``user`` under ``policy`` from her initial state (the environment's unless she has her own).

    The same user, policy and draws give the same episode (so a counterfactual user can be played against the same
    plan). It is :func:`play_episodes` of one run.

    Args:
        env: The environment.
        policy: Actions (H, S), or probabilities (H, S, A) sampled at ``draws``.
        user: The user.
        draws: H uniforms, required for a stochastic policy; else None.

    Returns:
        States (H + 1,), actions (H,) and rewards (H,).

    Raises:
        ValueError: If a stochastic policy comes without draws, or the user's first state is out of range.

    Examples:
        >>> import numpy as np
        >>> from dpkit.algorithms.envs.tabular import User, riverswim
        >>> states, actions, rewards = play_episode(riverswim(2), np.ones((4, 2), dtype=int), User.from_seed(0, 4))
        >>> states.tolist(), rewards.tolist()
        ([0, 1, 1, 1, 1], [0.0, 0.25, 0.25, 0.25])
    """
    policy = np.asarray(policy)
    states, actions, rewards = play_episodes(
        env, policy[None], user, None if draws is None else np.asarray(draws, dtype=float)[None]
    )
    return states[0], actions[0], rewards[0]


def play_episodes(
    env: TabularMDP, policies: np.ndarray, user: User | Users, draws: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One episode of ``user`` in each of R runs, run i's exactly :func:`play_episode` of ``policies[i]``.

    Args:
        env: The environment.
        policies: Actions (R, H, S), or probabilities (R, H, S, A) sampled at ``draws``.
        user: One user for every run, or one per run (:class:`Users` of length R: run i's episode is then
            :func:`play_episode` of ``user[i]``).
        draws: (R, H) uniforms, required for stochastic policies; else None.

    Returns:
        States (R, H + 1), actions (R, H) and rewards (R, H).

    Raises:
        ValueError: If stochastic policies come without draws, ``user`` holds not one user per run, or a first state
            is out of range.
    """
    h_ = env.horizon
    policies = np.asarray(policies)
    stochastic = policies.ndim == 4
    if stochastic and draws is None:
        raise ValueError("a stochastic policy (H, S, A) needs draws: H uniforms")
    runs = policies.shape[0]
    states = np.empty((runs, h_ + 1), dtype=np.int64)
    actions = np.empty((runs, h_), dtype=np.int64)
    rewards = np.empty((runs, h_))
    s = _initial_states(env, user, runs)
    states[:, 0] = s
    every = np.arange(runs)
    for h in range(h_):
        if stochastic:
            a = sample_actions_runs(policies[every, h, s], draws[:, h])  # type: ignore[index]
        else:
            a = policies[every, h, s].astype(np.int64)
        s, r = env.step_runs(h, s, a, user)
        actions[:, h], rewards[:, h], states[:, h + 1] = a, r, s
    return states, actions, rewards


def _initial_states(env: TabularMDP, user: User | Users, runs: int) -> np.ndarray:
    """Each run's first state: the user's own, or the environment's."""
    if isinstance(user, Users):
        if len(user) != runs:
            raise ValueError(f"one user per run: {len(user)} users for {runs} runs")
        if user.initial_states is None:
            return np.full(runs, env.initial_state, dtype=np.int64)
        s = np.where(user.initial_states < 0, env.initial_state, user.initial_states).astype(np.int64)
        if np.any(s >= env.states):
            raise ValueError(f"a user's initial_state {int(s.max())} is out of range for {env.states} states")
        return s
    start = env.initial_state if user.initial_state is None else user.initial_state
    if start >= env.states:
        raise ValueError(f"the user's initial_state {start} is out of range for {env.states} states")
    return np.full(runs, start, dtype=np.int64)


def _stack(logs: list[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    names = list(logs[0]) if logs else []
    for log in logs:
        if list(log) != names:
            raise ValueError(f"an agent released {list(log)} in one episode and {names} in another")
    return {n: np.stack([np.asarray(log[n]) for log in logs]) for n in names}


def run_tabular(
    agent: EpisodicAgent,
    env: TabularMDP,
    users: Users,
    rng: np.random.Generator | int,
    *,
    record: bool = False,
    sigmas: Mapping[str, float] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Run:
    """Run ``agent`` on ``env`` for one episode per user of ``users``.

    It is :func:`run_tabular_runs` of one run.

    Args:
        agent: An agent of one run.
        env: The environment.
        users: The users, one per episode (their own randomness is in them).
        rng: A Generator or an integer seed, drawing the actions of stochastic policies.
        record: Whether the releases of every episode are kept (``Run.releases``).
        sigmas: The σ of each release, recorded in the run.
        progress: Called with 1 after each episode, or None.

    Returns:
        The run.

    Raises:
        ValueError: If the users' horizon is not the environment's, or the agent plans a policy of the wrong shape.
    """
    return run_tabular_runs(agent, env, [users], [rng], record=record, sigmas=sigmas, progress=progress)[0]


def lift_run(agent: Any, x: Any) -> Any:
    """``x`` with a leading run axis of one when ``agent`` is an agent of one run.

    Args:
        agent: An agent; one of one run has ``agent.runs`` absent or None.
        x: A value of the agent's.

    Returns:
        ``x`` as an array, with a leading axis of one for an agent of one run.
    """
    return np.asarray(x)[None] if getattr(agent, "runs", None) is None else np.asarray(x)


def lift_releases(agent: Any, released: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """An agent's releases of one episode, each with a leading run axis (:func:`lift_run`).

    Args:
        agent: The agent.
        released: Release name → its value.

    Returns:
        Release name → its value with a leading run axis.
    """
    return {n: lift_run(agent, v) for n, v in released.items()}


def agent_runs(agent: Any, runs: int) -> bool:
    """Whether ``agent`` is a batch of runs (``agent.runs`` = ``runs``) rather than an agent of one run.

    Args:
        agent: The agent.
        runs: The number of runs to play.

    Returns:
        True for a batch of ``runs`` runs, False for an agent of one run.

    Raises:
        ValueError: If an agent of one run is given more than one run, or a batch another number of runs.
    """
    batch = getattr(agent, "runs", None)
    if batch is None:
        if runs != 1:
            raise ValueError(f"{getattr(agent, 'name', 'the agent')} is an agent of one run, got {runs} runs to play")
        return False
    if batch != runs:
        raise ValueError(f"{agent.name} is a batch of {batch} runs, got {runs} runs to play")
    return True


def _run_policies(agent: Any, policy: Any, env: TabularMDP, runs: int) -> np.ndarray:
    """The planned policies with a leading run axis, checked."""
    batch = getattr(agent, "runs", None) is not None
    policies = np.asarray(policy)
    one = policies.shape[1:] if batch else policies.shape
    if (batch and policies.shape[:1] != (runs,)) or one[:2] != (env.horizon, env.states) or len(one) not in (2, 3):
        raise ValueError(
            f"{agent.name} planned a policy of shape {policies.shape}; expected "
            + (f"{runs} runs of " if batch else "")
            + f"({env.horizon}, {env.states}) actions or ({env.horizon}, {env.states}, {env.actions}) probabilities"
        )
    return policies if batch else policies[None]


def run_tabular_runs(
    agent: EpisodicAgent,
    env: TabularMDP,
    users: Sequence[Users],
    rngs: Sequence[np.random.Generator | int],
    *,
    record: bool = False,
    sigmas: Mapping[str, float] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[Run]:
    """R runs at once, run i exactly :func:`run_tabular` of run i's agent alone, its users and its rng.

    The runs' policies are evaluated together.

    Args:
        agent: A batch of R runs (``agent.runs`` = R: policies, trajectories and releases with a leading run axis), or
            an agent of one run for R = 1.
        env: The environment.
        users: Each run's users, one per episode; every run plays as many.
        rngs: Each run's Generator or seed, drawing its stochastic policies' actions.
        record: Whether the releases of every episode are kept (``Run.releases``).
        sigmas: The σ of each release, recorded in the runs.
        progress: Called with R after each episode (one per run), or None.

    Returns:
        The R runs.

    Raises:
        ValueError: If there is not one rng per run, the agent is not of R runs, the runs' users differ in number
            or horizon from each other or the environment, or the agent plans a policy of the wrong shape.
    """
    r_ = len(users)
    if r_ < 1 or len(rngs) != r_:
        raise ValueError(f"one rng per run: {len(rngs)} rngs for {r_} runs' users")
    gens = [check_rng("rng", g) for g in rngs]
    agent_runs(agent, r_)
    k_, h_ = len(users[0]), env.horizon
    for u in users:
        if u.horizon != env.horizon:
            raise ValueError(f"users have horizon {u.horizon} but the environment has {env.horizon}")
        if len(u) != k_:
            raise ValueError(f"every run plays as many users: {len(u)} and {k_}")
    _, v_star = env.optimal_values()
    best = v_star[0, env.initial_state]
    # (K, R, H): episode k's users of every run
    uniforms = np.stack([u.transition_uniforms for u in users], axis=1)
    reward_uniforms = np.stack([u.reward_uniforms for u in users], axis=1)
    own_rewards = np.stack([u.rewards for u in users], axis=1)
    starts = None
    if any(u.initial_states is not None for u in users):
        starts = np.stack([np.full(k_, -1) if u.initial_states is None else u.initial_states for u in users], axis=1)
    paths = None
    if any(u.paths is not None for u in users):
        paths = np.stack([np.full((k_, h_), -1) if u.paths is None else u.paths for u in users], axis=1)
    states = np.empty((r_, k_, h_ + 1), dtype=np.int64)
    actions = np.empty((r_, k_, h_), dtype=np.int64)
    rewards = np.empty((r_, k_, h_))
    regret = np.empty((r_, k_))
    before: list[Mapping[str, np.ndarray]] = []
    after: list[Mapping[str, np.ndarray]] = []
    pending: list[np.ndarray] = []  # policies awaiting exact evaluation, as probabilities (R, H, S, A)
    eye = np.eye(env.actions)

    def evaluate(upto: int) -> None:
        if pending:
            values = env.policy_values(np.stack(pending, axis=1))[..., 0, env.initial_state]
            regret[:, upto - len(pending) : upto] = best - values
            pending.clear()

    for k in range(k_):
        plan = agent.plan(k)
        policy = _run_policies(agent, plan.policy, env, r_)
        pending.append(eye[policy] if policy.ndim == 3 else policy)
        if len(pending) == _EVALUATE_EVERY:
            evaluate(k + 1)
        draws = np.stack([g.random(h_) for g in gens]) if policy.ndim == 4 else None
        episode = Users(
            uniforms[k],
            reward_uniforms[k],
            own_rewards[k],
            (),
            None if starts is None else starts[k],
            None if paths is None else paths[k],
        )
        s, a, r = play_episodes(env, policy, episode, draws)
        states[:, k], actions[:, k], rewards[:, k] = s, a, r
        if getattr(agent, "runs", None) is None:
            released = agent.update(k, states[0, k], actions[0, k], rewards[0, k])
        else:
            released = agent.update(k, s, a, r)
        if record:
            before.append(lift_releases(agent, plan.released))
            after.append(lift_releases(agent, released))
        if progress is not None:
            progress(r_)
    evaluate(k_)
    releases: dict[str, np.ndarray] = {}
    if record:
        releases.update(_stack(before))
        releases.update(_stack(after))
    return [
        Run(
            algorithm=agent.name,
            env=env.name,
            regret=np.maximum(regret[i], 0.0),
            returns=rewards[i].sum(axis=1),
            states=states[i],
            actions=actions[i],
            rewards=rewards[i],
            sigmas=dict(sigmas or {}),
            releases={n: np.ascontiguousarray(v[:, i]) for n, v in releases.items()},
        )
        for i in range(r_)
    ]
