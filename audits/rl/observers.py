"""The toolkit an algorithm's audit observers are written with (generic over algorithms).

An RL audit (:mod:`dpkit.audits.rl`) hands each run on D or D′ to the algorithm's observer, which plays it and
returns one row (:class:`Trace`): whitened residuals and signals (white-box) or a view (black-box). The module holds
what an observer is given (:class:`ObservedRun`, :class:`OneRun`), the tabular audit worlds, the projections and
whitening of a release, the generic observer of a local-DP agent's messages and the positions an audit probes.
What a white-box row holds and why: the site's page *What the RL observers read* (docs/explanation/observers.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.sensitivity import ReleaseNoise
from dpkit.accountant.tree_counts import Schedule
from dpkit.algorithms.episodes import Plan, play_episodes, step_column
from dpkit.algorithms.spec import AuditSpec

from .plan_worlds import plan_world
from .reused_noise import CounterNodes, changed_user_votes
from .rows import SIGNAL_CAP, RowLayout, Trace, Traces
from .worlds import AuditedSetting, AuditWorld

__all__ = [
    "ObservedRun",
    "audit_environment",
    "tabular_world",
    "beyond_bounds_world",
    "observe_messages",
    "observe_messages_runs",
    "local_messages_audit",
    "Trace",
    "Traces",
    "RowLayout",
    "flat",
    "project",
    "cross_projections",
    "SIGNAL_CAP",
    "default_positions",
    "tree_positions",
    "positions_with_shares",
    "later_release_positions",
    "OneRun",
    "OneRunView",
]


@dataclass(frozen=True)
class ObservedRun:
    """One run of an audit, as the algorithm's observer receives it.

    Every field is computed by the audit from the *registered* declaration, never from the implementation under test.

    Attributes:
        setting: The audit's setting (:class:`dpkit.audits.rl.RlSetting`: sizes, observer, position…).
        which: 0 for D, 1 for D′.
        world: (environment, the users of D without the changed one, (canary 0, canary 1)).
        index: The changed user's episode (0-based).
        white_box: Whether the observer's rows are whitened residuals and signals (else a black-box view).
        claim_sigmas: The σ of every release the claim needs, by release name.
        sensitivities: The declared Δ of every release, by release name.
        make_agent: ``make_agent(rng, env)`` builds the implementation under test.
    """

    setting: AuditedSetting
    which: int
    world: AuditWorld
    index: int
    white_box: bool
    claim_sigmas: Mapping[str, float]
    sensitivities: Mapping[str, float]
    make_agent: Callable[[np.random.Generator, Any], Any]

    @property
    def observer(self) -> str:
        """The observer's name (the setting's)."""
        return str(self.setting.observer)


def audit_environment(setting: AuditedSetting) -> Any:
    """The tabular MDP of an audit world.

    Without ``setting.env``, the uniform MDP with mean reward 1 at every step (a user's uniforms choose her next state;
    every value sits at its cap); with it, the user's own environment (Gymnasium's or her file's,
    :mod:`dpkit.algorithms.envs.catalog`) of ``setting.horizon`` steps.

    Args:
        setting: The audit's setting (``states``, ``actions``, ``horizon`` and optionally ``env``).

    Returns:
        The environment, a :class:`~dpkit.algorithms.envs.tabular.TabularMDP`.
    """
    from dpkit.algorithms.envs.catalog import make_environment
    from dpkit.algorithms.envs.tabular import uniform_tabular

    env_name = getattr(setting, "env", "")
    if env_name:
        return make_environment(env_name, setting.states, 0, actions=setting.actions, horizon=setting.horizon)
    return uniform_tabular(setting.states, setting.actions, setting.horizon)


def tabular_world(setting: AuditedSetting, rewards: tuple[float, float], *, same_states: bool = False) -> AuditWorld:
    """The tabular audit world of ``setting``: its MDP, the users of D and two canaries maximally different in features.

    The MDP is :func:`audit_environment`'s; the users of D are drawn from ``setting.users_seed``. Canary 0 starts in
    state 0 and takes the lowest next state its transition allows, canary 1 starts in state S − 1 and takes the highest
    (in the uniform MDP they walk states 0 and S − 1: disjoint features at every step; the papers let each episode
    start anywhere). In a user's environment dpkit chooses the canaries' paths (the two states whose best successors
    are worth most). A setting with a ``world`` is a plan probe's: its world is
    :func:`~dpkit.audits.rl.plan_worlds.plan_world`'s, whatever ``rewards`` say.

    Args:
        setting: The audit's setting (sizes, ``users_seed``, optionally ``env`` or ``world``).
        rewards: The canaries' raw rewards (beyond [0, 1] where only the algorithm's own clipping keeps them in range;
            in a user's environment whose model pays by transition, the canaries' own rewards replace it).
        same_states: Both canaries walk from state 0 (a relation that changes rewards only) and every other user
            starts in state S − 1 and takes the highest next state, so that in the uniform MDP no other user shares a
            cell with the changed one (her cells keep n = 1, the worst case, in every later release).

    Returns:
        (environment, users of D, (canary 0, canary 1)).
    """
    from dpkit.algorithms.envs.tabular import User, Users

    if getattr(setting, "world", ""):  # a plan probe's world (dpkit.audits.rl.plan_worlds)
        return plan_world(setting)
    env = audit_environment(setting)
    h_, s_ = env.horizon, env.states
    users = Users.draw(setting.episodes, h_, np.random.default_rng(setting.users_seed))
    if getattr(setting, "env", ""):
        return AuditWorld(env, *_chosen_paths(env, users, rewards, same_states))
    last = 1.0 - 2.0**-30  # the highest next state the transition allows (in the uniform MDP: S − 1)
    if same_states:
        others = [User.canary(np.full(h_, 0.5), np.full(h_, last), initial_state=s_ - 1) for _ in range(len(users))]
        drawn = Users.stack(others)
        users = Users(
            drawn.transition_uniforms, users.reward_uniforms, users.rewards, users.seeds, drawn.initial_states
        )
        starts, uniforms = (0, 0), (np.zeros(h_), np.zeros(h_))
    else:
        starts, uniforms = (0, s_ - 1), (np.zeros(h_), np.full(h_, last))
    canaries = tuple(
        User.canary(np.full(h_, r), u, beyond_bounds=True, initial_state=start)
        for r, u, start in zip(rewards, uniforms, starts)
    )
    return AuditWorld(env, users, (canaries[0], canaries[1]))


@functools.lru_cache(maxsize=64)
def _upper(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the upper triangle (diagonal included) of a d × d matrix (read-only, cached)."""
    rows, cols = np.triu_indices(d)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _chosen_paths(env: Any, users: Any, rewards: tuple[float, float], same_states: bool) -> tuple[Any, Any]:
    """A user's environment: dpkit chooses the canaries' transitions (a user's data is her trajectory). They stay in
    the two states whose best successors are worth most over the episode (Σ_h max_a P_h V*_{h+1}, by the
    environment's optimal values: where an optimistic agent's values V_{h+1} are highest, so her features are
    largest) — canary 0 in the best, canary 1 in the second (disjoint features at every step). ``same_states``:
    both canaries stay in the best and every other user in the second, so no other user shares a cell with the
    changed one."""
    from dpkit.algorithms.envs.tabular import User, Users

    h_ = env.horizon
    _, v_star = env.optimal_values()
    # the best successor's optimal value, summed over the steps: the states nearest the reward score most
    score = np.einsum("hsat,ht->hsa", env.transitions, v_star[1:]).max(axis=2).sum(axis=0)
    best, second = (int(i) for i in np.argsort(-score, kind="stable")[:2])
    zeros = np.zeros(h_)

    def staying(state: int, reward: float) -> User:
        return User.canary(np.full(h_, reward), zeros, beyond_bounds=True, initial_state=state, path=np.full(h_, state))

    if same_states:
        others = Users.stack(
            [
                User(u.transition_uniforms, u.reward_uniforms, None, u.seed, second, np.full(h_, second))
                for u in (users[k] for k in range(len(users)))
            ]
        )
        return others, (staying(best, rewards[0]), staying(best, rewards[1]))
    return users, (staying(best, rewards[0]), staying(second, rewards[1]))


