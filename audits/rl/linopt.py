"""The audit world of the private LinOpt agents (:mod:`dpkit.audits.rl`): the canaries, and the observers of a run
(the billboard of released statistics, one-run views)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.binary_counter import BinaryCounter
from dpkit.algorithms.batches import ShippedClass, batch_parts, batchable
from dpkit.algorithms.episodes import play_episode, play_episodes
from dpkit.algorithms.linopt.agent import TUNED, PrivateLinOpt, Privatizer
from dpkit.algorithms.linopt.declaration import ALGORITHMS
from dpkit.algorithms.spec import AuditSpec

from .observers import ObservedRun, OneRun, OneRunView, Traces, tabular_world, tree_positions
from .plan_worlds import tabular_plan_probe
from .psums import CounterLog, CounterReading, one_run_view
from .worlds import AuditedSetting, AuditWorld

__all__ = [
    "AUDIT",
    "AUDITS",
    "audit_world",
    "observe",
    "observe_batch",
    "one_run",
]


def audit_world(setting: AuditedSetting) -> AuditWorld:
    """The audit's world: the MDP, the users and the two canaries.

    One canary starts in and walks state 0, the other state S − 1 (disjoint features at every step), both with raw
    rewards 2 — beyond [0, 1], which only LinOpt's own clipping brings back to the bound its reward counters'
    sensitivities assume. With the paper's bonus every optimistic Q sits at its cap H − h + 1, so each canary's
    φ_{V_{h+1}} is the full block (H − h)·1 and her target V_{h+1}(s_{h+1}) = H − h: every counter's item differs
    by its declared Δ at every step.

    Args:
        setting: The audit's setting (sizes and seeds).

    Returns:
        The environment, the users and the two canaries.
    """

    return tabular_world(setting, (2.0, 2.0))


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The row of one run as the run's observer sees it: ``billboard`` (white-box) or ``actions`` (black-box).

    ``billboard``: every released noisy prefix of every counter (its p-sums recovered and whitened) and the policy
    served to every later user (the whole view); ``actions``: the actions of all later users. It is
    :func:`observe_batch` of one run.

    Args:
        run: The audit's run (setting, dataset, world, changed user).
        rng: The run's Generator.

    Returns:
        The run's row.
    """
    row: np.ndarray = observe_batch(run, [rng])[0]
    return row


