"""Membership-style privacy audits of release functions (built on :mod:`dpkit.algorithms` and :mod:`dpkit.accountant`).

A release function ``release(dataset, rng, n) -> array (n, …)`` is run on neighbouring datasets, an attack scores
each output (:mod:`dpkit.audits.attacks`), :mod:`dpkit.audits.estimators` turns the error rates of a thresholded
test into Clopper–Pearson lower bounds on ε and μ, and :mod:`dpkit.audits.engine` compares them with a
:class:`~dpkit.audits.claims.Claim`; :mod:`dpkit.audits.sequential` stops as soon as a violation is certain, and
:mod:`dpkit.audits.sensitivity_check` searches for a change larger than a claimed ℓ2 sensitivity.

These functions are the layer beneath :func:`dpkit.audit`, the front door (modes ``fixed``, ``sequential`` and
``one-run``); call them directly for what the door does not offer (e.g. :func:`audit_outputs`,
:func:`audit_searched`). Every result is an :class:`~dpkit.audits.summary.AuditSummary`.
"""

from __future__ import annotations

from dpkit.algorithms.executors import (
    EXECUTORS,
    DaskExecutor,
    Executor,
    InProcessExecutor,
    ProcessPoolExecutor,
    make_executor,
    run_batched,
    run_pair,
    spawn_seeds,
)

from .attacks import (
    ATTACK_NAMES,
    ATTACKS,
    AUTO_ATTACKS,
    AtomAttack,
    Attack,
    BoostingAttack,
    DensityRatioAttack,
    GaussianLikelihoodRatio,
    HistogramLikelihoodRatio,
    LogisticRegressionAttack,
    ScoreFunction,
    make_attack,
)
from .claims import CLAIM_KINDS, Claim
from .engine import VERDICTS, AuditResult, PairsResult, audit_outputs, audit_pair, audit_pairs
from .estimators import (
    AuditEstimate,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    estimate,
    mu_lower_bound,
    select_threshold,
)
from .neighbours import NeighbourSearch, audit_searched, search_neighbours
from .one_run import OneRunResult, audit_one_run_target, judge_one_run
from .sensitivity_check import SensitivityCheck, check_sensitivity
from .sequential import (
    SequentialPlan,
    SequentialResult,
    audit_sequential,
    audit_sequential_batches,
    plan_sequential,
    release_source,
)
from .summary import HEADLINE, AuditSummary

__all__ = [
    "ATTACK_NAMES",
    "ATTACKS",
    "AUTO_ATTACKS",
    "AtomAttack",
    "Attack",
    "BoostingAttack",
    "DensityRatioAttack",
    "GaussianLikelihoodRatio",
    "HistogramLikelihoodRatio",
    "LogisticRegressionAttack",
    "ScoreFunction",
    "make_attack",
    "CLAIM_KINDS",
    "Claim",
    "VERDICTS",
    "AuditResult",
    "AuditSummary",
    "HEADLINE",
    "PairsResult",
    "audit_pair",
    "audit_outputs",
    "audit_pairs",
    "AuditEstimate",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "estimate",
    "mu_lower_bound",
    "select_threshold",
    "EXECUTORS",
    "DaskExecutor",
    "Executor",
    "InProcessExecutor",
    "ProcessPoolExecutor",
    "make_executor",
    "run_batched",
    "run_pair",
    "spawn_seeds",
    "NeighbourSearch",
    "audit_searched",
    "search_neighbours",
    "OneRunResult",
    "audit_one_run_target",
    "judge_one_run",
    "SensitivityCheck",
    "check_sensitivity",
    "SequentialPlan",
    "SequentialResult",
    "audit_sequential",
    "audit_sequential_batches",
    "plan_sequential",
    "release_source",
]


def __getattr__(name: str) -> object:
    if name == "audit":  # renamed audit_pair: the engine's own __getattr__ warns and gives it
        from . import engine

        return engine.audit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