def flat(x: np.ndarray, symmetric: bool, lead: int) -> np.ndarray:
    """Keep the ``lead`` leading axes of ``x`` and flatten the rest into one.

    Args:
        x: The array.
        symmetric: Keep only the upper triangle (diagonal included) of the last two axes: the only entries of a
            symmetric-noise release with independent noise.
        lead: How many leading axes to keep.

    Returns:
        ``x`` shaped ``x.shape[:lead] + (-1,)``.

    Examples:
        >>> import numpy as np
        >>> flat(np.arange(8.0).reshape(2, 2, 2), True, 1)
        array([[0., 1., 3.],
               [4., 5., 7.]])
    """
    if symmetric:
        rows, cols = _upper(x.shape[-1])
        return x[..., rows, cols].reshape(x.shape[:lead] + (-1,))
    return x.reshape(x.shape[:lead] + (-1,))


#: The most whitened coordinates of one release an observer adds to a row beside its projections (the learned
#: attack fits a covariance over them: larger releases keep their projections and cross projections only).
MAX_COORDINATES = 512


def project(
    residual: np.ndarray, delta: np.ndarray, sigma: Any, sigma_claim: Any, sensitivity: Any
) -> tuple[np.ndarray, ...]:
    """Project one release's residuals on the changed user's difference and whiten them at the claim's σ.

    The residual is projected on the direction of her difference d and whitened by the σ the *claim* needs (the
    declared noise model at the claim, never the σ the implementation reports; where the claim's σ is 0, a step of
    sensitivity 0, the σ used). The signal a = ‖d‖/σ_claim makes Σ a·r − ½Σ a² the exact log-likelihood ratio of a
    release at the claim's noise; a_allowed = min(‖d‖, Δ)/σ_claim caps the realised difference at the release's
    *declared* sensitivity, so an implementation that exceeds it is not allowed more; a_used = ‖d‖/σ is the pair's
    exact μ at the σ the implementation reports. Where the difference is 0 the residual is projected on the first
    coordinate (noise only).

    Args:
        residual: The release less its noiseless value, (..., m).
        delta: The changed user's difference, (..., m).
        sigma: The σ the implementation reports: a number, or one per step (the last leading axis).
        sigma_claim: The σ the claim needs, likewise.
        sensitivity: The declared Δ, likewise.

    Returns:
        (r, a, a_allowed, a_used), each shaped as the leading axes.
    """
    norm = np.linalg.norm(delta, axis=-1)
    direction = np.where(norm[..., None] > 0, delta / np.where(norm > 0, norm, 1.0)[..., None], 0.0)
    direction[..., 0] = np.where(norm > 0, direction[..., 0], 1.0)
    whiten = np.where(np.asarray(sigma_claim, dtype=float) > 0.0, sigma_claim, sigma)
    r = over_sigma(np.einsum("...m,...m->...", residual, direction), whiten)
    return r, over_sigma(norm, whiten), over_sigma(np.minimum(norm, sensitivity), whiten), over_sigma(norm, sigma)


