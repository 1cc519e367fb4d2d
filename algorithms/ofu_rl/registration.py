"""OFU-RL as the registry sees it (:mod:`dpkit.algorithms.registry`): the baseline and the private agent with its
declaration, ledger parameters and report (its audit: :mod:`dpkit.audits.rl.ofu_rl`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkit.accountant.declarations import (
    PrivacyDeclaration,
)

from ..spec import AlgorithmSpec, ReportSpec
from .agent import make_agent
from .declaration import ALGORITHM, declare_privacy

__all__ = [
    "REGISTRATIONS",
]


def _declare(epsilon: float, delta: float, p: Mapping[str, Any]) -> PrivacyDeclaration:
    return declare_privacy(
        p["episodes"], p["horizon"], epsilon, delta, p["gamma"], schedule=p.get("schedule") or "before-episode"
    )


def _ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    """γ: the control bound of the LQ system the regret runs face (drawn from ``env_seed``); H = 10 unless given."""
    from ..envs.lq import random_lq

    system = random_lq(sizes.state_dim, sizes.control_dim, sizes.horizon or 10, np.random.default_rng(env_seed))
    return {"episodes": sizes.episodes, "horizon": system.horizon, "gamma": float(system.gamma)}


#: The algorithms this module registers (:mod:`dpkit.algorithms.registry`).
REGISTRATIONS = (
    AlgorithmSpec("ofu-rl", make_agent, environment="lq", summary="non-private OFU-RL (seed 003)"),
    AlgorithmSpec(
        name=ALGORITHM,
        entry_point=make_agent,
        environment="lq",
        summary="joint DP; 2 binary-tree counters (seed 003)",
        declaration=_declare,
        required=("episodes", "horizon", "gamma"),
        optional=("schedule",),
        ledger_parameters=_ledger_parameters,
        report=ReportSpec(
            assumptions=(
                "An LQ system under the paper's Assumption 1: ‖A‖ + γ‖B‖ + C_w <= 1, states in the unit ball and "
                "controls of norm at most γ.",
                "States are clipped to the unit ball and controls to γ before they are counted, which is what the "
                "sensitivities assume.",
                "Two binary-tree counters (B1 on z zᵀ with symmetric noise, B2 on z x′ᵀ), released at the start of "
                "each episode over the episodes before it.",
            ),
            sections=("tree",),
        ),
    ),
)
