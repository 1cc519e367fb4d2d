"""The audit world of the private LinOpt agents (:mod:`dpkit.audits.rl`): the canaries, and the observers of a run
(the billboard of released statistics, one-run views)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..observers import ObservedRun, OneRun, OneRunView

__all__ = [
    "audit_world",
    "observe",
    "one_run",
]


def audit_world(setting: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The audit's canaries: one starts in and walks state 0, the other state S − 1 (disjoint features at every
    step), both with raw rewards 2 — beyond [0, 1], which only LinOpt's own clipping brings back to the bound its
    reward counters' sensitivities assume. With the paper's bonus every optimistic Q sits at its cap H − h + 1, so
    each canary's φ_{V_{h+1}} is the full block (H − h)·1 and her target V_{h+1}(s_{h+1}) = H − h: every counter's
    item differs by its declared Δ at every step."""
    from ..observers import tabular_world

    return tabular_world(setting, (2.0, 2.0))


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """``billboard``: every released noisy prefix of every counter (its p-sums recovered and whitened) and the policy
    served to every later user (the whole view); ``actions``: the actions of all later users (black-box)."""
    from ..episodes import play_episode
    from ..observers import CounterLog, Trace

    s = run.setting
    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    agent_rng, policy_rng = rng.spawn(2)
    agent = run.make_agent(agent_rng, env)
    log = CounterLog(tuple(agent.privatizer.counters), batched=True)
    trace = Trace()
    for k in range(s.episodes):
        plan = agent.plan(k)
        log.released(plan.released)
        policy = np.asarray(plan.policy)
        if run.white_box and k > j:  # the whole view: the plans served after her (tables of actions or probabilities)
            trace.plan(policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        traj = play_episode(env, policy, users[k], draws)
        if run.observer == "actions" and k > j:
            trace.view.append(np.eye(env.actions)[traj[1]].ravel())
        theirs = agent.items(k, *play_episode(env, policy, other, draws)) if k == j else None
        log.episode(agent.items(k, *traj), theirs, run.which)
        agent.update(k, *traj)
    log.finish(
        trace,
        j,
        agent.privatizer.sigmas,
        run.claim_sigmas,
        {n: n.endswith(",1}") for n in log.names},
        run.sensitivities,
    )
    return trace.row(run.white_box)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries (user k canary ``run.coins[k]``), scored from the billboard: every
    released prefix of every counter, and both canaries' items under the plan each user was served
    (:func:`~dpkit.algorithms.observers.billboard_one_run_features`: the scores, and features for a learned score)."""
    from ..episodes import play_episode
    from ..observers import CounterLog, billboard_one_run_features, billboard_reach, counter_nodes

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
    stack = lambda log: {n: np.stack(log.items[n]) for n in names}  # noqa: E731
    prefixes = {n: np.stack(log0.prefixes[n]) for n in names}
    scores, features = billboard_one_run_features(
        prefixes, stack(log0), stack(log1), agent.privatizer.sigmas, {n: n.endswith(",1}") for n in names}
    )
    starts = counter_nodes(prefixes[names[0]])[1]
    reach = billboard_reach(starts, len(starts), run.sensitivities, run.claim_sigmas)
    return OneRunView(scores, "billboard", reach, features)
