"""OFU-RL as the registry sees it (:mod:`dpkit.algorithms.registry`): the baseline and the private agent with its
declaration, ledger parameters, audit and report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkit.accountant.declarations import (
    PrivacyDeclaration,
)

from ..spec import AlgorithmSpec, AuditSpec, ReportSpec
from .agent import make_agent
from .audit import audit_world, observe, observe_batch, one_run
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
        audit=AuditSpec(
            observers=("billboard", "actions"),
            white_box=("billboard",),
            world=audit_world,
            observe=observe,
            observe_batch=observe_batch,
            one_run=one_run,
            positions="dpkit.algorithms.observers:tree_positions",
            defaults={
                "horizon": 4,
                "episodes": 4,
                "epsilon": 16.0,
                # the tuned preset (λ = 1 under the shift 2Λ): the controls, hence the items, depend on λ
                "options": (("candidates", 8), ("preset", "tuned"), ("refine_rounds", 0)),
            },
            canaries=(
                "states on the unit sphere from the first step (each user's x_1 is her own), pushed by noise at twice "
                "the bound C_w — beyond the unit ball, which only the algorithm's clipping of x keeps at the declared "
                "Δ; the pair that reaches the joint bound of B1 and B2 at the claim's σ: orthogonal trajectories (e1 "
                "against e2) or one trajectory against itself with alternating signs (controls are clipped to γ by "
                "the system itself)"
            ),
        ),
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
