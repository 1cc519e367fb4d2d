"""The billboard protocol: how a user's own jointly private agent is audited, as the seed algorithms are.

A jointly private agent publishes noisy counters over the users (a *billboard*) and serves each user a plan from
them. An agent follows the billboard protocol when it offers ``declaration``, ``sigmas``, ``plan(k)`` (with its
``released`` noisy prefixes), ``billboard_items(states, actions, rewards)`` and ``update(k, ...)``;
:func:`billboard_audit` is its audit (world, observer :func:`observe_billboard`, positions, one-run scores) and
:func:`agent_protocol` tells it from the local-DP messages protocol. The protocol in full, the counter structures it
accepts and what the observer reads: docs/explanation/observers.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from dpkit.accountant.sensitivity import ReleaseNoise
from dpkit.accountant.tree import max_psums_per_item
from dpkit.algorithms import registry
from dpkit.algorithms.spec import AuditSpec

from .observers import (
    ObservedRun,
    OneRun,
    OneRunView,
    Trace,
    later_release_positions,
    positions_with_shares,
    tabular_world,
    tree_positions,
)
from .plan_worlds import tabular_plan_probe
from .psums import CounterLog, CounterReading, one_run_view
from .worlds import AuditedSetting, AuditWorld

__all__ = [
    "PROTOCOLS",
    "STRUCTURES",
    "counter_structure",
    "setting_structure",
    "allowed_psums",
    "billboard_positions",
    "billboard_world",
    "observe_billboard",
    "billboard_one_run",
    "billboard_audit",
    "agent_protocol",
]

#: The protocols a user's agent may follow, and the method that says which: local-DP messages, or a billboard.
PROTOCOLS: Mapping[str, str] = {"messages": "message_statistics", "billboard": "billboard_items"}
#: How a billboard's prefixes are built: binary-tree p-sums, or fresh noise on every prefix.
STRUCTURES = ("tree", "prefix")


def counter_structure(declaration: Any, episodes: int) -> str:
    """How a billboard's prefixes are built, as a declaration's counts say: ``"tree"`` or ``"prefix"``.

    ``"tree"`` when every release declares, per step, the m p-sums of a binary-tree counter over ``episodes`` users
    (before-episode releases: :func:`~dpkit.accountant.tree.max_psums_per_item`); ``"prefix"`` when it declares the
    K − 1 released prefixes that hold the first user (every prefix noised afresh). Where the two agree (K <= 3) the
    counters are the same: ``"tree"``.

    Args:
        declaration: The privacy declaration (its releases' ``count`` and ``steps``).
        episodes: K, the users.

    Returns:
        ``"tree"`` or ``"prefix"``.

    Raises:
        ValueError: A release declares another count, or the releases mix the two structures.
    """
    k = int(episodes)
    tree, prefix = max_psums_per_item(k, schedule="before-episode"), max(k - 1, 1)
    found = set()
    for r in declaration.releases:
        steps = max(int(r.steps), 1)
        per = r.count / steps
        if per == tree:
            found.add("tree")
        elif per == prefix:
            found.add("prefix")
        else:
            raise ValueError(
                f"{declaration.algorithm}'s release {r.name!r} declares count {r.count} ({per:g} per step over "
                f"{steps} step(s)) for K = {k} users: the billboard protocol reads binary-tree counters (m = {tree} "
                f"p-sums per user and step) or counters that noise every prefix afresh (K − 1 = {prefix}); declare "
                "one of these, or audit the agent through an AlgorithmSpec with an observer of your own"
            )
    if len(found) > 1:
        raise ValueError(
            f"{declaration.algorithm}'s releases mix binary-tree counters and counters noised on every prefix: "
            "the billboard protocol reads one kind per agent"
        )
    return found.pop() if found else "tree"


@functools.lru_cache(maxsize=64)
def _registered_structure(setting: AuditedSetting, generation: int) -> str:
    env = billboard_world(setting)[0]
    sizes = {"episodes": setting.episodes, "horizon": env.horizon, "states": env.states, "actions": env.actions}
    return counter_structure(
        registry.declare(setting.algorithm, setting.epsilon, setting.delta, **sizes), setting.episodes
    )


def setting_structure(setting: AuditedSetting) -> str:
    """The structure (:func:`counter_structure`) of the *registered* agent of ``setting`` at its K.

    It is never the implementation under test's: the registered declaration is read (cached per registry generation).

    Args:
        setting: The audit's setting (its ``algorithm``, ε, δ and sizes).

    Returns:
        ``"tree"`` or ``"prefix"``.
    """
    return _registered_structure(setting, registry.generation())


def _declared_psums(setting: AuditedSetting) -> int:
    """The p-sums per user and step the declaration counts: the tree's m, or K − 1 for counters noised on every
    prefix."""
    k = int(setting.episodes)
    return max(k - 1, 1) if setting_structure(setting) == "prefix" else max_psums_per_item(k, schedule="before-episode")


def allowed_psums(setting: AuditedSetting, index: int) -> int:
    """How many p-sums the audit allows the user at ``index`` of a billboard agent: min(m, K − 1 − k).

    m is the p-sums per user and step the declaration counts (the tree's, or K − 1 for counters noised on every
    prefix). The declaration says no user is in more than m; a counter that adds one noisy p-sum per user can hold
    user k in no more than the K − 1 − k released after her. Where her p-sums lie within that — a tree laid out from
    another leaf, a counter primed with an item — is the agent's, not the auditor's to know: reading it from the
    standard layout could allow a correct agent less than it uses.

    Args:
        setting: The audit's setting.
        index: The user's index k (0-based).

    Returns:
        The p-sums allowed (0 for the last user).
    """
    return max(min(_declared_psums(setting), int(setting.episodes) - 1 - int(index)), 0)


def billboard_positions(setting: AuditedSetting, index: int | None = None) -> dict[str, tuple[int, float]] | float:
    """The positions of a billboard agent's audit, or the share of one user.

    The tree's (:func:`~dpkit.audits.rl.observers.tree_positions`) or, for counters noised on every prefix, the first,
    middle and last user a release holds (:func:`~dpkit.audits.rl.observers.later_release_positions`); user k's share
    is :func:`allowed_psums` over the declared m — what the declaration allows her, whatever the layout.

    Args:
        setting: The audit's setting.
        index: A user's index, or ``None`` for the named positions.

    Returns:
        Name → (index, share), or the share of ``index``.
    """
    k, m = int(setting.episodes), max(_declared_psums(setting), 1)
    shares = list(np.clip(k - 1 - np.arange(k), 0, m) / m)
    if index is not None:
        return positions_with_shares({}, shares, index)
    named = later_release_positions(setting) if setting_structure(setting) == "prefix" else tree_positions(setting)
    assert isinstance(named, dict)
    return positions_with_shares({name: i for name, (i, _) in named.items()}, shares, None)


def billboard_world(setting: AuditedSetting) -> AuditWorld:
    """The tabular world of a billboard audit: canaries on disjoint states from the first step with raw rewards 2.

    The rewards lie beyond [0, 1], so that only the agent's own clipping keeps her items at their declared
    sensitivities (both clip to 1 on disjoint cells: the reward items differ by their whole Δ).

    Args:
        setting: The audit's setting.

    Returns:
        (environment, users of D, (canary 0, canary 1)), as :func:`~dpkit.audits.rl.observers.tabular_world`.
    """
    return tabular_world(setting, (2.0, 2.0))


def _check(agent: Any) -> dict[str, Any]:
    missing = [m for m in ("plan", "update", "billboard_items", "declaration", "sigmas") if not hasattr(agent, m)]
    if missing:
        raise TypeError(
            f"the agent {type(agent).__name__} does not follow the billboard protocol: it has no {', '.join(missing)}"
        )
    return {r.name: r for r in agent.declaration.releases}


def _released(agent: Any, plan: Any, releases: Mapping[str, Any], k: int) -> Mapping[str, np.ndarray]:
    released = dict(getattr(plan, "released", {}) or {})
    if sorted(released) != sorted(releases):
        raise ValueError(
            f"{type(agent).__name__}.plan({k}).released must map every declared counter {sorted(releases)} to its "
            f"noisy prefix, got {sorted(released)}"
        )
    return released


def observe_billboard(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The ``billboard`` observer of any agent that follows the billboard protocol.

    It plays every user, reads every released prefix of every counter, recovers the p-sums and whitens each at the σ
    the claim needs (:meth:`~dpkit.audits.rl.psums.CounterLog.finish`), and records the plan ``plan(k)`` serves every
    user after the changed one (the whole view: :meth:`~dpkit.audits.rl.rows.Trace.plan`). The protocol:
    docs/explanation/observers.md.

    Args:
        run: The run to play (:class:`~dpkit.audits.rl.observers.ObservedRun`).
        rng: The run's randomness (the agent's and the policies' draws).

    Returns:
        The run's white-box row.

    Raises:
        TypeError: The agent does not follow the billboard protocol.
        ValueError: A plan's ``released`` does not name every declared counter.
    """
    from dpkit.algorithms.episodes import play_episode

    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    releases = _check(agent)
    names = tuple(releases)
    log = CounterLog(names, {n: releases[n].steps > 1 for n in names})
    trace = Trace()
    for k in range(len(users)):
        plan = agent.plan(k)
        log.released(_released(agent, plan, releases, k))
        policy = np.asarray(plan.policy)
        if k > j:  # the whole view: the plans served after her
            trace.plan(policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        traj = play_episode(env, policy, users[k], draws)
        theirs = agent.billboard_items(*play_episode(env, policy, other, draws)) if k == j else None
        log.episode(agent.billboard_items(*traj), theirs, run.which)
        agent.update(k, *traj)
    reading = CounterReading(
        dict(agent.sigmas),
        run.claim_sigmas,
        {n: releases[n].noise == ReleaseNoise.SYMMETRIC for n in names},
        run.sensitivities,
        coordinates=True,
        structure=setting_structure(run.setting),
        allowance_psums=allowed_psums(run.setting, j),
    )
    log.finish(trace, j, reading)
    return trace.row(True)


def billboard_one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """Score a one-run audit of a billboard agent: every user a canary, user k canary ``run.coins[k]``.

    The scores read every released prefix of every counter and both canaries' items under the plan each user was served
    (:func:`~dpkit.audits.rl.psums.billboard_one_run_features`: the scores, and features for a learned score).

    Args:
        run: The run to play (:class:`~dpkit.audits.rl.observers.OneRun`).
        rng: The run's randomness.

    Returns:
        The scores, their reach at the claim and the features (:class:`~dpkit.audits.rl.observers.OneRunView`).

    Raises:
        ValueError: The observer is not ``billboard``.
    """
    from dpkit.algorithms.episodes import play_episode

    if run.observer != "billboard":
        raise ValueError(f"one-run audits of a billboard agent read the billboard, not {run.observer!r}")
    env, _, canaries = run.world
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    releases = _check(agent)
    names = tuple(releases)
    batched = {n: releases[n].steps > 1 for n in names}
    log0, log1 = CounterLog(names, batched), CounterLog(names, batched)
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        log0.released(_released(agent, plan, releases, k))
        policy = np.asarray(plan.policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        trajectories = [play_episode(env, policy, canary, draws) for canary in canaries]
        log0.episode(agent.billboard_items(*trajectories[0]), None, 0)
        log1.episode(agent.billboard_items(*trajectories[1]), None, 0)
        agent.update(k, *trajectories[int(coin)])
        run.advance()
    symmetric = {n: releases[n].noise == ReleaseNoise.SYMMETRIC for n in names}
    reading = CounterReading(
        dict(agent.sigmas), run.claim_sigmas, symmetric, run.sensitivities, structure=setting_structure(run.setting)
    )
    return one_run_view(log0, log1, reading)


def billboard_audit(*, defaults: Mapping[str, Any] | None = None) -> AuditSpec:
    """The :class:`~dpkit.algorithms.spec.AuditSpec` of a joint-DP agent that follows the billboard protocol.

    Its world is :func:`billboard_world`, its observer :func:`observe_billboard`, its positions
    :func:`billboard_positions`, its one-run scores :func:`billboard_one_run`.

    Args:
        defaults: The default audit setting's fields (S = 2, H = 3, K = 4 unless given).

    Returns:
        The audit spec.

    Examples:
        >>> billboard_audit(defaults={"episodes": 8}).defaults["episodes"]
        8
    """
    return AuditSpec(
        observers=("billboard",),
        white_box=("billboard",),
        world=billboard_world,
        observe=observe_billboard,
        one_run=billboard_one_run,
        positions="dpkit.audits.rl.billboard:billboard_positions",
        plan_probe=tabular_plan_probe,
        defaults={"states": 2, "horizon": 3, "episodes": 4, **dict(defaults or {})},
        canaries="disjoint states from the first step, raw rewards 2 (beyond [0, 1]): only the agent's clipping keeps "
        "her counters' items at their declared Δ",
    )


def agent_protocol(factory: Callable[..., Any]) -> str:
    """Which protocol an agent factory's agents follow: ``"billboard"`` or ``"messages"``.

    They follow the billboard protocol when they offer ``billboard_items``, the messages protocol when they offer
    ``message_statistics``. A class is read as it is; a function is called once on a small world.

    Args:
        factory: An agent factory (a class or a function of :func:`~dpkit.algorithms.simulation.make_agent`'s
            signature).

    Returns:
        ``"billboard"`` or ``"messages"``.

    Raises:
        TypeError: The agents offer neither method, or both.
    """
    if isinstance(factory, type):
        offered = [p for p, method in PROTOCOLS.items() if callable(getattr(factory, method, None))]
    else:
        from types import SimpleNamespace

        probe = SimpleNamespace(states=2, actions=2, horizon=3, episodes=4, users_seed=0)  # the fields a world reads
        env = billboard_world(cast(AuditedSetting, probe)).env
        agent = factory("agent", env, 4, np.random.default_rng(0), epsilon=1.0, delta=1e-5, sigma="paper")
        offered = [p for p, method in PROTOCOLS.items() if callable(getattr(agent, method, None))]
    if len(offered) != 1:
        raise TypeError(
            f"{getattr(factory, '__name__', factory)!r} must follow one protocol: the messages protocol (local DP: "
            "message_statistics) or the billboard protocol (joint DP: billboard_items); "
            f"it offers {offered or 'neither'}"
        )
    return offered[0]