def cross_projections(residual: np.ndarray, delta: np.ndarray, sigma: Any) -> np.ndarray:
    """Every step's residual projected on every other step's difference direction, whitened by the residual's σ.

    Entry [b, g] is ⟨residual_b, u⟩/σ_b with u the unit part of d_g orthogonal to d_b (0 where there is none, and on
    the diagonal). Under the declared noise model (fresh noise per step) these are N(0, 1) and independent of step b's
    own projection; noise shared between steps b and g makes them follow step g's residual. The learned attack reads
    them (the white-box score gives them no weight). It is :func:`cross_projections_runs` of one run.

    Args:
        residual: The residuals, (steps, m).
        delta: The changed user's differences, (steps, m).
        sigma: One σ, or one per step.

    Returns:
        The cross projections, (steps, steps).
    """
    out: np.ndarray = cross_projections_runs(np.asarray(residual)[None], np.asarray(delta)[None], sigma)[0]
    return out


def cross_projections_runs(residual: np.ndarray, delta: np.ndarray, sigma: Any) -> np.ndarray:
    """:func:`cross_projections` of R runs, every pair of steps of every run in one pass.

    Args:
        residual: The residuals, (R, steps, m).
        delta: The changed user's differences, (R, steps, m).
        sigma: One σ, or one per step.

    Returns:
        The cross projections, (R, steps, steps).
    """
    norm = np.linalg.norm(delta, axis=-1)
    unit = np.where(norm[..., None] > 0, delta / np.where(norm > 0, norm, 1.0)[..., None], 0.0)
    steps = unit.shape[1]
    # rest[:, b, g]: d_g's unit less its part along d_b
    rest = unit[:, None, :, :] - np.einsum("rgm,rbm->rbg", unit, unit)[..., None] * unit[:, :, None, :]
    size = np.linalg.norm(rest, axis=-1)
    keep = (size > 1e-9) & ~np.eye(steps, dtype=bool)
    projected = np.einsum("rbgm,rbm->rbg", rest / np.where(keep, size, 1.0)[..., None], residual)
    out = np.where(keep, projected, 0.0)
    scale = np.asarray(sigma, dtype=float).reshape(-1, 1) if np.ndim(sigma) else sigma
    return over_sigma(out, scale)


