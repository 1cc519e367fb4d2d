"""Worlds where plans move: the audit worlds of a *plan probe* (:mod:`dpkit.audits.rl.plans`).

A plan world puts the exact statistics at a tie that one canary tips: a planner on the exact statistics then serves
the users after the changed one plans that differ between D and D′, while a correct agent plans on noisy statistics,
whose noise decides the tie. :data:`PLAN_WORLDS` is the family a probe tries, :func:`plan_world` builds one at a
setting's sizes and :func:`tabular_plan_probe` lists a probe's members. Why the billboard audit's worlds cannot show
this, how a plan world is built, and what it cannot move: docs/explanation/environments.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .worlds import AuditedSetting, AuditWorld

__all__ = ["PlanWorld", "PLAN_WORLDS", "PLAN_PROBE_POSITION", "plan_world", "tabular_plan_probe"]


@dataclass(frozen=True)
class PlanWorld:
    """One world of the family.

    Attributes:
        canary_rewards: The canaries' raw rewards (canary 0 walks state 0, canary 1 state S − 1; with
            ``same_states`` both walk state 0).
        others_reward: The reward of every other user (who walks state S − 1).
        summary: The world in a few words.
        same_states: Whether the canaries walk the same states (a relation that changes rewards only: RLSVI's), so
            that one canary's reward, not her cells, tips the argmax at state 0.
    """

    canary_rewards: tuple[float, float]
    others_reward: float
    summary: str
    same_states: bool = False


#: The family of plan worlds a probe tries on pilot runs, by name (the ``world`` of an audit setting).
PLAN_WORLDS: Mapping[str, PlanWorld] = MappingProxyType(
    {
        "low-first": PlanWorld((-1.0, 2.0), 1.0, "canary 0 alone in state 0 paid −1, canary 1 beside the others"),
        "low-second": PlanWorld((2.0, -1.0), 1.0, "canary 0 alone in state 0 paid 2, canary 1 beside the others −1"),
        "low-quiet": PlanWorld((-1.0, 2.0), 0.0, "as low-first, the other users paid 0"),
        "shared-low-first": PlanWorld(
            (-1.0, 2.0), 1.0, "both canaries alone in state 0, canary 0 paid −1 and canary 1 paid 2", same_states=True
        ),
        "shared-low-second": PlanWorld(
            (2.0, -1.0), 1.0, "both canaries alone in state 0, canary 0 paid 2 and canary 1 paid −1", same_states=True
        ),
        "shared-quiet": PlanWorld((-1.0, 2.0), 0.0, "as shared-low-first, the other users paid 0", same_states=True),
    }
)
#: The position of a plan probe's changed user: the first, whom every later plan follows.
PLAN_PROBE_POSITION = "first"


def plan_world(setting: AuditedSetting) -> AuditWorld:
    """The plan world ``setting.world`` (:data:`PLAN_WORLDS`) at the setting's sizes.

    Args:
        setting: an audit setting with ``world``, ``states``, ``actions``, ``horizon`` and ``episodes``.

    Returns:
        The audit's uniform MDP of S states, A actions and H steps, the K users of D (every one walking state S − 1
        with the world's reward) and the two canaries (walking states 0 and S − 1, or both state 0 in a world of
        ``same_states``, with the world's raw rewards, beyond [0, 1] where they are −1 or 2).

    Raises:
        ValueError: for an unknown world, or fewer than 2 states (the canaries need states of their own).
    """
    from dpkit.algorithms.envs.tabular import User, Users, uniform_tabular

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
    second = 0 if world.same_states else last
    canaries = (walker(0, world.canary_rewards[0], True), walker(second, world.canary_rewards[1], True))
    return AuditWorld(env, users, canaries)


def tabular_plan_probe(
    setting: AuditedSetting, *, options: Mapping[str, Any] | None = None, same_states: bool = False
) -> tuple[dict[str, Any], ...]:
    """The members of a tabular algorithm's plan probe.

    Args:
        setting: the audit's setting.
        options: set on the algorithm in the probe (e.g. a bonus under which its values leave their caps).
        same_states: the worlds whose canaries walk the same states (an algorithm whose relation changes rewards
            only, as RLSVI's) rather than the others.

    Returns:
        One change of ``setting`` per world of :data:`PLAN_WORLDS` of that kind (its ``world``, the first position,
        the options); none on a user's own environment (``setting.env``): the probe's worlds are the audit's.
    """
    if getattr(setting, "env", ""):
        return ()
    merged = {**dict(getattr(setting, "options", ())), **dict(options or {})}
    return tuple(
        {"world": name, "position": PLAN_PROBE_POSITION, "options": tuple(sorted(merged.items()))}
        for name, world in PLAN_WORLDS.items()
        if world.same_states == same_states
    )
