"""Worlds where plans move: the audit worlds of a *plan probe* (:mod:`dpkit.audits.rl_plans`).

A jointly private agent serves every user a plan; the billboard lemma says that plan is a function of the billboard
and of her own data only. An audit that reads the plans of the users after the changed one (the whole view,
:meth:`dpkit.algorithms.rows.Trace.plan`) sees a plan that depends on anything else — the exact statistics, a
previous user's trajectory — only where that dependence moves the plan. In the billboard audit's worlds it does
not: every value sits at its cap (LinOpt with the paper's bonus) or every cell pays 1 (a user's billboard agent),
and the canaries, who play the plan they are served, only reinforce the action a greedy planner picks anyway (the
first one at a tie).

A plan world puts the exact statistics at a tie that one canary tips: every other user walks the last state S − 1
with the same reward, so the first state is visited by the changed user alone; canary 0 walks state 0 and canary
1 state S − 1, and one of them is paid below the bound (raw reward −1, which the agent's clipping brings to 0). A
planner on the exact statistics then finds, at the first state, an action the canary tried and found worthless
beside one nobody tried: it switches to the other action (pessimistic planners: the tried action's value falls
below the untried one's prior; optimistic ones: the tried action loses its bonus), while under the other canary
the state is untried and the tie keeps the first action — a plan that differs between D and D′ in every run, a
certain distinguisher. A correct agent plans on noisy statistics, whose noise decides the same ties: its plans
are post-processing of its billboard.

The family (:data:`PLAN_WORLDS`) varies which canary is paid below the bound and what the other users are paid; a
probe tries each on pilot runs and audits, on fresh runs, the one whose plans told D and D′ apart best (selection
on held-out runs: the audit stays valid whichever is chosen). The canary paid −1 adds nothing to her reward items,
so the probe's pair reaches less of the declared sensitivity than the billboard positions' (its allowance is its
own: the realised difference capped at the declared Δ).

What such worlds cannot move: plans that do not depend on the statistics at all (a fixed policy), plans whose
planner never leaves a state's first action while every other user takes it (an exact-sums Private-OFU-RL never
plays a control, so its estimate of B stays 0 and its gains 0 whatever the data: its plans carry nothing beyond its
billboard at the audit's sizes), and plans whose dependence on the exact data is drowned in the planner's own
randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["PlanWorld", "PLAN_WORLDS", "PLAN_PROBE_POSITION", "plan_world", "tabular_plan_probe"]


@dataclass(frozen=True)
class PlanWorld:
    """One world of the family: the canaries' raw rewards (canary 0 walks state 0, canary 1 state S − 1) and the
    reward of every other user (who walks state S − 1)."""

    canary_rewards: tuple[float, float]
    others_reward: float
    summary: str


#: The family of plan worlds a probe tries on pilot runs, by name (the ``world`` of an audit setting).
PLAN_WORLDS: Mapping[str, PlanWorld] = MappingProxyType(
    {
        "low-first": PlanWorld((-1.0, 2.0), 1.0, "canary 0 alone in state 0 paid −1, canary 1 beside the others"),
        "low-second": PlanWorld((2.0, -1.0), 1.0, "canary 0 alone in state 0 paid 2, canary 1 beside the others −1"),
        "low-quiet": PlanWorld((-1.0, 2.0), 0.0, "as low-first, the other users paid 0"),
    }
)
#: The position of a plan probe's changed user: the first, whom every later plan follows.
PLAN_PROBE_POSITION = "first"


def plan_world(setting: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """The plan world ``setting.world`` (:data:`PLAN_WORLDS`) at the setting's sizes.

    Args:
        setting: an audit setting with ``world``, ``states``, ``actions``, ``horizon`` and ``episodes``.

    Returns:
        The audit's uniform MDP of S states, A actions and H steps, the K users of D (every one walking state S − 1
        with the world's reward) and the two canaries (walking states 0 and S − 1 with the world's raw rewards,
        beyond [0, 1] where they are −1 or 2).

    Raises:
        ValueError: for an unknown world, or fewer than 2 states (the canaries need states of their own).
    """
    from .envs.tabular import User, Users, uniform_tabular

    name = str(getattr(setting, "world", ""))
    if name not in PLAN_WORLDS:
        raise ValueError(f"world must be one of {', '.join(PLAN_WORLDS)}, got {name!r}")
    s_, h_ = int(setting.states), int(setting.horizon)
    if s_ < 2:
        raise ValueError(f"a plan world needs S >= 2 states (the canaries walk states of their own), got {s_}")
    world = PLAN_WORLDS[name]
    env = uniform_tabular(s_, int(setting.actions), h_)
    last, zeros = s_ - 1, np.zeros(h_)

    def walker(state: int, reward: float, beyond: bool) -> Any:
        path = np.full(h_, state)
        return User.canary(np.full(h_, reward), zeros, beyond_bounds=beyond, initial_state=state, path=path)

    users = Users.stack([walker(last, world.others_reward, False) for _ in range(int(setting.episodes))])
    canaries = (walker(0, world.canary_rewards[0], True), walker(last, world.canary_rewards[1], True))
    return env, users, canaries


def tabular_plan_probe(setting: Any, *, options: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], ...]:
    """The members of a tabular algorithm's plan probe.

    Args:
        setting: the audit's setting.
        options: set on the algorithm in the probe (e.g. a bonus under which its values leave their caps).

    Returns:
        One change of ``setting`` per world of :data:`PLAN_WORLDS` (its ``world``, the first position, the options);
        none on a user's own environment (``setting.env``): the probe's worlds are the audit's.
    """
    if getattr(setting, "env", ""):
        return ()
    merged = {**dict(getattr(setting, "options", ())), **dict(options or {})}
    return tuple(
        {"world": name, "position": PLAN_PROBE_POSITION, "options": tuple(sorted(merged.items()))}
        for name in PLAN_WORLDS
    )