def observe_batch(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`observe` of many runs at once: row i is exactly what ``observe(run, rngs[i])`` returns.

    dpkit's own agent (no implementation under test) simulates the runs together, as one agent with a leading run
    axis, as is an implementation marked :func:`~dpkit.algorithms.batches.plays_runs`; any other implementation under
    test (a user's class, a mutant) is built with one Generator and observed run by
    run, through the same observer (a batch of one).

    Args:
        run: the audit's run (setting, dataset, world, changed user).
        rngs: one Generator per run (each run's own stream, as the per-run path draws it).

    Returns:
        One row per Generator (:meth:`~dpkit.audits.rl.rows.Trace.row`).
    """
    if batchable(run.setting.implementation, _SHIPPED):
        parts = batch_parts(rngs, _bytes_per_run(run))
        return np.concatenate([_observe_runs(run, part, batched=True) for part in parts])
    return np.stack([_observe_runs(run, [g], batched=False)[0] for g in rngs])


#: The classes a batch of runs plays as shipped: one patched in place (a test's monkeypatch) is an implementation
#: under test, played run by run.
_SHIPPED = (ShippedClass(PrivateLinOpt), ShippedClass(Privatizer), ShippedClass(BinaryCounter))


def _bytes_per_run(run: ObservedRun) -> float:
    """A generous estimate of one run's arrays in a batch: the counters' Gram sums (H, d1, d1) with d1 = S·A·S, held
    by the counters' levels, the billboard's prefixes and items, and the observer's whitened copies."""
    env = run.world[0]
    d1 = env.states * env.actions * env.states
    return float(8.0 * env.horizon * d1 * d1 * (8 + 8 * int(run.setting.episodes)))


class _OneRun:
    """An agent of one run (one Generator, no run axis: an implementation under test) seen as a batch of one."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.privatizer = agent.privatizer

    def plan(self, k: int) -> Any:
        from dpkit.algorithms.episodes import Plan

        plan = self.agent.plan(k)
        return Plan(np.asarray(plan.policy)[None], {n: np.asarray(v)[None] for n, v in plan.released.items()})

    def items(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        return {n: np.asarray(v)[None] for n, v in self.agent.items(k, states[0], actions[0], rewards[0]).items()}

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Any:
        return self.agent.update(k, states[0], actions[0], rewards[0])


def _observe_runs(run: ObservedRun, rngs: Sequence[np.random.Generator], *, batched: bool) -> np.ndarray:
    """The rows of the runs of ``rngs``: one agent of all the runs (``batched``: dpkit's agent with a run axis), or of
    the one run of ``rngs`` (an implementation under test, seen as a batch of one)."""

    s = run.setting
    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    streams = [g.spawn(2) for g in rngs]  # (agent, policy) of each run, as one run spawns them
    agent_rngs = [agent_rng for agent_rng, _ in streams]
    policy_rngs = [policy_rng for _, policy_rng in streams]
    if batched:
        make_runs: Callable[[Sequence[np.random.Generator], Any], Any] = run.make_agent  # type: ignore[assignment]
        agent = make_runs(agent_rngs, env)  # dpkit's agent takes one Generator per run
    else:
        if len(rngs) != 1:
            raise ValueError(f"an agent of one run observes one run, got {len(rngs)} Generators")
        agent = _OneRun(run.make_agent(agent_rngs[0], env))
    runs = len(rngs)
    log = CounterLog(tuple(agent.privatizer.counters), batched=True, runs=runs)
    traces = Traces(runs)
    for k in range(s.episodes):
        plan = agent.plan(k)
        log.released(plan.released)
        policy = np.asarray(plan.policy)
        if run.white_box and k > j:  # the whole view: the plans served after her (tables of actions or probabilities)
            traces.plan(policy)
        draws = np.stack([g.random(env.horizon) for g in policy_rngs]) if policy.ndim == 4 else None
        traj = play_episodes(env, policy, users[k], draws)
        if run.observer == "actions" and k > j:
            traces.see(np.eye(env.actions)[traj[1]])
        theirs = agent.items(k, *play_episodes(env, policy, other, draws)) if k == j else None
        log.episode(agent.items(k, *traj), theirs, run.which)
        agent.update(k, *traj)
    symmetric = {n: n.endswith(",1}") for n in log.names}
    log.finish_runs(traces, j, CounterReading(agent.privatizer.sigmas, run.claim_sigmas, symmetric, run.sensitivities))
    return traces.rows(run.white_box)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries (user k canary ``run.coins[k]``), scored from the billboard.

    The scores read every released prefix of every counter, and both canaries' items under the plan each user was
    served (:func:`~dpkit.audits.rl.psums.billboard_one_run_features`: the scores, and features for a learned
    score).

    Args:
        run: The one-run audit's run (setting, world, canaries and the users' coins).
        rng: The run's Generator.

    Returns:
        The users' scores, the observer's name, the reach and the features for a learned score.

    Raises:
        ValueError: If the observer is not ``billboard``.
    """

    if run.observer != "billboard":
        raise ValueError(f"one-run audits of {run.setting.algorithm} read the billboard, not {run.observer!r}")
    env, _, canaries = run.world
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    names = tuple(agent.privatizer.counters)
    log0, log1 = CounterLog(names, batched=True), CounterLog(names, batched=True)
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        log0.released(plan.released)
        policy = np.asarray(plan.policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        trajectories = [play_episode(env, policy, canary, draws) for canary in canaries]
        log0.episode(agent.items(k, *trajectories[0]), None, 0)
        log1.episode(agent.items(k, *trajectories[1]), None, 0)
        agent.update(k, *trajectories[int(coin)])
        run.advance()
    symmetric = {n: n.endswith(",1}") for n in names}
    return one_run_view(
        log0, log1, CounterReading(agent.privatizer.sigmas, run.claim_sigmas, symmetric, run.sensitivities)
    )


#: The audit of both private LinOpt agents: the billboard (white-box) and the actions served (black-box).
AUDIT = AuditSpec(
    observers=("billboard", "actions"),
    white_box=("billboard",),
    world=audit_world,
    observe=observe,
    observe_batch=observe_batch,
    one_run=one_run,
    positions=tree_positions,
    # With the paper's bonus every optimistic value sits at its cap whatever the data, so no plan can move: the
    # plan probe runs at dpkit's tuned bonus (0.05×), where a planner on anything but the billboard is seen
    plan_probe=functools.partial(tabular_plan_probe, options={"bonus_scale": TUNED["bonus_scale"]}),
    # The paper's constants (bonus scale 1): every optimistic Q saturates at its cap, so the canaries' items
    # reach every declared Δ (the black-box ``actions`` observer needs preset="tuned": with saturated Q, VI
    # plays one action forever). K = 4: users 0, 1, 2 are the tree's first, power-of-two and last released
    # positions. ε = 16 keeps μ near 2.9, where a few thousand runs certify most of it.
    defaults={"states": 2, "horizon": 3, "episodes": 4, "epsilon": 16.0},
    canaries=(
        "disjoint states from the first step with raw rewards 2, beyond [0, 1]: only the algorithm's reward "
        "clipping keeps the reward counters at their declared Δ; every value at its cap, so φ_{V_{h+1}} is "
        "the full block and V_{h+1}(s_{h+1}) = H − h: each counter's item attains its declared Δ at every step"
    ),
)
#: The audits this module registers (:mod:`dpkit.audits.rl.registry`), by algorithm name.
AUDITS = dict.fromkeys(ALGORITHMS, AUDIT)
