"""The RLSVI audit (:mod:`dpkit.audits.rl`): its canaries, its positions and its observers — the released
perturbed Q-values (white-box) and the policies served (black-box), many runs at once along a run axis — and the
one-run audit's scores."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.rlsvi import rlsvi_paper_epsilon
from dpkit.algorithms.batches import ShippedClass, batchable
from dpkit.algorithms.rlsvi import ALGORITHM, RELEASE, Rlsvi, declare_privacy, max_last
from dpkit.algorithms.spec import AuditSpec

from .observers import ObservedRun, OneRun, OneRunView
from .plan_worlds import tabular_plan_probe
from .worlds import AuditedSetting, AuditWorld

__all__ = [
    "AUDIT",
    "AUDITS",
    "BATCH_BYTES",
    "audit_world",
    "audit_positions",
    "closed_form",
    "observe",
    "observe_batch",
    "one_run",
]


# -- audit: canaries and observers (dpkit.audits.rl) ------------------------------------------------


def audit_world(setting: AuditedSetting) -> AuditWorld:
    """The audit's world: the MDP, the users and the two canaries, which differ in their rewards only.

    The relation changes rewards only, so both canaries start in and walk state 0, with raw rewards −1 against 2 —
    beyond [0, 1], so only the algorithm's own clipping keeps the difference at the declared ΔR̂ <= 1/n; every
    other user starts in and walks state S − 1, so none shares a cell with the changed one: her cells keep n = 1,
    the declaration's worst case, in every later release.

    Args:
        setting: The audit's setting (sizes and seeds).

    Returns:
        The environment, the users and the two canaries.

    Raises:
        ValueError: For a plan world whose canaries walk different states (RLSVI's neighbours share theirs).
    """
    from .observers import tabular_world
    from .plan_worlds import PLAN_WORLDS

    world = getattr(setting, "world", "")
    if world and not PLAN_WORLDS[world].same_states:
        shared = ", ".join(name for name, w in PLAN_WORLDS.items() if w.same_states)
        raise ValueError(
            f"{ALGORITHM}'s relation changes rewards only: its plan worlds are those whose canaries walk the same "
            f"states ({shared}), got {world!r}"
        )
    return tabular_world(setting, (-1.0, 2.0), same_states=True)


def audit_positions(setting: AuditedSetting, index: int | None = None) -> dict[str, tuple[int, float]] | float:
    """The first, middle and last user a release holds, with their shares of the declared μ².

    The last user a release holds is user K − 2 (the last user's rewards are never released). The share of user k
    is the declared μ² of the releases after her over that of all K − 1 later releases — each release holds her H
    cells at n = 1 with noise β_k/2, so plan k weighs 1/β_k (:func:`_claim_betas`).

    Args:
        setting: The audit's setting.
        index: A user's index, to get her share alone.

    Returns:
        {position name: (user index, share)}, or the share of user ``index`` when it is given.
    """
    from .observers import later_release_positions

    named = later_release_positions(setting)
    weights = 1.0 / _claim_betas(setting, 1.0)[1:]  # plans 1 … K − 1 (0-based): the ones after some user
    tail = np.concatenate([np.cumsum(weights[::-1])[::-1], [0.0]])
    shares = tail / tail[0]
    if index is not None:
        later_release_positions(setting, index)  # validates the index
        return float(shares[index])
    assert isinstance(named, dict)
    return {name: (i, float(shares[i])) for name, (i, _) in named.items()}


def observe(run: ObservedRun, rng: np.random.Generator) -> np.ndarray:
    """The row of one run as the run's observer sees it: ``q-values`` (white-box) or ``policies`` (black-box).

    ``q-values``: every released perturbed Q-value of every plan, whitened by the exploration noise a correct
    RLSVI at the claim's σ gives it (β_k/(n + 1), β_k from the declaration); the changed user's cells in the plans
    after her carry the signal, every other value none of its own (noise reused across plans, cells or steps makes
    them depend on hers: the learned attack reads them), and the policies served after her (the whole view), with
    whether each entry is the argmax of the released Q-values and whether each plan serves her action at her
    states (her states and actions are public under the relation, so for a correct RLSVI, whose plans are its
    released argmax, both are post-processing of the billboard; a planner on her exact reward shows there);
    ``policies``: the greedy policies (black-box; the pair's μ from the released Q-values all the same). It is
    :func:`observe_batch` of one run.

    Args:
        run: The audited setting, dataset and world.
        rng: The run's Generator.

    Returns:
        The run's row.
    """
    row: np.ndarray = observe_batch(run, [rng])[0]
    return row


def observe_batch(run: ObservedRun, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """:func:`observe` of many runs: one row per Generator of ``rngs``, row i what ``observe(run, rngs[i])`` gives.

    dpkit's own RLSVI (the setting names no implementation, and :class:`Rlsvi`'s methods are the shipped ones) plays
    the runs at once: one agent of a Generator per run, its arrays and the auditor's along a leading run axis, in
    batches of at most :data:`BATCH_BYTES` of per-plan arrays. An implementation under test (a user's class, a
    mutant) is built and played run by run, by the same observer code, unless marked
    :func:`~dpkit.algorithms.batches.plays_runs`.

    Args:
        run: the audited setting, dataset and world (:class:`~dpkit.audits.rl.observers.ObservedRun`).
        rngs: one Generator per run.

    Returns:
        The runs' rows (len(rngs), width), row i that of the run of ``rngs[i]``.
    """
    env = run.world[0]
    make: Callable[..., Any] = run.make_agent  # a Generator, or (dpkit's own agent) a sequence of them
    gens = list(rngs)
    if not _batched(run):
        return np.concatenate([_observe(run, make(g, env)) for g in gens], axis=0)
    # every plan's counts and variances (the agent's) and whitened Q-values and signals (the observer's), per run
    cells = env.horizon * env.states * env.actions
    size = max(1, BATCH_BYTES // (8 * cells * (8 * int(run.setting.episodes) + 3 * env.states)))
    return np.concatenate([_observe(run, make(gens[i : i + size], env)) for i in range(0, len(gens), size)], axis=0)


#: The most bytes of per-plan arrays one batch of :func:`observe_batch` holds: long runs (K users) go in smaller
#: batches.
BATCH_BYTES = 1 << 27


#: :class:`Rlsvi` as shipped: a class patched in place (a test's monkeypatch) is an implementation under test, played
#: run by run.
_SHIPPED = ShippedClass(Rlsvi)


def _batched(run: ObservedRun) -> bool:
    """Whether the run's agent is dpkit's own RLSVI, as shipped: then its runs can go in one batch."""
    return batchable(run.setting.implementation, (_SHIPPED,))


def _observe(run: ObservedRun, agent: Any) -> np.ndarray:
    """The rows of :func:`observe` of the runs of ``agent``: a batch (``agent.runs`` = R) or one run (an agent
    without a run axis, treated as the batch of one)."""
    from dpkit.algorithms.episodes import play_episodes

    from .rows import PLAN_DECIMALS, SIGNAL_CAP

    s = run.setting
    env, users, canaries = run.world
    j = run.index
    users = users.replace(j, canaries[run.which])
    rewards0, rewards1 = canaries[0].rewards, canaries[1].rewards
    declared = run.sensitivities[RELEASE]
    claim_betas = _claim_betas(s, float(run.claim_sigmas[RELEASE]))
    one = getattr(agent, "runs", None) is None
    r_ = 1 if one else int(agent.runs)
    h_, s_, a_ = env.horizon, env.states, env.actions
    n = np.zeros((r_, h_, s_, a_))
    reward_sum = np.zeros((r_, h_, s_, a_))  # under D
    next_counts = np.zeros((r_, h_, s_, a_, s_))
    every, steps = np.arange(r_)[:, None], np.arange(h_)
    cells: tuple[np.ndarray, np.ndarray] | None = None
    # the canaries' clipped rewards: the model of a correct implementation (their raw rewards lie beyond [0, 1])
    change = np.clip(rewards1, 0.0, 1.0) - np.clip(rewards0, 0.0, 1.0)
    allowed = np.minimum(np.abs(rewards1 - rewards0), declared)
    # each part (R, m): residuals with their signals (None: coordinates with no signal of their own, signal 0);
    # the signals, allowed signals and signals at the σ used of the signal parts; the view; the plans after her
    part_r: list[tuple[np.ndarray, np.ndarray | None]] = []
    part_a: list[np.ndarray] = []
    part_claim: list[np.ndarray] = []
    part_used: list[np.ndarray] = []
    view: list[np.ndarray] = []
    plans: list[np.ndarray] = []

    for k in range(s.episodes):
        plan = agent.plan(k)
        q = np.asarray(plan.released["Q-values"], dtype=float)
        policy = np.asarray(plan.policy)
        if one:
            q, policy = q[None], policy[None]
        if run.observer == "policies" and k > j:
            view.append(np.eye(a_)[policy].reshape(r_, -1))
        elif k > j and cells is not None:  # the whole view: the plans served after her, read beside what is public
            served = policy.reshape(r_, -1)
            plans.append(np.round(served.astype(float), PLAN_DECIMALS) + 0.0)
            plans.append((served != np.argmax(q, axis=-1).reshape(r_, -1)).astype(float))  # off the released argmax
            plans.append((policy[(every, steps, cells[0])] == cells[1]).astype(float))  # her action at her states
        # the released Q-values: the rows' signals (white-box) and the pair's μ (both observers)
        v_next = np.concatenate([max_last(q)[:, 1:], np.zeros((r_, 1, s_))], axis=1)  # V_{h+1} from the released Q
        visits = np.maximum(n, 1.0)
        expected_next = np.matmul(next_counts.reshape(r_, h_, s_ * a_, s_), v_next[..., None])
        mean0 = (reward_sum + expected_next.reshape(r_, h_, s_, a_)) / visits
        sd_claim = np.sqrt(claim_betas[k] / (n + 1.0))
        r = np.clip((q - mean0) / sd_claim, -SIGNAL_CAP, SIGNAL_CAP)
        if cells is not None:  # her cells in a plan after her: ΔR̂ = Δr/n
            mine = np.zeros((r_, h_, s_, a_), dtype=bool)
            mine[(every, steps, *cells)] = True
            here = n[(every, steps, *cells)]
            sd_here = sd_claim[(every, steps, *cells)]
            sd_used = np.sqrt(agent.betas[k] / (here + 1.0))
            part_a.append(change / here / sd_here)
            part_r.append((r[(every, steps, *cells)], part_a[-1]))
            part_claim.append(allowed / here / sd_here)
            part_used.append(
                np.where(sd_used > 0, np.abs(change) / here / np.where(sd_used > 0, sd_used, 1.0), SIGNAL_CAP)
            )
            part_r.append((r[~mine].reshape(r_, -1), None))  # run by run, every other cell in (h, s, a) order
        else:
            part_r.append((r.reshape(r_, -1), None))
        st, ac, rw = play_episodes(env, policy, users[k], None)
        visited = (every, steps, st[:, :-1], ac)
        if k == j:
            cells = (st[:, :-1], ac)
        n[visited] += 1.0
        reward_sum[visited] += np.clip(rewards0 if k == j else rw, 0.0, 1.0)
        next_counts[(*visited, st[:, 1:])] += 1.0
        if one:
            agent.update(k, st[0], ac[0], rw[0])
        else:
            agent.update(k, st, ac, rw)
    none = np.zeros((r_, 0))
    silent = ~np.any(np.concatenate([none, *part_a], axis=1) != 0, axis=1)
    if silent.any():  # the last user: nothing released after her
        if not silent.all():  # pragma: no cover - the signals' support is the canaries', the same in every run
            raise RuntimeError("runs of one setting disagree on whether anything was released after the changed user")
        part_r.append((np.zeros((r_, 1)), None))
    used = np.concatenate([none, *part_used], axis=1)
    claim = np.concatenate([none, *part_claim], axis=1)
    mu_used = np.sqrt(np.einsum("ri,ri->r", used, used))
    mu_claim = np.sqrt(np.einsum("ri,ri->r", claim, claim))
    if run.white_box:  # the residuals, then their signals (0 where a part has none)
        body = np.zeros((r_, 2 * sum(x.shape[1] for x, _ in part_r)))
        at = 0
        for x, _ in part_r:
            body[:, at : at + x.shape[1]] = x
            at += x.shape[1]
        for x, a in part_r:
            if a is not None:
                body[:, at : at + x.shape[1]] = a
            at += x.shape[1]
    else:
        body = np.concatenate(view, axis=1) if view else np.zeros((r_, 1))
    shown = np.concatenate(plans, axis=1) if plans else np.zeros((r_, 0))
    columns = np.full((r_, 1), float(shown.shape[1]))
    return np.concatenate([body, shown, columns, mu_used[:, None], mu_claim[:, None]], axis=1)


def _claim_betas(setting: AuditedSetting, claim_sigma: float) -> np.ndarray:
    """β_k (k = 1 … K) at the claim's σ: the noise a correct RLSVI at the claim adds — Russo's β_k, or the
    ``beta`` option, rescaled by (σ_claim/σ_paper)² as :class:`Rlsvi` rescales it — from the declaration alone."""
    options = dict(setting.options)
    s_, a_, h_, k_ = setting.states, setting.actions, setting.horizon, setting.episodes
    beta = options.get("beta")
    declaration = declare_privacy(s_, a_, h_, k_, setting.epsilon, setting.delta, beta=beta)
    scale = (claim_sigma / declaration.releases[0].sigma_paper) ** 2
    if beta is None:
        return 0.5 * s_ * h_**3 * np.log(2.0 * h_ * s_ * a_ * np.arange(1, k_ + 1, dtype=float)) * scale
    return np.full(k_, float(beta) * scale)


def one_run(run: OneRun, rng: np.random.Generator) -> OneRunView:
    """One run whose users are all canaries (user k canary ``run.coins[k]``), scored from the released Q-values.

    States and actions are public under RLSVI's relation, so the auditor knows every cell's visits n and P̂, and
    reads from each plan the residual r = Q − P̂ᵀV_{h+1} (V from the same released Q) = R̂ + w at every cell. At
    user k's cells, n_{k+1}·r_{k+1} − n_k·r_k is her own (clipped) reward plus the two plans' noise — the other
    users' rewards cancel, so each user is seen alone. Her score sums these over her H cells, each centred between
    the two canaries' clipped rewards and weighted by their difference over the variance a correct RLSVI at the
    claim gives it: β_{k+1}(n + 1)²/(n + 2) + β_k n²/(n + 1), n her cell's visits before her (β_k from the
    declaration at the claim's σ, :func:`_claim_betas`). Reach: the median over users of that score's μ with the
    difference at the declared Δ — at most √(2H/β) for the first visitor of her cells, where the declaration
    allows every later release its worst case n = 1: about the claim's μ/√K, so a one-run audit of RLSVI says
    ``inconclusive`` (its many-run audit at K = 2 is the one that reaches the worst case). The last user's
    rewards are never released: she scores 0.

    Args:
        run: The one-run audit's run (setting, world, canaries and the users' coins).
        rng: The run's Generator.

    Returns:
        The users' scores, the observer's name and the reach.

    Raises:
        ValueError: If the observer is not ``q-values``.
    """
    from dpkit.algorithms.episodes import play_episode

    if run.observer != "q-values":
        raise ValueError(f"one-run audits of {ALGORITHM} read the released Q-values, not {run.observer!r}")
    env, _, canaries = run.world
    agent = run.make_agent(rng, env)
    h_, s_, a_ = env.horizon, env.states, env.actions
    users = len(run.coins)
    betas = _claim_betas(run.setting, float(run.claim_sigmas[RELEASE]))
    delta_r = float(run.sensitivities[RELEASE])
    clipped = [np.clip(np.asarray(c.rewards, dtype=float), 0.0, 1.0) for c in canaries]
    diff, centre = clipped[1] - clipped[0], 0.5 * (clipped[0] + clipped[1])
    steps = np.arange(h_)
    n = np.zeros((h_, s_, a_))
    next_counts = np.zeros((h_, s_, a_, s_))
    scores = np.zeros(users)
    reach = np.zeros(users)
    previous: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # her cells, n before, n·r
    for k, coin in enumerate(run.coins):
        plan = agent.plan(k)
        q = np.asarray(plan.released[RELEASE], dtype=float)
        v_next = np.concatenate([q.max(axis=2)[1:], np.zeros((1, s_))])
        p_hat = next_counts / np.maximum(n, 1.0)[..., None]
        residual = q - np.einsum("hsat,ht->hsa", p_hat, v_next)  # R̂ + w at every cell
        if previous is not None:
            cs, ca, before, weighted = previous
            d = (before + 1.0) * residual[steps, cs, ca] - weighted  # her clipped reward + noise
            var = betas[k] * (before + 1.0) ** 2 / (before + 2.0) + betas[k - 1] * before**2 / (before + 1.0)
            scores[k - 1] = float(np.sum(diff * (d - centre) / var))
            reach[k - 1] = delta_r * math.sqrt(float(np.sum(1.0 / var)))
        states, actions, rewards = play_episode(env, np.asarray(plan.policy), canaries[int(coin)], None)
        cs, ca = states[:-1], actions
        before = n[steps, cs, ca].copy()
        previous = (cs, ca, before, before * residual[steps, cs, ca])
        n[steps, cs, ca] += 1.0
        next_counts[steps, cs, ca, states[1:]] += 1.0
        agent.update(k, states, actions, rewards)
        run.advance()
    return OneRunView(scores, "q-values", float(np.median(reach)))


def closed_form(setting: AuditedSetting) -> float:
    """The paper's closed-form ε(δ) at the audit's sizes (its registration's ``default_epsilon``).

    Args:
        setting: The audit's setting (sizes and δ).

    Returns:
        The paper's ε.
    """
    return rlsvi_paper_epsilon(
        states=setting.states,
        actions=setting.actions,
        horizon=setting.horizon,
        episodes=setting.episodes,
        delta=setting.delta,
    )


#: RLSVI's audit: the released Q-values (white-box) and the policies served (black-box).
AUDIT = AuditSpec(
    observers=("q-values", "policies"),
    white_box=("q-values",),
    world=audit_world,
    observe=observe,
    observe_batch=observe_batch,
    positions=audit_positions,
    # no other user shares her cells: they have n = 1 in every later release, so every run's μ is the worst
    # case; K = 4 gives three positions (users 0, 1, 2) and three releases after the first
    defaults={"states": 2, "horizon": 3, "episodes": 4, "options": (("beta", 0.05),)},
    closed_form=closed_form,
    one_run=one_run,
    # its plans are its released Q-values' argmax: an implementation that serves anything else is seen in the
    # worlds where the canaries share state 0 alone, one paid 2 and one −1 (clipped to 1 and 0), the observer
    # reading each plan beside the released argmax and her public action
    plan_probe=functools.partial(tabular_plan_probe, same_states=True),
    canaries=(
        "same states, raw rewards −1 against 2 — beyond [0, 1] on both sides: only RLSVI's own reward "
        "clipping keeps her per-cell ΔR̂ at the declared 1/n; every other user walks other states, so her "
        "cells keep n = 1 (the worst case) in every later release"
    ),
)
#: The audits this module registers (:mod:`dpkit.audits.rl.registry`), by algorithm name.
AUDITS = {ALGORITHM: AUDIT}
