"""Private-LinOpt-VI and Private-LinOpt-PO (Zhou: *Differentially Private RL with Linear Function Approximation*;
seed 004).

LinOpt-VI and LinOpt-PO (optimistic value iteration and policy optimisation with value-targeted regression on a
tabular MDP's linear-mixture features) and their private versions, whose PRIVATIZER releases four binary-tree
counters per step under joint DP. The package holds the declaration (:mod:`.declaration`), the confidence radii and
noise bounds (:mod:`.radii`), the agents (:mod:`.agent`) and the registration (:mod:`.registration`); everything
is importable from here; their audit is :mod:`dpkit.audits.rl.linopt`. The derivations, the reading of the
paper's sensitivities and the constants' defaults are on the documentation page *The seed algorithms as
implemented* (docs/explanation/seed-algorithms.md).
"""

from __future__ import annotations

from .agent import (
    DEFAULT_BONUS_SCALE,
    LEARNING,
    LINOPT_AGENTS,
    PRESETS,
    PRIVATE_REGULARIZATION,
    RELEASES,
    TUNED,
    VARIANTS,
    LinOpt,
    PrivateLinOpt,
    Privatizer,
    make_agent,
)
from .declaration import ALGORITHMS, LINOPT_READINGS, declare_privacy, paper_sigma
from .radii import DEFAULT_ALPHA, DEFAULT_REGULARIZATION, confidence_radii, noise_shift, paper_eta, target_noise_bound
from .registration import REGISTRATIONS

__all__ = [
    "ALGORITHMS",
    "LINOPT_READINGS",
    "RELEASES",
    "VARIANTS",
    "LINOPT_AGENTS",
    "DEFAULT_BONUS_SCALE",
    "DEFAULT_REGULARIZATION",
    "PRIVATE_REGULARIZATION",
    "DEFAULT_ALPHA",
    "LEARNING",
    "TUNED",
    "PRESETS",
    "paper_sigma",
    "declare_privacy",
    "paper_eta",
    "noise_shift",
    "target_noise_bound",
    "confidence_radii",
    "Privatizer",
    "LinOpt",
    "PrivateLinOpt",
    "make_agent",
    "REGISTRATIONS",
]