def over_sigma(x: np.ndarray, sigma: Any) -> np.ndarray:
    """x/σ for one σ or one per step, capped at ±:data:`SIGNAL_CAP`.

    Where σ = 0 (a step of sensitivity 0, released without noise) the quotient is 0 when x is 0 and ±:data:`SIGNAL_CAP`
    otherwise: a noiseless difference is seen exactly.

    Args:
        x: The values (one σ per step: along the last axis).
        sigma: One σ, or one per step.

    Returns:
        The capped quotients, shaped as ``x``.

    Examples:
        >>> import numpy as np
        >>> over_sigma(np.array([2.0, 0.0, -3.0]), np.array([2.0, 0.0, 0.0]))
        array([ 1.e+00,  0.e+00, -1.e+06])
    """
    s = np.asarray(sigma, dtype=float)
    if s.ndim == 0 and s > 0.0:
        clipped: np.ndarray = np.clip(x / s, -SIGNAL_CAP, SIGNAL_CAP)
        return clipped
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s > 0.0, x / np.where(s > 0.0, s, 1.0), np.where(x == 0.0, 0.0, np.sign(x) * np.inf))
    return np.clip(out, -SIGNAL_CAP, SIGNAL_CAP)


# -- one-run audits: every user a canary (dpkit.audits.rl.one_run) --------------------------------------------


@dataclass(frozen=True)
class OneRun:
    """One run of a one-run audit, as an algorithm's ``one_run`` hook receives it.

    The hook plays the run with the coins and scores every user from what the observer sees — the released quantities
    and what the auditor knows (the plan each user was served, both canaries) — never the coins.

    Attributes:
        setting: The audit's setting.
        world: (environment, users — unused: every user is a canary —, (canary 0, canary 1)).
        coins: User k's coin ``coins[k]``: which canary she is.
        make_agent: ``make_agent(rng, env)`` builds the implementation under test.
        claim_sigmas: The σ of every release the claim needs.
        sensitivities: The declared Δ of every release.
        progress: Called with 1 once per user played (``None``: no progress).
    """

    setting: AuditedSetting
    world: AuditWorld
    coins: np.ndarray
    make_agent: Callable[[np.random.Generator, Any], Any]
    claim_sigmas: Mapping[str, float]
    sensitivities: Mapping[str, float]
    progress: Callable[[int], None] | None = None

    @property
    def observer(self) -> str:
        """The observer's name (the setting's)."""
        return str(self.setting.observer)

    def advance(self) -> None:
        """Report one more user played to ``progress``, if there is one."""
        if self.progress is not None:
            self.progress(1)


@dataclass(frozen=True)
class OneRunView:
    """What a ``one_run`` hook returns: one score per user, the observer's name, and what the scores could show.

    Attributes:
        scores: One score per user, higher when canary 1 is the likelier.
        observer: The observer's name.
        reach: The μ per user its scores could show for a mechanism exactly at the claim — every user's difference at
            its declared Δ, the claim's σ, the other users' coins as the scorer treats them — computed from the
            declaration and the run's structure, never from its outputs (``None``: the claim's own μ, for scores that
            see each user alone).
        features: (users, F) per-user coordinates a score learned on held-out canaries may weigh
            (:func:`dpkit.audits.rl.one_run.audit_one_run` with ``attack="learned"``; ``None``: none offered).
    """

    scores: np.ndarray
    observer: str
    reach: float | None = None
    #: (users, F) per-user coordinates a score learned on held-out canaries may weigh (``None``: none offered)
    features: np.ndarray | None = None


