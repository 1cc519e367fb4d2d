"""Private-OFU-RL (Chowdhury, Zhou, Shroff: *Adaptive Control of Differentially Private LQ Systems*; seed 003).

OFU-RL and Private-OFU-RL for episodic LQ control: two binary-tree counters (B1 on Σ z zᵀ, B2 on Σ z x′ᵀ,
z = [x; u]) released under joint DP, a confidence ellipsoid around the regularised estimate Θ̂, an optimistic
Θ̃ within it and the Riccati gains of Θ̃, played clipped to γ. The package holds the declaration
(:mod:`.declaration`), the confidence ellipsoid and optimistic choice (:mod:`.ellipsoid`), the agents and
:func:`run_lq` (:mod:`.agent`) and the registration (:mod:`.registration`); everything is importable from here;
its audit is :mod:`dpkit.audits.rl.ofu_rl`. The derivations (the sensitivities, the shift, the radius, the
constants' defaults, the regret of the clipped policy) are on the documentation page *The seed algorithms as
implemented* (docs/explanation/seed-algorithms.md).
"""

from __future__ import annotations

from .agent import (
    LEARNING,
    OFU_AGENTS,
    PRESETS,
    PRIVATE_REGULARIZER,
    REGULARIZER,
    TUNED,
    OfuRl,
    PrivateOfuRl,
    make_agent,
    run_lq,
    run_lq_runs,
)
from .declaration import ALGORITHM, PAPER, UNACCOUNTED_CODE, declare_privacy, paper_sigma
from .ellipsoid import Ellipsoid, OptimisticChoice, confidence_radius, optimistic_theta
from .registration import REGISTRATIONS

__all__ = [
    "ALGORITHM",
    "OFU_AGENTS",
    "PAPER",
    "UNACCOUNTED_CODE",
    "paper_sigma",
    "declare_privacy",
    "confidence_radius",
    "Ellipsoid",
    "OptimisticChoice",
    "optimistic_theta",
    "OfuRl",
    "PrivateOfuRl",
    "make_agent",
    "run_lq",
    "run_lq_runs",
    "REGULARIZER",
    "PRIVATE_REGULARIZER",
    "LEARNING",
    "TUNED",
    "PRESETS",
    "REGISTRATIONS",
]
