"""Regret experiments: one algorithm, one environment, several seeds.

:class:`Experiment` names everything a run depends on; :func:`simulate` runs one seed of it and returns the
:class:`~dpkit.algorithms.episodes.Run`, :func:`simulate_seeds` several at once. Same experiment and seed, same run
(how the seeds are used: docs/explanation/environments.md). :func:`regret_slope` fits the log-log slope of cumulative
regret against episodes, the usual check that regret is sublinear (slope < 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.validation import (
    check_choice,
    check_count,
    check_index,
    check_positive,
    check_probability,
)

from . import registry
from .envs.catalog import check_environment, external_sizes, make_environment
from .envs.from_gymnasium import is_external
from .envs.lq import LQ_WORLDS
from .envs.tabular import ENVIRONMENTS as TABULAR_ENVIRONMENTS
from .envs.tabular import Users
from .episodes import SIGMA_CHOICES, Run, check_sigma, run_tabular_runs
from .limits import LIMITS, above_limit

__all__ = [
    "SIMULATED_ENVIRONMENTS",
    "Experiment",
    "make_agent",
    "simulate",
    "simulate_seeds",
    "check_options",
    "baseline_regrets",
    "batched_factory",
    "regret_slope",
]

#: The environments of dpkit's own an experiment may name (a user's besides: :mod:`dpkit.algorithms.envs.catalog`).
SIMULATED_ENVIRONMENTS: tuple[str, ...] = TABULAR_ENVIRONMENTS + tuple(LQ_WORLDS)


@dataclass(frozen=True)
class Experiment:
    """One algorithm on one environment at one privacy level, checked on construction.

    Every size is at most its stated limit (:data:`dpkit.algorithms.limits.LIMITS`), checked before anything is
    allocated.

    Attributes:
        algorithm: A registered algorithm's name.
        env: The environment: ``lq`` for the LQ algorithms, else a tabular one of dpkit's or a user's.
        episodes: K, the users of each run.
        states: S of a tabular environment (a user's environment fixes it).
        actions: A of a tabular environment (a user's environment fixes it).
        horizon: H; None for 2S (tabular) or 10 (LQ).
        epsilon: The target ε; private algorithms need it (RLSVI takes it for its ledger only, as its σ is its
            exploration noise).
        delta: The target δ; private algorithms need it.
        sigma: ``"paper"``, ``"tight"``, ``"optimal"`` or a number (the σ of every release).
        state_dim: n of an LQ system.
        control_dim: d of an LQ system.
        env_seed: The seed the environment is drawn from, once for every seed of the experiment.
        options: (name, value) pairs passed to the algorithm (bonus scales, β, ...).

    Raises:
        ValueError: If the algorithm and environment do not go together, a size is invalid or above its limit, a
            private algorithm lacks ``epsilon`` or ``delta``, or ``sigma`` is invalid (or set for a non-private one).
    """

    algorithm: str
    env: str
    episodes: int
    states: int = 5
    actions: int = 2
    horizon: int | None = None
    epsilon: float | None = None
    delta: float | None = None
    sigma: str | float = "paper"
    state_dim: int = 2
    control_dim: int = 1
    env_seed: int = 0
    options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        spec = registry.get(self.algorithm)
        lq = spec.lq
        if self.env not in LQ_WORLDS or not lq:
            if lq or self.env in LQ_WORLDS:
                kind = (
                    f"an LQ world ({', '.join(LQ_WORLDS)})"
                    if lq
                    else f"a tabular environment ({', '.join(TABULAR_ENVIRONMENTS)}, …)"
                )
                raise ValueError(f"{self.algorithm} runs on {kind}, got env {self.env!r}")
            check_environment(self.env)
        check_count("episodes", self.episodes)
        check_count("states", self.states)
        check_count("actions", self.actions)
        if is_external(self.env):  # a user's environment: its own model fixes S and A
            horizon = None if self.horizon is None else check_count("horizon", self.horizon)
            s_, a_ = external_sizes(self.env, horizon or 1)
            given = {"states": (self.states, 5), "actions": (self.actions, 2)}
            for key, value in (("states", s_), ("actions", a_)):
                if given[key][0] not in (given[key][1], value):
                    raise ValueError(f"{self.env} has {key} = {value}, got {key} = {given[key][0]}")
                object.__setattr__(self, key, value)
        for name in ("episodes", "states", "actions", "horizon", "state_dim", "control_dim"):  # before any allocation
            value = getattr(self, name)
            if value is not None and check_count(name, value) > LIMITS[name]:
                raise ValueError(above_limit(name, value, LIMITS[name]))
        if self.env.startswith("riverswim") and self.actions != 2:
            raise ValueError(f"RiverSwim has 2 actions, got actions = {self.actions}")
        check_index("env_seed", self.env_seed)
        if spec.private and spec.default_epsilon is None:
            if self.epsilon is None or self.delta is None:
                raise ValueError(f"{self.algorithm} is private: give epsilon and delta")
        if self.epsilon is not None:
            check_positive("epsilon", self.epsilon)
        if self.delta is not None:
            check_probability("delta", self.delta)
        if isinstance(self.sigma, str):
            check_choice("sigma", self.sigma, SIGMA_CHOICES)
        else:
            check_sigma("sigma", self.sigma)
        if not spec.private and self.sigma != Allocation.PAPER:
            raise ValueError(f"{self.algorithm} is not private and adds no noise: sigma must be left at 'paper'")

    @property
    def private(self) -> bool:
        """Whether the algorithm is private."""
        return registry.get(self.algorithm).private

    @property
    def steps_per_episode(self) -> int:
        """The horizon the runs face: ``horizon``, or its default (2S tabular, 10 LQ)."""
        if self.horizon is not None:
            return self.horizon
        return 10 if self.env in LQ_WORLDS else 2 * self.states

    def to_dict(self) -> dict[str, Any]:
        """The experiment as plain data.

        Returns:
            Every field by name, ``options`` as a dict.
        """
        d = asdict(self)
        d["options"] = dict(self.options)
        return d


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    users, agent, actions = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(users), np.random.default_rng(agent), np.random.default_rng(actions)


def make_agent(
    name: str,
    env: Any,
    episodes: int,
    rng: np.random.Generator | int | Sequence[np.random.Generator],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: Any = "paper",
    **options: Any,
) -> Any:
    """Any registered algorithm's agent by name, built by the algorithm's own factory (its spec's ``entry_point``).

    Args:
        name: A registered algorithm's name (:func:`dpkit.algorithms.registry.names`).
        env: A tabular MDP, or an LQ system for an algorithm whose spec says ``environment="lq"``.
        episodes: K.
        rng: One Generator (or seed), or one Generator per run for an algorithm whose agent takes runs
            (:func:`batched_factory`).
        epsilon: The target ε, or None.
        delta: The target δ, or None.
        sigma: ``"paper"``, ``"tight"``, ``"optimal"``, a number or a mapping release → σ.
        **options: Passed to the factory (bonus scales, β, ...).

    Returns:
        The agent.

    Raises:
        ValueError: If ``name`` is not registered, or the factory refuses its arguments.
    """
    factory = registry.get(name).make_agent()
    return factory(name, env, episodes, rng, epsilon=epsilon, delta=delta, sigma=sigma, **options)


def batched_factory(name: str) -> bool:
    """Whether algorithm ``name``'s agent takes runs (a batch of runs, built with a sequence of Generators).

    Args:
        name: A registered algorithm's name.

    Returns:
        True for the seed algorithms whose agents are batches (LinOpt, OFU-RL, LDP-UCRL-VTR, RLSVI); False for
        UCRL-VTR's baseline and every plugin's agent, which simulate one seed at a time.

    Raises:
        ValueError: If ``name`` is not a registered algorithm.

    Examples:
        >>> batched_factory("ldp-ucrl-vtr"), batched_factory("ucrl-vtr")
        (True, False)
    """
    from . import ldp_ucrl_vtr, linopt, ofu_rl, rlsvi

    factory = registry.get(name).make_agent()
    return any(factory is m.make_agent for m in (linopt, ofu_rl, ldp_ucrl_vtr, rlsvi))


def check_options(experiment: Experiment) -> Experiment:
    """``experiment`` when its algorithm's factory takes its ``options``: one agent is built (no episode played).

    Args:
        experiment: The experiment.

    Returns:
        ``experiment``.

    Raises:
        ValueError: If the factory refuses an option (unknown, out of range, or an unknown preset), naming it.
    """
    e = experiment
    if e.env in LQ_WORLDS:
        from .envs.lq import make_lq_world

        env: Any = make_lq_world(e.env, e.state_dim, e.control_dim, e.horizon or 10, np.random.default_rng(e.env_seed))
    else:
        env = make_environment(e.env, e.states, np.random.default_rng(e.env_seed), actions=e.actions, horizon=e.horizon)
    try:
        make_agent(e.algorithm, env, e.episodes, 0, epsilon=e.epsilon, delta=e.delta, sigma=e.sigma, **dict(e.options))
    except TypeError as err:
        raise ValueError(f"{e.algorithm}'s options {dict(e.options)!r}: {err}") from None
    return experiment


def baseline_regrets(experiment: Experiment) -> dict[str, float]:
    """The expected regret per episode of the policies that ignore their data, in the experiment's environment.

    Tabular: the uniformly random policy (:func:`~dpkit.algorithms.regret_stats.uniform_tabular_regret`). LQ: no
    control (the zero gains) and controls drawn uniformly from the ball ‖u‖ <= γ
    (:func:`~dpkit.algorithms.regret_stats.uniform_lq_regret`). Exact, from the environment of ``env_seed``.

    Args:
        experiment: The experiment.

    Returns:
        Baseline name (``"uniform"``, ``"no control"``) → its regret per episode, in the order a report shows them.
    """
    from .regret_stats import uniform_lq_regret, uniform_tabular_regret

    e = experiment
    rng = np.random.default_rng(e.env_seed)
    if e.env in LQ_WORLDS:
        from .envs.lq import make_lq_world

        system = make_lq_world(e.env, e.state_dim, e.control_dim, e.horizon or 10, rng)
        zero = np.zeros((system.horizon, system.control_dim, system.state_dim))
        return {"no control": float(system.regret(zero)), "uniform": uniform_lq_regret(system)}
    env = make_environment(e.env, e.states, rng, actions=e.actions, horizon=e.horizon)
    return {"uniform": uniform_tabular_regret(env)}


def simulate(
    experiment: Experiment, seed: int, *, record: bool = False, progress: Callable[[int], None] | None = None
) -> Run:
    """Run seed ``seed`` of ``experiment``: :func:`simulate_seeds` of that one seed.

    Args:
        experiment: The experiment.
        seed: An integer >= 0.
        record: Whether the releases of every episode are kept (``Run.releases``).
        progress: Called with 1 after each episode, or None.

    Returns:
        The run.

    Raises:
        ValueError: If ``experiment`` is not an :class:`Experiment` or ``seed`` is negative.
    """
    return simulate_seeds(experiment, [seed], record=record, progress=progress)[0]


def simulate_seeds(
    experiment: Experiment,
    seeds: Sequence[int],
    *,
    record: bool = False,
    progress: Callable[[int], None] | None = None,
) -> list[Run]:
    """The runs of several seeds of ``experiment`` at once, run i exactly ``simulate(experiment, seeds[i])``.

    An algorithm whose agent takes runs (:func:`batched_factory`) plays every seed in one batch: one agent of the
    seeds' Generators, each seed facing its own users, the episodes of all seeds stepped together and their policies
    evaluated together. Any other (UCRL-VTR's baseline, a plugin's agent) runs its seeds one after another.

    Args:
        experiment: The experiment.
        seeds: A non-empty sequence of integers >= 0.
        record: Whether the releases of every episode are kept (``Run.releases``).
        progress: Called with the number of episodes played (of all the seeds together) as they finish, or None.

    Returns:
        One run per seed, in the order of ``seeds``.

    Raises:
        ValueError: If ``experiment`` is not an :class:`Experiment`, or ``seeds`` is empty or holds a negative seed.
    """
    if not isinstance(experiment, Experiment):
        raise ValueError(f"experiment must be an Experiment, got {type(experiment).__name__}")
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty sequence of seeds, got {seeds!r}")
    seeds = [check_index("seed", s) for s in seeds]
    if len(seeds) > 1 and not batched_factory(experiment.algorithm):
        return [run for s in seeds for run in _simulate_batch(experiment, [s], record, progress)]
    return _simulate_batch(experiment, seeds, record, progress)


def _simulate_batch(
    e: Experiment, seeds: Sequence[int], record: bool, progress: Callable[[int], None] | None
) -> list[Run]:
    """The seeds' runs played together (one seed: its agent of one Generator)."""
    streams = [_streams(s) for s in seeds]
    agent_rng: np.random.Generator | list[np.random.Generator] = [a for _, a, _ in streams]
    if len(seeds) == 1:
        agent_rng = streams[0][1]
    action_rngs = [c for _, _, c in streams]
    options = dict(e.options)
    if e.env in LQ_WORLDS:
        from . import ofu_rl
        from .envs.lq import make_lq_world
        from .envs.lq_users import LQUsers

        system = make_lq_world(e.env, e.state_dim, e.control_dim, e.horizon or 10, np.random.default_rng(e.env_seed))
        lq_users = [LQUsers.draw(e.episodes, system, u) for u, _, _ in streams]
        agent = make_agent(
            e.algorithm, system, e.episodes, agent_rng, epsilon=e.epsilon, delta=e.delta, sigma=e.sigma, **options
        )
        return ofu_rl.run_lq_runs(
            agent, system, lq_users, action_rngs, record=record, sigmas=agent.sigmas, progress=progress
        )
    env = make_environment(e.env, e.states, np.random.default_rng(e.env_seed), actions=e.actions, horizon=e.horizon)
    users = [Users.draw(e.episodes, env.horizon, u) for u, _, _ in streams]
    agent = make_agent(
        e.algorithm, env, e.episodes, agent_rng, epsilon=e.epsilon, delta=e.delta, sigma=e.sigma, **options
    )
    return run_tabular_runs(agent, env, users, action_rngs, record=record, sigmas=agent.sigmas, progress=progress)


def __getattr__(name: str) -> Any:
    # the registered algorithms by kind, as registered now (plugins included)
    kinds: dict[str, dict[str, Any]] = {
        "SIMULATED_ALGORITHMS": {},
        "TABULAR_ALGORITHMS": {"environment": "tabular"},
        "LQ_ALGORITHMS": {"environment": "lq"},
        "PRIVATE_ALGORITHMS": {"private": True},
    }
    if name in kinds:
        return registry.names(**kinds[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def regret_slope(cumulative_regret: np.ndarray, *, start: float = 0.1) -> float:
    """Least-squares slope of log R(k) against log k over k >= ``start``·K, on log-spaced points.

    A slope below 1 means sublinear regret over the range. Episodes where R(k) = 0 are skipped (no regret yet).

    Args:
        cumulative_regret: R(k) for k = 1 … K, K >= 2.
        start: The fraction of K where the fit starts, in (0, 1).

    Returns:
        The slope; NaN if fewer than two points remain.

    Raises:
        ValueError: If ``cumulative_regret`` is not 1-d with at least 2 episodes, or ``start`` is outside (0, 1).

    Examples:
        >>> import numpy as np
        >>> round(regret_slope(np.sqrt(np.arange(1, 1001))), 6)
        0.5
    """
    r = np.asarray(cumulative_regret, dtype=float)
    if r.ndim != 1 or r.shape[0] < 2:
        raise ValueError(f"cumulative_regret must be 1-d with at least 2 episodes, got shape {r.shape}")
    if not 0.0 < start < 1.0:
        raise ValueError(f"start must lie in (0, 1), got {start}")
    k_ = r.shape[0]
    first = max(1, int(start * k_))
    ks = np.unique(np.geomspace(first, k_, num=min(50, k_ - first + 1)).astype(int))
    vals = r[ks - 1]
    keep = vals > 0
    if keep.sum() < 2:
        return float("nan")
    slope, _ = np.polyfit(np.log(ks[keep]), np.log(vals[keep]), 1)
    return float(slope)