# -- the generic observer of a local-DP agent's messages (what a user's own LDP agent can use) --------


def beyond_bounds_world(setting: AuditedSetting) -> AuditWorld:
    """The tabular world of a generic LDP audit: canaries on disjoint states with raw rewards −1 and 2.

    The rewards lie beyond [0, 1] on both sides, so that only the agent's own clipping keeps her messages at their
    declared sensitivities.

    Args:
        setting: The audit's setting.

    Returns:
        (environment, users of D, (canary 0, canary 1)), as :func:`tabular_world`.
    """
    return tabular_world(setting, (-1.0, 2.0))


def observe_messages(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The ``messages`` observer of any local-DP agent that follows the messages protocol.

    The protocol: ``update(k, states, actions, rewards)`` returns the user's messages {release: array} and
    ``message_statistics(states, actions, rewards)`` the same messages before their noise. A release of the declaration
    with ``count`` c > 1 sends c Gaussian messages stacked on the first axis (each with the declared Δ); with c = 1 the
    whole array is one message. Symmetric-noise releases (``noise="symmetric"``) are read on their upper triangle.
    What the row holds: :func:`observe_messages_runs`, whose batch of one this is (the agent built with one
    Generator and seen as a batch of one run).

    Args:
        run: The run to play (:class:`ObservedRun`).
        rng: The run's randomness (the agent's and the policies' draws).

    Returns:
        The run's white-box row (:meth:`Trace.row`).

    Raises:
        TypeError: The agent has no ``message_statistics``.
        ValueError: The agent sent messages its declaration does not name.
    """
    row: np.ndarray = observe_messages_runs(run, [rng], batched=False)[0]
    return row


def observe_messages_runs(run: ObservedRun, rngs: Sequence[np.random.Generator], *, batched: bool = True) -> np.ndarray:
    """:func:`observe_messages` of R runs at once, run i from ``rngs[i]``: row i is what run i alone gives.

    The observer reads every message up to the changed user's (the server sees them all; a later user's messages are a
    function of her own data given the history, the same in D and D′ for a correct agent), whitened under the declared
    noise model at the claim's σ: the changed user's messages give their projections on her difference (the white-box
    reading) and every whitened coordinate; each of her messages is also projected on the direction of every other
    message of hers (noise shared between messages makes these equal) and every earlier user's messages on her
    directions (noise shared between users) — coordinates without signal of their own, for the learned attack — and
    the reading of reused noise (:func:`~dpkit.audits.rl.reused_noise.changed_user_votes`). The observer trusts
    ``message_statistics``: an agent that misreports them shows in the whitened coordinates.

    Args:
        run: The run to play (:class:`ObservedRun`).
        rngs: One Generator per run; each run's agent draws from its first child, its stochastic policies from its
            second (as ``rng.spawn(2)``).
        batched: Whether ``run.make_agent`` builds one agent of R runs from the R children (dpkit's agents, and an
            implementation marked :func:`~dpkit.algorithms.batches.plays_runs`); else ``rngs`` must be one
            Generator, whose agent is seen as a batch of one run.

    Returns:
        The rows, (R, width).

    Raises:
        TypeError: The agent has no ``message_statistics``.
        ValueError: The agent sent messages its declaration does not name, or an agent of one run was given
            several Generators.
    """

    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    runs = len(rngs)
    if not batched and runs != 1:
        raise ValueError(f"an agent of one run plays one Generator, got {runs}")
    # rng.spawn(2) = (the agent's, the policies'): each run's first child now, its second (the same stream: a
    # Generator's children are numbered) only if a plan is stochastic
    children: Any = [g.spawn(1)[0] for g in rngs]
    agent = run.make_agent(children, env) if batched else _RunOfOne(run.make_agent(children[0], env))
    if not callable(getattr(agent, "message_statistics", None)):
        raise TypeError(
            f"the agent {type(agent).__name__} does not follow the messages protocol: it has no "
            "message_statistics(states, actions, rewards)"
        )
    policy_rngs: list[np.random.Generator] = []
    releases = {r.name: r for r in agent.declaration.releases}
    trace = Traces(runs)
    residuals: list[dict[str, np.ndarray]] = []  # every user's whitened residuals, (R, count, m) per release
    directions: dict[str, np.ndarray] = {}
    nodes: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {n: [] for n in releases}  # (residual, its magnitude)
    delta: dict[str, np.ndarray] = {}
    for k in range(j + 1):  # later users' messages are functions of their own data given the history: not read
        policy = np.asarray(agent.plan(k).policy)
        if policy.ndim == 4 and not policy_rngs:
            policy_rngs = [g.spawn(1)[0] for g in rngs]
        draws = np.stack([p.random(env.horizon) for p in policy_rngs]) if policy.ndim == 4 else None
        traj = play_episodes(env, policy, users[k], draws)
        mine = agent.message_statistics(*traj)
        theirs = agent.message_statistics(*play_episodes(env, policy, other, draws)) if k == j else None
        messages = agent.update(k, *traj)
        unknown = sorted(set(messages) - set(releases))
        if unknown:
            raise ValueError(f"{agent.name} sent messages its declaration does not name: {unknown}")
        whitened: dict[str, np.ndarray] = {}
        for name, release in releases.items():
            sym, count = release.noise == ReleaseNoise.SYMMETRIC, release.count
            lead = 2 if count > 1 else 1  # the run axis, then the messages' (one message: the whole array)
            x = np.asarray(mine[name], dtype=float)
            residual = flat(np.asarray(messages[name], dtype=float) - x, sym, lead).reshape(runs, count, -1)
            whiten = claim_whitening(agent.sigmas[name], run.claim_sigmas[name], count)
            whitened[name] = over_sigma(residual, whiten)
            magnitude = flat(np.abs(messages[name]) + np.abs(x), sym, lead).reshape(runs, count, -1)
            nodes[name].append((residual, magnitude))
            if theirs is None:
                continue
            x0, x1 = (x, np.asarray(theirs[name], dtype=float)) if run.which == 0 else (np.asarray(theirs[name]), x)
            d = flat(np.asarray(x1, dtype=float) - np.asarray(x0, dtype=float), sym, lead).reshape(runs, count, -1)
            # her messages under D: the residual against canary 0's statistics
            residual0 = residual if run.which == 0 else residual + d
            nodes[name][-1], delta[name] = (residual0, magnitude), d
            r, a, a_claim, a_used = project(
                residual0,
                d,
                step_column(agent.sigmas[name], 1),
                step_column(run.claim_sigmas[name], 1),
                step_column(run.sensitivities[name], 1),
            )
            trace.add(r, a, a_claim, a_used)
            if residual0[0].size <= MAX_COORDINATES:  # every whitened coordinate of her messages (small messages)
                trace.extra(over_sigma(residual0, whiten))
            if count > 1:
                cross = cross_projections_runs(residual0, d, whiten)
                trace.extra(cross[:, ~np.eye(count, dtype=bool)])
            norm = np.linalg.norm(d, axis=-1, keepdims=True)
            directions[name] = np.where(norm > 0, d / np.where(norm > 0, norm, 1.0), 0.0)
        residuals.append(whitened)
    for k, whitened in enumerate(residuals):  # every other user's messages on her directions
        if k != j:
            for name, direction in directions.items():
                trace.extra(np.einsum("rcm,rcm->rc", whitened[name], direction))
    trace.read(changed_user_votes([_message_nodes(nodes[n], delta[n], agent.sigmas[n]) for n in releases]))
    return trace.rows(True)


class _RunOfOne:
    """An agent of one run (a user's, or an implementation under test) seen as a batch of one: a run axis of one on
    its plans' policies, trajectories, statistics and messages."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)
        self.declaration = agent.declaration
        self.sigmas = agent.sigmas
        if callable(getattr(agent, "message_statistics", None)):
            self.message_statistics = self._statistics

    def plan(self, k: int) -> Plan:
        made = self.agent.plan(k)
        released = {n: np.asarray(v)[None] for n, v in getattr(made, "released", {}).items()}
        return Plan(np.asarray(made.policy)[None], released)

    def _statistics(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        out = self.agent.message_statistics(states[0], actions[0], rewards[0])
        return {n: np.asarray(v)[None] for n, v in out.items()}

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        out = self.agent.update(k, states[0], actions[0], rewards[0])
        return {n: np.asarray(v)[None] for n, v in out.items()}


def _message_nodes(nodes: list[tuple[np.ndarray, np.ndarray]], delta: np.ndarray, sigma: Any) -> CounterNodes:
    """One release's messages of users 0 … j as :class:`~dpkit.audits.rl.reused_noise.CounterNodes` of R runs (one
    node per user): ``nodes`` each user's (residual against her statistics — canary 0's for user j —, its magnitude),
    (R, count, m) each; ``delta`` user j's difference (R, count, m); ``sigma`` the σ the agent reports (one, or one
    per message)."""
    residual, magnitude = np.stack([x for x, _ in nodes], axis=1), np.stack([m for _, m in nodes], axis=1)
    mine = np.zeros(residual.shape)
    mine[:, -1] = delta
    used = np.asarray(sigma, dtype=float).reshape(-1, 1)
    return CounterNodes(residual, np.arange(len(nodes)), magnitude, np.zeros(residual.shape), mine, used)


def claim_whitening(sigma: Any, sigma_claim: Any, count: int) -> Any:
    """The σ each of ``count`` messages is whitened by: the claim's, or the σ used where the claim's is 0.

    Args:
        sigma: The σ the agent reports: one, or one per message.
        sigma_claim: The σ the claim needs: one, or one per message (0: a step of sensitivity 0).
        count: How many messages.

    Returns:
        One σ (the claim's, when it is one positive number), else one per message as a (count, 1) column.
    """
    used = np.broadcast_to(np.asarray(sigma, dtype=float), (count,)) if np.ndim(sigma) else np.full(count, sigma)
    claim = np.broadcast_to(np.asarray(sigma_claim, dtype=float), (count,)) if np.ndim(sigma_claim) else None
    if claim is None:
        return float(sigma_claim) if float(sigma_claim) > 0 else used.reshape(-1, 1)
    return np.where(claim > 0, claim, used).reshape(-1, 1)


def local_messages_audit(*, defaults: Mapping[str, Any] | None = None) -> AuditSpec:
    """The :class:`~dpkit.algorithms.spec.AuditSpec` of a local-DP agent that follows the messages protocol.

    Its observer is :func:`observe_messages`, its world :func:`beyond_bounds_world`.

    Args:
        defaults: The default audit setting's fields (small sizes: S = 2, H = 3, K = 3 unless given).

    Returns:
        The audit spec.

    Examples:
        >>> local_messages_audit().defaults["episodes"]
        3
    """
    return AuditSpec(
        observers=("messages",),
        white_box=("messages",),
        world=beyond_bounds_world,
        observe=observe_messages,
        defaults={"states": 2, "horizon": 3, "episodes": 3, **dict(defaults or {})},
        canaries="disjoint states, raw rewards −1 against 2 (beyond [0, 1]): only the agent's clipping keeps "
        "her messages at their declared Δ",
    )


# -- the positions of the changed user an audit probes (dpkit.audits.rl) ------------------------------------------
#
# A positions hook (AuditSpec.positions) is called as positions(setting) for the named positions a default audit
# probes, name → (0-based index, share), and as positions(setting, index) for the share of any user: the share of the
# declared mechanisms that hold the user at that index (1 where she is in as many as the worst-placed user).


def positions_with_shares(
    indices: Mapping[str, int], shares: Sequence[float], index: int | None
) -> dict[str, tuple[int, float]] | float:
    """Named positions with their shares, or the share of one index.

    Args:
        indices: Position name → 0-based user index; a repeated index keeps its first name (in order of index).
        shares: The share of every user.
        index: A user's index, or ``None`` for the named positions.

    Returns:
        Name → (index, share) in order of index, or the share of ``index``.

    Raises:
        ValueError: ``index`` is not a user's.

    Examples:
        >>> positions_with_shares({"first": 0, "again": 0, "last": 2}, [1.0, 0.5, 0.25], None)
        {'first': (0, 1.0), 'last': (2, 0.25)}
        >>> positions_with_shares({}, [1.0, 0.5, 0.25], 1)
        0.5
    """
    if index is not None:
        if not 0 <= index < len(shares):
            raise ValueError(f"position index must lie in 0 … {len(shares) - 1}, got {index}")
        return float(shares[index])
    out: dict[str, tuple[int, float]] = {}
    for name, i in sorted(indices.items(), key=lambda item: item[1]):
        if all(i != j for j, _ in out.values()):
            out[name] = (int(i), float(shares[i]))
    return out


def default_positions(setting: AuditedSetting, index: int | None = None) -> dict[str, tuple[int, float]] | float:
    """The positions an audit probes when every user's data is released alike (a local-DP user's own messages).

    Args:
        setting: The audit's setting (its ``episodes`` K).
        index: A user's index, or ``None`` for the named positions.

    Returns:
        The first, the middle and the last user, each with share 1 (or the share of ``index``: 1).

    Examples:
        >>> from types import SimpleNamespace
        >>> default_positions(SimpleNamespace(episodes=4))
        {'first': (0, 1.0), 'middle': (2, 1.0), 'last': (3, 1.0)}
    """
    k = int(setting.episodes)
    return positions_with_shares({"first": 0, "middle": k // 2, "last": k - 1}, [1.0] * k, index)


def tree_positions(
    setting: AuditedSetting, index: int | None = None, *, schedule: Schedule = Schedule.BEFORE_EPISODE
) -> dict[str, tuple[int, float]] | float:
    """The positions an audit of binary-tree counters over the users probes.

    The first, the middle and the last user any released p-sum holds, and every user whose index k or k + 1 is a power
    of two (the first user after a completed block, and the last of one: how many p-sums hold her changes there). A
    user's share is the p-sums holding her over the most any user is in
    (:func:`~dpkit.accountant.tree.psums_per_item`).

    Args:
        setting: The audit's setting (its ``episodes`` K).
        index: A user's index, or ``None`` for the named positions.
        schedule: When the counter releases its prefixes (:func:`~dpkit.accountant.tree.psums_per_item`).

    Returns:
        Name → (index, share), or the share of ``index``.

    Raises:
        ValueError: No user is in a released p-sum.
    """
    from dpkit.accountant.tree import psums_per_item

    counts = psums_per_item(int(setting.episodes), schedule=schedule)
    released = [i for i, c in enumerate(counts) if c > 0]
    if not released:
        raise ValueError(f"no user is in a released p-sum with {setting.episodes} episodes ({schedule})")
    named = {"first": released[0], "middle": released[len(released) // 2], "last": released[-1]}
    for i in released:
        if i & (i - 1) == 0 or (i + 1) & i == 0:  # k or k + 1 a power of two (k = 0 included)
            named.setdefault(f"k={i}", i)
    return positions_with_shares(named, [c / counts.max() for c in counts], index)


def later_release_positions(setting: AuditedSetting, index: int | None = None) -> dict[str, tuple[int, float]] | float:
    """The positions of an algorithm that releases, before each episode, a function of every earlier user.

    One release per later episode holds user k: the positions are the first, the middle and the last user a release
    holds (user K − 2), with share (K − 1 − k)/(K − 1), the share of the K − 1 releases that hold user k.

    Args:
        setting: The audit's setting (its ``episodes`` K).
        index: A user's index, or ``None`` for the named positions.

    Returns:
        Name → (index, share), or the share of ``index``.

    Examples:
        >>> from types import SimpleNamespace
        >>> later_release_positions(SimpleNamespace(episodes=5))
        {'first': (0, 1.0), 'middle': (1, 0.75), 'last': (3, 0.25)}
    """
    k = int(setting.episodes)
    shares = [(k - 1 - i) / (k - 1) for i in range(k)]
    return positions_with_shares({"first": 0, "middle": (k - 2) // 2, "last": k - 2}, shares, index)
