"""The LDP-UCRL-VTR audit (:mod:`dpkit.audits.rl`): its canaries and its messages observer — every user's noisy
messages up to the changed one, whitened at the claim's σ — many runs at once along the agent's run axis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .batches import ShippedClass, batch_parts, batchable
from .episodes import play_episodes, step_column
from .ldp_ucrl_vtr import AUTO_FEATURES_DIM, LdpUcrlVtr
from .observers import (
    MAX_COORDINATES,
    ObservedRun,
    claim_whitening,
    cross_projections_runs,
    flat,
    observe_messages,
    over_sigma,
    project,
)
from .reused_noise import CounterNodes, changed_user_votes
from .rows import Traces
from .ucrl_vtr import Features

__all__ = ["audit_world", "batched", "observe", "observe_batch"]


def audit_world(setting: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The audit's world: the uniform MDP, the users and the two canaries.

    One canary starts in and walks state 0, the other state S − 1 (disjoint features φ_V at every step), in the
    uniform MDP whose rewards keep every optimistic value at its cap, so φ_V and V reach their per-step bounds (her
    messages carry values, not rewards: rewards 1).

    Args:
        setting: The audit's setting (sizes and seeds).

    Returns:
        The environment, the users and the two canaries.
    """
    from .observers import tabular_world

    return tabular_world(setting, (1.0, 1.0))


def batched(run: ObservedRun) -> bool:
    """Whether the audit's runs of ``run`` go through the agent's run axis.

    They do for dpkit's own LDP-UCRL-VTR (no implementation under test but one marked
    :func:`~dpkit.algorithms.batches.plays_runs` — a mutant or a user's class overrides the scalar methods and runs
    one by one) under the messages observer.

    Args:
        run: the audit's run.

    Returns:
        True where :func:`observe_batch` simulates the runs along the agent's run axis.
    """
    return run.observer == "messages" and batchable(run.setting, (_SHIPPED,))


#: The agent's class as shipped: one patched in place (a test's monkeypatch) is an implementation under test, played
#: run by run.
_SHIPPED = ShippedClass(LdpUcrlVtr)


def _bytes_per_run(run: ObservedRun) -> float:
    """A generous estimate of one run's arrays in a batch: the agent's Gram matrices (H, d, d), d the features' (S²A
    one-hot, S·A·B on the transitions' support), and every user's messages up to the changed one (their upper
    triangles, residuals and magnitudes kept for the reading of reused noise)."""
    env = run.world[0]
    kind = dict(getattr(run.setting, "options", ())).get("features", "auto")
    if kind == "auto":  # the agent's own rule
        kind = "one-hot" if env.states**2 * env.actions <= AUTO_FEATURES_DIM else "support"
    d = Features(env, kind).dim
    return 8.0 * env.horizon * (7.0 * d * d + 3.0 * d * (d + 1) / 2 * (run.index + 1))


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The messages observer (:func:`~dpkit.algorithms.observers.observe_messages`) of one run.

    It is the batch of one of :func:`observe_batch` where the batch applies, else ``observe_messages`` itself.

    Args:
        run: the audit's run (setting, dataset, world, claim).
        rng: the run's Generator.

    Returns:
        The run's row.
    """
    if batched(run):
        return observe_batch(run, [rng])[0]
    return observe_messages(run, rng)


def observe_batch(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`~dpkit.algorithms.observers.observe_messages` of R runs at once, run i from ``rngs[i]``.

    One row per run, row i what ``observe_messages(run, rngs[i])`` returns (up to the rounding of batched linear
    algebra).

    The agent is one :class:`LdpUcrlVtr` of R runs (run i's noise from its own Generator, drawn as the run alone
    draws it), the episodes are played in R runs at once and the observer's projections are vectorised over the
    runs; the reading of reused noise (:func:`~dpkit.algorithms.reused_noise.changed_user_vote`) is made run by run.
    An implementation under test (``run.setting.implementation``) runs one by one through ``observe_messages``,
    unless marked :func:`~dpkit.algorithms.batches.plays_runs`.

    Args:
        run: the audit's run (setting, dataset, world, claim).
        rngs: one Generator per run.

    Returns:
        The rows, (R, width).
    """
    if not batched(run):
        return np.stack([observe_messages(run, g) for g in rngs])
    return np.concatenate([_observe_runs(run, part) for part in batch_parts(rngs, _bytes_per_run(run))])


def _observe_runs(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """The rows of the runs of ``rngs``, simulated as one batch (:func:`observe_batch`)."""
    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    other = canaries[1 - run.which]
    # observe_messages's (agent_rng, policy_rng) = rng.spawn(2): each run's first child now, its second (the same
    # stream: a Generator's children are numbered) only if a plan is stochastic
    children: Any = [g.spawn(1)[0] for g in rngs]  # one Generator per run: the factory's rng of a batch
    agent = run.make_agent(children, env)
    policy_rngs: list[np.random.Generator] = []
    runs = len(rngs)
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
            sym, count = release.noise == "symmetric", release.count
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
    # every release's messages of users 0 … j, (R, j + 1, count, m), read run by run
    stacked = {
        n: (np.stack([x for x, _ in nodes[n]], axis=1), np.stack([m for _, m in nodes[n]], axis=1)) for n in nodes
    }
    trace.read(changed_user_votes(_runs_nodes(stacked, delta, agent.sigmas)))
    return trace.rows(True)


def _runs_nodes(
    stacked: Mapping[str, tuple[np.ndarray, np.ndarray]], delta: Mapping[str, np.ndarray], sigmas: Any
) -> list[CounterNodes]:
    """Every run's releases as :func:`~dpkit.algorithms.observers.observe_messages` hands them to
    :func:`~dpkit.algorithms.reused_noise.changed_user_vote` (one node per user), with a leading run axis (as
    :func:`~dpkit.algorithms.reused_noise.changed_user_votes` takes them), from every run's residuals and magnitudes
    ``stacked`` (R, users, count, m) and the changed user's ``delta`` (R, count, m)."""
    out = []
    for name, (residual, magnitude) in stacked.items():
        mine = np.zeros(residual.shape)
        mine[:, -1] = delta[name]
        used = np.asarray(sigmas[name], dtype=float).reshape(-1, 1)
        out.append(CounterNodes(residual, np.arange(residual.shape[1]), magnitude, np.zeros(mine.shape), mine, used))
    return out
