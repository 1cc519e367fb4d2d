"""The LinOpt algorithms as the registry sees them (:mod:`dpkit.algorithms.registry`): the baselines and the private
agents with their declaration, ledger parameters and report (their audit: :mod:`dpkit.audits.rl.linopt`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dpkit.accountant.declarations import PrivacyDeclaration

from ..spec import AlgorithmSpec, ReportSpec
from .agent import make_agent
from .declaration import declare_privacy

__all__ = [
    "REGISTRATIONS",
]


def _declare(name: str, epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(
        name,
        p["episodes"],
        p["horizon"],
        epsilon,
        delta,
        p["dim"],
        reading=p.get("reading") or "theorem-6.5",
        schedule=p.get("schedule") or "before-episode",
        states=p.get("states"),
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """d = S²A, the dimension of the one-hot linear-mixture features of S states; H = 2S unless given."""
    horizon = sizes.horizon if sizes.horizon is not None else 2 * sizes.states
    return {
        "episodes": sizes.episodes,
        "horizon": horizon,
        "dim": sizes.states**2 * sizes.actions,
        "states": sizes.states,
    }


def _assumptions(policy_update: str) -> tuple[str, ...]:
    return (
        "A tabular MDP in its linear-mixture view: transition features of dimension d1 = S²A, reward features "
        "of dimension d2 = SA.",
        "Values lie in [0, H] and rewards in [0, 1]; features, values and rewards are clipped to these bounds "
        "before they are counted.",
        "Four binary-tree counters per step, released at the start of each episode over the episodes before it "
        "(the before-episode schedule)." + policy_update,
    )


def _spec(name: str, policy_update: str) -> AlgorithmSpec:
    return AlgorithmSpec(
        name=name,
        entry_point=make_agent,
        summary="joint DP; 4H binary-tree counters (seed 004)",
        declaration=functools.partial(_declare, name),  # a partial, not a closure: specs travel to workers
        required=("episodes", "horizon", "dim"),
        optional=("reading", "schedule", "states"),
        ledger_parameters=_ledger_parameters,
        report=ReportSpec(assumptions=_assumptions(policy_update), sections=("tree",)),
    )


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`): the baselines and the private ones.
REGISTRATIONS = (
    AlgorithmSpec("linopt-vi", make_agent, summary="non-private LinOpt-VI (seed 004)"),
    AlgorithmSpec("linopt-po", make_agent, summary="non-private LinOpt-PO (seed 004)"),
    _spec("private-linopt-vi", ""),
    _spec("private-linopt-po", " The policy update (mirror descent) uses only released statistics."),
)
